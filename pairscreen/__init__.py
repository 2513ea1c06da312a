"""pairscreen: pair screening, coin-accumulation backtests and depeg watching behind a REST API.

Plugin authors import what they need from :mod:`pairscreen.contracts` (the contracts of
every component, ``hookimpl`` and ``Settings``); this package re-exports the same names.
"""

from __future__ import annotations

from pairscreen import contracts
from pairscreen.contracts import *  # noqa: F403  (the plugin API: pairscreen.contracts.__all__)

__version__ = "0.1.0"

__all__ = ["__version__"]
__all__ += contracts.__all__  # each public name is named once, in pairscreen.contracts
