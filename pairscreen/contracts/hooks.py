"""The marker of a plugin's hook implementations (``@hookimpl``); the hooks themselves are
specified, with what the framework does with each, in ``pairscreen.plugin_system.hookspecs``."""

from __future__ import annotations

import pluggy

__all__ = ["PROJECT_NAME", "hookimpl"]

PROJECT_NAME = "pairscreen"
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
