"""A plugin's own settings: what it declares for its ``[plugins.<name>]`` table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PluginOption"]

OptionValue = (
    bool | int | float | str | tuple[str, ...] | Mapping[str, Any] | tuple[Mapping[str, Any], ...]
)


@dataclass(frozen=True)
class PluginOption:
    """One setting a plugin takes from its own ``[plugins.<name>]`` table of the universe file.

    ``default`` gives the type too: a boolean, integer, number or string; a list of strings
    (a tuple or list default); a table (a dict default); a list of tables (a list default
    with ``fields``). A value of another type is refused at start-up (a whole number is
    accepted where the default is a float). ``fields`` declare a table's keys, checked and
    completed with their defaults like the plugin's own (a table without ``fields`` is
    passed as written). ``secret`` hides the value wherever options are shown; ``env`` names
    the environment variable that overrides the table (a scalar or a list of strings,
    comma-separated). The plugin's register hooks get the values, defaults filled in, as
    ``options``.
    """

    name: str
    default: OptionValue
    description: str = ""
    secret: bool = False
    env: str | None = None
    fields: tuple[PluginOption, ...] | None = None

    @property
    def type_name(self) -> str:
        if isinstance(self.default, Mapping):
            return "table"
        if isinstance(self.default, (list, tuple)):
            return "list of tables" if self.fields is not None else "list of strings"
        return {bool: "boolean", int: "integer", float: "number", str: "string"}[type(self.default)]
