"""The reference table of the loaded plugins' options, for docs/configuration.md.

Generated from the ``pairscreen_plugin_options`` declarations, as the settings table is from
``config.py``, so that the reference cannot drift from what the plugins accept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pairscreen.contracts import PluginOption
from pairscreen.plugin_system.registry import Plugins


def options_markdown(plugins: Plugins) -> str:
    """Every declared option of every loaded plugin: its table, name, type, default (a
    secret's marked as such), the environment variable that overrides it and what it is for,
    one row each, plugins in registration order; a table's declared keys follow it."""
    rows = [
        "| Table | Option | Type | Default | Environment variable | What it is |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, declared in plugins.declared_options.items():
        for option in declared:
            rows.extend(_rows(f"[plugins.{name}]", option, option.name))
    return "\n".join(rows) + "\n"


def _rows(table: str, option: PluginOption, key: str) -> list[str]:
    default = json.dumps(option.default, ensure_ascii=False)  # as TOML writes it: true, "x"
    if isinstance(option.default, (list, tuple)):  # a TOML array, not JSON's
        default = "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in option.default) + "]"
    if isinstance(option.default, Mapping):
        default = "{}" if not option.default else default
    shown = f"`{default}`" + (" (secret)" if option.secret else "")
    env = f"`{option.env}`" if option.env else ""
    meaning = option.description.replace("|", "\\|")
    rows = [f"| `{table}` | `{key}` | {option.type_name} | {shown} | {env} | {meaning} |"]
    for inner in option.fields or ():
        rows.extend(_rows(table, inner, f"{key}.{inner.name}"))
    return rows


def builtin_options_markdown() -> str:
    """:func:`options_markdown` of the built-in plugins alone (no entry points, no plugins
    folder): the table docs/configuration.md carries."""
    from pairscreen.config import Settings
    from pairscreen.plugin_system.loader import load_plugins

    settings = Settings(load_plugins=())
    return options_markdown(Plugins(load_plugins(settings), settings))
