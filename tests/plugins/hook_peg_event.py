"""Test plugin: logs every depeg event it hears about, as a pager integration would."""

from __future__ import annotations

import logging

from pairscreen import PegEventChange, hookimpl

log = logging.getLogger(__name__)


@hookimpl
def pairscreen_peg_event_changed(event: PegEventChange) -> None:
    log.warning("hook_peg_event: %s %s", event.ticker, event.change)
