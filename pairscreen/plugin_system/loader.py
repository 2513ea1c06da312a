"""Plugin loading: the built-ins, the ``pairscreen`` entry points, and ``PAIRSCREEN_PLUGINS_DIR``.

Nothing loads at import time. ``PAIRSCREEN_LOAD_PLUGINS`` limits which third-party entry-point
plugins load (a comma-separated list of names; empty means none), which is how the tests keep
plugins installed on the machine out of their world. ``PAIRSCREEN_DISABLE_PLUGINS`` keeps the
named plugins out, built-ins included; a name that matches no plugin is an error, so a typo
never leaves a plugin silently on.

Where each plugin came from is recorded on the plugin manager (:func:`origins`), for
``pairscreen plugins`` to list.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import sys
from pathlib import Path

import pluggy

from pairscreen.config import Settings
from pairscreen.plugin_system import hookspecs
from pairscreen.plugin_system.builtins import BUILTIN_PLUGINS as BUILTIN_PLUGINS
from pairscreen.plugin_system.builtins import current_name
from pairscreen.plugin_system.tracing import trace_hook_calls

log = logging.getLogger(__name__)


def entry_point_name(plugin: object) -> str | None:
    """The name of the ``pairscreen`` entry point that loads ``plugin`` (a module), so a
    plugin handed over by a test is named as its installed entry point names it."""
    module = getattr(plugin, "__name__", None)
    if module is None:
        return None
    for entry in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME):
        if entry.module == module and not entry.attr:
            return entry.name
    return None


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager with the specs added and nothing registered."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


class PluginLoadError(ValueError):
    """The plugin settings name a plugin that is not there."""


BUILT_IN = "built-in"
ENTRY_POINT = "entry point"
LOCAL_FILE = "local file"
FRAMEWORK = "framework"  # the framework's own hook implementations (``extra``: depeg alerts)


def origins(pm: pluggy.PluginManager) -> dict[str, str]:
    """Each loaded plugin's name and where it came from (``built-in``, ``entry point
    <distribution> <version>``, ``local file <path>``); a plugin not listed was handed to
    the loader by the framework itself (``extra``)."""
    found: dict[str, str] = getattr(pm, "pairscreen_origins", {})
    return dict(found)


def versions(pm: pluggy.PluginManager) -> dict[str, str]:
    """The version of each loaded plugin that has one: an entry-point plugin's distribution
    version, and pairscreen's own for the built-ins."""
    found: dict[str, str] = getattr(pm, "pairscreen_versions", {})
    return dict(found)


def load_plugins(settings: Settings, *, extra: tuple[object, ...] = ()) -> pluggy.PluginManager:
    """Build the plugin manager: built-ins, entry points, the plugins folder, then ``extra``,
    leaving out the plugins ``PAIRSCREEN_DISABLE_PLUGINS`` names."""
    pm = new_plugin_manager()
    disabled = {current_name(n, "PAIRSCREEN_DISABLE_PLUGINS") for n in settings.disable_plugins}
    for name in disabled:
        pm.set_blocked(name)
    seen: dict[str, str] = {}
    for name, module in BUILTIN_PLUGINS:
        seen[name] = BUILT_IN
        if name not in disabled:
            pm.register(importlib.import_module(module), name=name)
    seen.update(_load_entry_points(pm, settings.load_plugins))
    seen.update(_load_plugins_dir(pm, settings.plugins_dir, disabled))
    unknown = sorted(disabled - set(seen))
    if unknown:
        raise PluginLoadError(
            f"PAIRSCREEN_DISABLE_PLUGINS names {', '.join(map(repr, unknown))}, which is not a "
            "plugin (see 'pairscreen plugins' for the names)"
        )
    for plugin in extra:
        if not pm.is_registered(plugin):  # a test may hand over a module its entry point loaded
            pm.register(plugin, name=entry_point_name(plugin))
    pm.check_pending()
    if settings.trace_plugins:
        trace_hook_calls(pm)
    pm.pairscreen_origins = {  # type: ignore[attr-defined]
        name: origin for name, origin in seen.items() if not pm.is_blocked(name)
    }
    own = importlib.metadata.version(hookspecs.PROJECT_NAME)
    pm.pairscreen_versions = {  # type: ignore[attr-defined]
        **{name: own for name, origin in seen.items() if origin == BUILT_IN},
        **{
            registered: dist.version
            for plugin, dist in pm.list_plugin_distinfo()
            if (registered := pm.get_name(plugin))
        },
    }
    return pm


def _load_entry_points(pm: pluggy.PluginManager, allowed: tuple[str, ...] | None) -> dict[str, str]:
    builtin = {name for name, _module in BUILTIN_PLUGINS}
    for entry in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME):
        if entry.name in builtin and (allowed is None or entry.name in allowed):
            raise PluginLoadError(
                f"the entry point {entry.name!r} ({entry.value}) has the name of a built-in "
                "plugin; rename it in its package's entry points"
            )
    if allowed is None:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
    else:
        for name in allowed:
            pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME, name=name)
    found: dict[str, str] = {}
    for plugin, dist in pm.list_plugin_distinfo():
        registered = pm.get_name(plugin)
        if registered:
            found[registered] = f"{ENTRY_POINT} {dist.project_name} {dist.version}"
    for entry in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME):
        if pm.is_blocked(entry.name):  # disabled: known, so not a typo
            found.setdefault(entry.name, ENTRY_POINT)
    return found


def _load_plugins_dir(
    pm: pluggy.PluginManager, folder: Path | None, disabled: set[str]
) -> dict[str, str]:
    found: dict[str, str] = {}
    if folder is None:
        return found
    for path in sorted(folder.glob("*.py")):
        found[f"local:{path.name}"] = f"{LOCAL_FILE} {path}"
        if f"local:{path.name}" in disabled:
            continue
        module_name = f"pairscreen_local_plugin_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            log.warning("cannot load plugin file %s", path)
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        pm.register(module, name=f"local:{path.name}")
    return found
