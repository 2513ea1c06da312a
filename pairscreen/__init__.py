"""pairscreen: pair screening, coin-accumulation backtests and depeg watching behind a REST API.

Plugin authors import everything they need from here and nothing deeper.
"""

from __future__ import annotations

from pairscreen import types
from pairscreen.config import Settings
from pairscreen.engine.guarantees import ShortHistory
from pairscreen.plugin_system.hookspecs import hookimpl
from pairscreen.types import *  # noqa: F403  (the plugin types: pairscreen.types.__all__)

__version__ = "0.1.0"

# ShortHistory: the core's history guarantee as a rule, for a filter with a threshold of it
__all__ = ["Settings", "ShortHistory", "__version__", "hookimpl"]
__all__ += types.__all__  # each public type is named once, where it is defined
