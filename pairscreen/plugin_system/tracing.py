"""``PAIRSCREEN_TRACE_PLUGINS``: one log line per hook call, with its plugins and duration.

Installed on the plugin manager with pluggy's ``add_hookcall_monitoring``, so it sees every
call the typed facade makes (each plugin's call, wrappers included) without the facade
knowing. The timer stack is per thread: a hook may be called from several threads at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pluggy

from pairscreen.plugin_system.registry import plugin_name

TRACE_LOGGER = "pairscreen.plugins.trace"


def trace_hook_calls(pm: pluggy.PluginManager) -> None:
    """Log every hook call of ``pm`` at INFO on ``pairscreen.plugins.trace`` (shown without
    ``--verbose``: asking for the trace is asking to see it)."""
    log = logging.getLogger(TRACE_LOGGER)
    log.setLevel(logging.INFO)
    timers = threading.local()

    def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        stack: list[float] = timers.__dict__.setdefault("stack", [])
        stack.append(time.perf_counter())

    def after(
        outcome: pluggy.Result[Any],
        hook_name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        elapsed_ms = 1000.0 * (time.perf_counter() - timers.stack.pop())
        plugins = ", ".join(plugin_name(pm, impl.plugin) for impl in impls) or "no plugin"
        failed = outcome.exception
        log.info(
            "hook %s: %s in %.3f ms%s",
            hook_name,
            plugins,
            elapsed_ms,
            f" (raised {type(failed).__name__})" if failed else "",
        )

    pm.add_hookcall_monitoring(before, after)
