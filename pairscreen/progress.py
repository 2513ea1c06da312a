"""How a long job tells its caller how far it has come, without knowing who listens.

The sync, the screen and the peg backfill take a :class:`Progress` callback; the command line
passes one that draws a bar (or prints plain lines), every other caller passes nothing. The
jobs so stay free of any display code.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Called after each step: ``done`` of ``total`` steps are finished."""

    def __call__(self, done: int, total: int) -> None: ...


def no_progress(done: int, total: int) -> None:
    """The listener of callers that show no progress."""
