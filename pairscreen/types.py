"""The plugin contracts' former home, kept for one release: every public name of
:mod:`pairscreen.contracts`, re-exported.

Third-party plugins written against ``from pairscreen.types import ...`` keep working; new
code imports from ``pairscreen.contracts`` (``docs/plugins.md``). Nothing in pairscreen
imports this module.
"""

from __future__ import annotations

from pairscreen.contracts import *  # noqa: F403  (the public names, pairscreen.contracts.__all__)
from pairscreen.contracts import __all__ as __all__
