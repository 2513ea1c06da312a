"""Load the test plugins of ``tests/plugins/`` and build runtimes with them.

Each call loads a fresh module from the file, so a plugin's components (a notifier that
keeps what it delivered, say) never carry over from one test to the next.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from pairscreen.bootstrap import build_runtime
from pairscreen.runtime import Runtime

PLUGINS_DIR = Path(__file__).resolve().parents[1] / "plugins"


def plugin_file(stem: str) -> ModuleType:
    """The test plugin ``tests/plugins/<stem>.py``, freshly loaded."""
    path = PLUGINS_DIR / f"{stem}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no test plugin {path}")
    name = f"tests.plugins.{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look the module up by name
    spec.loader.exec_module(module)
    return module


def runtime_with(base: Runtime, *stems: str, **settings: Any) -> Runtime:
    """A runtime like ``base`` (same database) plus the named test plugins and settings."""
    return build_runtime(
        replace(base.settings, **settings),
        extra_plugins=tuple(plugin_file(stem) for stem in stems),
    )
