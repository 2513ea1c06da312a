"""Plugin loading: the built-ins, the ``pairscreen`` entry points, and ``PAIRSCREEN_PLUGINS_DIR``.

Nothing loads at import time. ``PAIRSCREEN_LOAD_PLUGINS`` limits which third-party entry-point
plugins load (a comma-separated list of names; empty means none), which is how the tests keep
plugins installed on the machine out of their world.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from pathlib import Path

import pluggy

from pairscreen import hookspecs
from pairscreen.config import Settings

log = logging.getLogger(__name__)

# The built-in plugins: registered exactly like a third-party plugin, through the hooks.
BUILTIN_PLUGINS: tuple[str, ...] = (
    "pairscreen_plugins.market.demo",
    "pairscreen_plugins.market.csv_source",
    "pairscreen_plugins.market.ccxt_source",
    "pairscreen_plugins.metrics.bands",
    "pairscreen_plugins.metrics.mean_reversion",
    "pairscreen_plugins.metrics.range_stats",
    "pairscreen_plugins.metrics.volume",
    "pairscreen_plugins.metrics.half_life",
    "pairscreen_plugins.metrics.cointegration",
    "pairscreen_plugins.metrics.correlation",
    "pairscreen_plugins.metrics.ou",
    "pairscreen_plugins.metrics.breakeven",
    "pairscreen_plugins.rules",
    "pairscreen_plugins.strategies.accumulation",
    "pairscreen_plugins.strategies.ou_optimal",
    "pairscreen_plugins.score",
    "pairscreen_plugins.charts.default",
    "pairscreen_plugins.notifiers.email",
    "pairscreen_plugins.notifiers.webhook",
    "pairscreen_plugins.pegs.demo_reference",
    "pairscreen_plugins.pegs.csv_reference",
    "pairscreen_plugins.pegs.http_json",
)


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager with the specs added and nothing registered."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


def load_plugins(settings: Settings, *, extra: tuple[object, ...] = ()) -> pluggy.PluginManager:
    """Build the plugin manager: built-ins, entry points, the plugins folder, then ``extra``."""
    pm = new_plugin_manager()
    for name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    _load_entry_points(pm, settings.load_plugins)
    _load_plugins_dir(pm, settings.plugins_dir)
    for plugin in extra:
        pm.register(plugin)
    pm.check_pending()
    return pm


def _load_entry_points(pm: pluggy.PluginManager, allowed: tuple[str, ...] | None) -> None:
    if allowed is None:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
        return
    for name in allowed:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME, name=name)


def _load_plugins_dir(pm: pluggy.PluginManager, folder: Path | None) -> None:
    if folder is None:
        return
    for path in sorted(folder.glob("*.py")):
        module_name = f"pairscreen_local_plugin_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            log.warning("cannot load plugin file %s", path)
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        pm.register(module, name=f"local:{path.name}")
