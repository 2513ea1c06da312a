"""Test plugin: a ``pairscreen_peg_event_changed`` that takes none of the hook's arguments.

pluggy passes an implementation only the arguments it names, so this is a valid plugin.
"""

from __future__ import annotations

import logging

from pairscreen import hookimpl

log = logging.getLogger(__name__)


@hookimpl
def pairscreen_peg_event_changed() -> None:
    log.warning("hook_peg_event_no_argument: something opened or closed")
