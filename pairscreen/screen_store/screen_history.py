"""Stored screens by time, for ``/screens?at=``: the newest screen, regular or point-in-time,
dated at or before a moment, its payload kept in memory by the runtime that read it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime, timedelta

from pairscreen.db.models import Screen
from pairscreen.errors import NotFound
from pairscreen.screen_store.published import stored_payload

KEPT_IN_MEMORY = 32  # payloads a runtime keeps in memory, the least recently used dropped


def whole_second(moment: datetime) -> datetime:
    """The last instant of ``moment``'s second when it names a whole second: screens show
    ``generated_at`` to the second, so asking at a shown time finds that screen."""
    if moment.microsecond or moment.replace(tzinfo=None) == datetime.max.replace(microsecond=0):
        return moment
    return moment + timedelta(microseconds=999_999)


class ScreenHistory:
    """Stored screens by time, their payloads kept in memory by row id (a row never changes).

    Held by a runtime's :class:`~pairscreen.screen_store.store.ScreenStore`; thread-safe, bounded to
    ``KEPT_IN_MEMORY`` payloads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._payloads: OrderedDict[int, str] = OrderedDict()

    def at(self, moment: datetime) -> str:
        """The payload of the screen current at ``moment``; NotFound when none was yet."""
        row = (
            Screen.select(Screen.id)
            .where(Screen.generated_at <= whole_second(moment))
            .order_by(Screen.generated_at.desc(), Screen.id.desc())
            .limit(1)
            .first()
        )
        if row is None:
            raise NotFound(
                f"No screen had been published by {moment.isoformat()}. Ask for a later time, "
                "or compute one with 'pairscreen screen run --as-of DATE'."
            )
        with self._lock:
            payload = self._payloads.get(row.id)
            if payload is not None:
                self._payloads.move_to_end(row.id)
                return payload
        payload = stored_payload(row.id)
        if payload is None:  # pruned in between: look again
            return self.at(moment)
        with self._lock:
            self._payloads[row.id] = payload
            while len(self._payloads) > KEPT_IN_MEMORY:
                self._payloads.popitem(last=False)
        return str(payload)
