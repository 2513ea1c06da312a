"""Test plugin: an old-style ``hookwrapper=True`` implementation that renames notifiers.

Every notifier the other plugins return is registered under ``legacy_<name>``, which shows
that the framework calls the hook through pluggy, old-style wrappers included.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from pairscreen import Notification, Notifier, hookimpl


class Renamed:
    def __init__(self, inner: Notifier) -> None:
        self.inner = inner
        self.name = f"legacy_{inner.name}"

    def deliver(self, notification: Notification) -> None:
        self.inner.deliver(notification)


@hookimpl(hookwrapper=True)
def pairscreen_register_notifiers() -> Generator[None, Any, None]:
    outcome = yield
    answers: list[Sequence[Notifier]] = outcome.get_result()
    outcome.force_result([[Renamed(n) for n in answer] for answer in answers])
