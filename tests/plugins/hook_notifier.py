"""Test plugin: a notifier for the channel kind ``hook_memo`` that keeps what it delivers.

A message whose address is ``refuse`` is refused with a retry, as a busy receiver would.
"""

from __future__ import annotations

from pairscreen import DeliveryError, Notification, hookimpl


class Memo:
    name = "hook_memo"

    def __init__(self) -> None:
        self.delivered: list[Notification] = []

    def deliver(self, notification: Notification) -> None:
        if notification.address == "refuse":
            raise DeliveryError("the memo pad is full", retry_after=60)
        self.delivered.append(notification)


@hookimpl
def pairscreen_register_notifiers() -> list[Memo]:
    return [Memo()]
