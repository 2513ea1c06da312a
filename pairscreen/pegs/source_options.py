"""The peg sources' options: each source plugin's ``[plugins.<name>]`` table, as for any plugin.

A peg source whose plugin declares its options (the built-in ``csv`` and ``demo`` sources, in
the plugins ``csv_reference`` and ``demo_reference``) takes them from that table, checked
against the declarations like every plugin's; the former place, the universe's
``[peg_sources.<source>]`` table, still works for one release with a one-line notice naming
the new one. A source whose plugin declares none (``http_json``, whose ``headers`` is a
table, and third-party sources written before) reads ``[peg_sources.<source>]`` as before.
Either way ``universe.peg_source_options[source]`` is what the sampler hands the source: the
keys given, paths resolved against the universe file, defaults left to the source.
"""

from __future__ import annotations

import dataclasses
from datetime import date, time
from typing import Any

from pairscreen.deprecation import moved
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import Universe, UniverseError, resolve_paths


def settle_peg_source_options(plugins: Plugins, universe: Universe) -> tuple[Plugins, Universe]:
    """The plugins with each peg source's table in place, and the universe with its
    ``peg_source_options`` taken from those tables; unchanged when no source's plugin
    declares options."""
    len(plugins.options)  # the tables checked first: a bad key is named as itself
    where = str(universe.file) if universe.file is not None else "the universe"
    tables: dict[str, dict[str, Any]] = {k: dict(v) for k, v in plugins.tables.items()}
    options = {k: dict(v) for k, v in universe.peg_source_options.items()}
    settled: set[str] = set()
    for name, owner in plugins.peg_sources.owners.items():
        if not plugins.declared_options.get(owner):
            continue
        former = options.get(name)
        if former:
            if tables.get(owner):
                raise UniverseError(
                    f"{where}: [peg_sources.{name}] and [plugins.{owner}] both set the options "
                    f"of peg source {name!r}; keep only [plugins.{owner}]"
                )
            moved(where, f"[peg_sources.{name}]", f"[plugins.{owner}]")
            # paths were resolved when the file was read; a TOML date or time becomes its ISO
            # text, as an option's value is a boolean, number or string
            tables[owner] = {k: _text_of_moment(v) for k, v in former.items()}
        elif owner in tables and owner not in settled and universe.file is not None:
            tables[owner] = resolve_paths(tables[owner], universe.file)
        settled.add(owner)
        if tables.get(owner):
            options[name] = tables[owner]
    if not settled:
        return plugins, universe
    return Plugins(plugins.pm, plugins.settings, tables), dataclasses.replace(
        universe, peg_source_options=options, plugin_options=tables
    )


def _text_of_moment(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date | time) else value
