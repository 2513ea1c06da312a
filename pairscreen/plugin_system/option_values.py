"""A plugin option's value checked against its declaration, read from an environment variable,
and shown with its secrets hidden.

One module for the three so that a table in ``[plugins.NAME]``, its environment override and
its line in ``pairscreen plugins`` agree on what an option's type is. Every problem is a
:class:`PluginError` in one line naming the table, the key and what it must be.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pairscreen.contracts.options import OptionValue, PluginOption
from pairscreen.plugin_system.failures import PluginError

HIDDEN = "(secret, set)"  # what a set secret is shown as; an unset one is shown empty
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_SCALARS: Mapping[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def declaration_problem(option: object) -> str | None:
    """What is wrong with a declared option, or None: a plugin is told at load time, not
    when a user first sets the option."""
    if not isinstance(option, PluginOption) or not isinstance(option.name, str) or not option.name:
        return "an option is a PluginOption with a name"
    default = option.default
    if isinstance(default, Mapping):
        if not all(isinstance(k, str) for k in default):
            return f"option {option.name!r}: a table's keys are strings"
    elif isinstance(default, (list, tuple)):
        item = Mapping if option.fields is not None else str
        if not all(isinstance(v, item) for v in default):
            return f"option {option.name!r}: a list default holds only strings, or only tables"
    elif type(default) not in _SCALARS:
        return (
            f"option {option.name!r}: the default is a boolean, integer, number, string, list "
            "or table"
        )
    if option.fields is not None:
        if not isinstance(default, (Mapping, list, tuple)):
            return f"option {option.name!r}: only a table or a list of tables has fields"
        for inner in option.fields:
            problem = declaration_problem(inner)
            if problem is not None:
                return f"option {option.name!r}: {problem}"
    if option.env is not None:
        if not isinstance(option.env, str) or not ENV_NAME.match(option.env):
            return f"option {option.name!r}: env is an environment variable name, e.g. MY_OPTION"
        if option.type_name in ("table", "list of tables"):
            return f"option {option.name!r}: a table cannot be set by an environment variable"
    return None


def checked(where: str, option: PluginOption, value: object) -> OptionValue:
    """``value`` if it has the option's type (a whole number does for a number; a table is
    checked against the option's ``fields``); ``where`` names the table, ``[plugins.NAME]``."""
    return _value(f"{where} {option.name}", option, value)


def _value(label: str, option: PluginOption, value: object) -> OptionValue:
    default = option.default
    if isinstance(default, Mapping):
        if not isinstance(value, Mapping):
            raise _wrong(label, "a table", value, option.secret)
        return _table(label, option.fields, value)
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            raise _wrong(label, _a(option.type_name), value, option.secret)
        if option.fields is None:
            if not all(isinstance(v, str) for v in value):
                raise _wrong(label, "a list of strings", value, option.secret)
            return tuple(value)
        items = []
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise _wrong(f"{label}[{i}]", "a table", item)
            items.append(_table(f"{label}[{i}]", option.fields, item))
        return tuple(items)
    wanted = type(default)
    if wanted is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not wanted:
        raise _wrong(label, _a(option.type_name), value, option.secret)
    return value  # type: ignore[return-value,unused-ignore]  # its type was checked above


def _table(
    label: str, fields: tuple[PluginOption, ...] | None, table: Mapping[str, Any]
) -> dict[str, Any]:
    """A table option's value: as written when it declares no fields, else each declared
    key checked, defaults filled in, and an undeclared key refused."""
    if fields is None:
        return dict(table)
    declared = {f.name: f for f in fields}
    extra = sorted(set(table) - set(declared))
    if extra:
        raise PluginError(
            f"{label}: {extra[0]!r} is not one of its keys ({', '.join(declared) or 'none'})"
        )
    return {
        key: _value(f"{label}.{key}", f, table.get(key, f.default)) for key, f in declared.items()
    }


def from_text(variable: str, option: PluginOption, text: str) -> OptionValue:
    """An environment variable's text as the option's value (a list of strings is
    comma-separated, a boolean one of 1/0, true/false, yes/no, on/off)."""
    kind = option.type_name
    try:
        if kind == "boolean":
            if text.lower() not in _TRUE + _FALSE:
                raise ValueError(text)
            return text.lower() in _TRUE
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
        if kind == "list of strings":
            return tuple(filter(None, (part.strip() for part in text.split(","))))
    except ValueError:
        what = "one of " + ", ".join(_TRUE + _FALSE) if kind == "boolean" else _a(kind)
        shown = "(hidden)" if option.secret else repr(text)
        raise PluginError(f"{variable} must be {what}, got {shown}") from None
    return text


def shown(option: PluginOption, value: object) -> object:
    """``value`` as a listing shows it: a secret that is set as :data:`HIDDEN` (a table's or
    list's every value hidden), a secret's fields inside a table likewise."""
    if option.secret:
        return _hidden(value)
    if option.fields is not None and isinstance(value, Mapping):
        return _shown_table(option.fields, value)
    if option.fields is not None and isinstance(value, (list, tuple)):
        return [_shown_table(option.fields, item) for item in value]
    return value


def _shown_table(fields: tuple[PluginOption, ...], table: Mapping[str, Any]) -> dict[str, Any]:
    declared = {f.name: f for f in fields}
    return {k: shown(declared[k], v) if k in declared else v for k, v in table.items()}


def _hidden(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _hidden(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_hidden(v) for v in value]
    return HIDDEN if value not in ("", None) else value


def _wrong(label: str, what: str, value: object, secret: bool = False) -> PluginError:
    got = f"{_a(type(value).__name__)} (hidden: the option is secret)" if secret else _short(value)
    return PluginError(f"{label} must be {what}, got {got}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _a(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"
