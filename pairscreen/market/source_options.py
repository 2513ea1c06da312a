"""The market source's options: its plugin's ``[plugins.<name>]`` table, as for any plugin.

A market source whose plugin declares its options (``pairscreen_plugin_options``: the
built-in ``csv`` and ``demo`` sources) takes them from that table, checked against the
declarations like every plugin's; the former place, the universe's ``[market]`` table, still
works for one release with a one-line notice naming the new one. A source whose plugin
declares none (``ccxt``, whose ``exchange_config`` is a table, and third-party sources written
before) reads ``[market]`` as before. Either way ``universe.market_options`` is what
:meth:`~pairscreen.MarketSource.fetch_candles` gets: the keys given, paths resolved against
the universe file, defaults left to the source.
"""

from __future__ import annotations

import dataclasses

from pairscreen.deprecation import moved
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import Universe, UniverseError, resolve_paths


def settle_market_options(plugins: Plugins, universe: Universe) -> tuple[Plugins, Universe]:
    """The plugins with the market source's table in place, and the universe with its
    ``market_options`` taken from that table; unchanged when the source's plugin declares
    no options (or no loaded plugin registers the source: the start-up checks name it)."""
    len(plugins.options)  # the tables checked first: a bad key is named as itself
    name = universe.market_source
    if name not in plugins.market_sources:
        return plugins, universe
    owner = plugins.market_sources.owner(name)
    if not plugins.declared_options.get(owner):
        return plugins, universe
    where = str(universe.file) if universe.file is not None else "the universe"
    table = dict(plugins.tables.get(owner, {}))
    if universe.market_options:
        if table:
            raise UniverseError(
                f"{where}: [market] and [plugins.{owner}] both set the options of market "
                f"source {name!r}; keep only [plugins.{owner}]"
            )
        keys = ", ".join(universe.market_options)
        moved(where, f"[market] {keys}", f"[plugins.{owner}]")
        table = dict(universe.market_options)  # paths already resolved when the file was read
    elif universe.file is not None:
        table = resolve_paths(table, universe.file)
    tables = {**plugins.tables, owner: table}
    settled = Plugins(plugins.pm, plugins.settings, tables)
    return settled, dataclasses.replace(universe, market_options=table, plugin_options=tables)
