"""Deprecation warnings for configuration that moved: one line, once per process.

A universe file is read more than once in a process (``serve`` reads it for its start-up
lines and again for the runtime); the person running it needs to read each notice once, not
once per read. The memo below is that "once": it holds which notices this process has
already given, and nothing else.
"""

from __future__ import annotations

import functools
import logging

log = logging.getLogger(__name__)


def moved(where: str, old: str, new: str) -> None:
    """Say once per process that ``old`` (given in ``where``) is now written as ``new``."""
    _say_once(f"{where}: {old} is deprecated and still works for this release; write {new} instead")


@functools.cache
def _say_once(message: str) -> None:
    log.warning(message)


def forget() -> None:
    """Give every notice again (a test that counts them starts from none)."""
    _say_once.cache_clear()
