"""Test plugin: a ``pairscreen_peg_event_changed`` with a bug; it must stop no one else."""

from __future__ import annotations

from pairscreen import PegEventChange, hookimpl


@hookimpl
def pairscreen_peg_event_changed(event: PegEventChange) -> None:
    raise RuntimeError(f"hook_peg_event_failing cannot handle {event.ticker}")
