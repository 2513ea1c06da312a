"""The reference table of the loaded plugins' options, for docs/configuration.md.

Generated from the ``pairscreen_plugin_options`` declarations, as the settings table is from
``config.py``, so that the reference cannot drift from what the plugins accept.
"""

from __future__ import annotations

import json

from pairscreen.plugin_system.registry import Plugins


def options_markdown(plugins: Plugins) -> str:
    """Every declared option of every loaded plugin: its table, name, type, default and what
    it is for, one row each, plugins in registration order."""
    rows = ["| Table | Option | Type | Default | What it is |", "| --- | --- | --- | --- | --- |"]
    for name, declared in plugins.declared_options.items():
        for option in declared:
            default = json.dumps(option.default)  # as TOML writes it: true, "fixed", 0.0001
            meaning = option.description.replace("|", "\\|")
            rows.append(
                f"| `[plugins.{name}]` | `{option.name}` | {option.type_name} | `{default}` "
                f"| {meaning} |"
            )
    return "\n".join(rows) + "\n"


def builtin_options_markdown() -> str:
    """:func:`options_markdown` of the built-in plugins alone (no entry points, no plugins
    folder): the table docs/configuration.md carries."""
    from pairscreen.config import Settings
    from pairscreen.plugin_system.loader import load_plugins

    settings = Settings(load_plugins=())
    return options_markdown(Plugins(load_plugins(settings), settings))
