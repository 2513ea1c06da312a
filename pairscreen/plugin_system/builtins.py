"""The built-in plugins' names and modules, and the names they were known by before.

Apart from the loader so that the registry can map a former name in a ``[plugins.…]`` table
without importing the loader (which imports the registry's tracing).
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

# The built-in plugins, by the name a user gives them (``[plugins.NAME]``,
# ``PAIRSCREEN_DISABLE_PLUGINS``) and their module: registered exactly like a third-party
# plugin, through the hooks, under a short name as an entry point's would be.
BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("demo", "pairscreen_plugins.market.demo"),
    ("csv_source", "pairscreen_plugins.market.csv_source"),
    ("ccxt_source", "pairscreen_plugins.market.ccxt_source"),
    ("bands", "pairscreen_plugins.metrics.bands"),
    ("mean_reversion", "pairscreen_plugins.metrics.mean_reversion"),
    ("range_stats", "pairscreen_plugins.metrics.range_stats"),
    ("volume", "pairscreen_plugins.metrics.volume"),
    ("half_life", "pairscreen_plugins.metrics.half_life"),
    ("cointegration", "pairscreen_plugins.metrics.cointegration"),
    ("johansen", "pairscreen_plugins.metrics.johansen"),
    ("correlation", "pairscreen_plugins.metrics.correlation"),
    ("ou", "pairscreen_plugins.metrics.ou"),
    ("breakeven", "pairscreen_plugins.metrics.breakeven"),
    ("kalman", "pairscreen_plugins.metrics.kalman"),
    ("default_filter", "pairscreen_plugins.rules"),
    ("accumulation", "pairscreen_plugins.strategies.accumulation"),
    ("ou_optimal", "pairscreen_plugins.strategies.ou_optimal"),
    ("kalman_band", "pairscreen_plugins.strategies.kalman_band"),
    ("score", "pairscreen_plugins.score"),
    ("default_chart", "pairscreen_plugins.charts.default"),
    ("email", "pairscreen_plugins.notifiers.email"),
    ("telegram", "pairscreen_plugins.notifiers.telegram"),
    ("webhook", "pairscreen_plugins.notifiers.webhook"),
    ("chat", "pairscreen_plugins.notifiers.chat"),
    ("demo_reference", "pairscreen_plugins.pegs.demo_reference"),
    ("csv_reference", "pairscreen_plugins.pegs.csv_reference"),
    ("http_json", "pairscreen_plugins.pegs.http_json"),
)


def current_name(name: str, where: str) -> str:
    """``name`` as a plugin is named now: a built-in's former name (its module path, which
    names built-ins before this release) becomes its short name, with a one-line warning
    naming ``where`` it was given and what to write instead; any other name is returned as is."""
    for short, module in BUILTIN_PLUGINS:
        if name == module:
            log.warning(
                "%s names the built-in plugin %r by its former name; write %r instead (the "
                "former name stops working in the next release)",
                where,
                module,
                short,
            )
            return short
    return name
