"""The screen that was current at a given time, for ``/screens?at=``.

The answer is the newest stored screen, regular or point-in-time (see
:mod:`pairscreen.screening.point_in_time`), dated at or before that time, so a backtest can
replay what the service said then.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import MAXYEAR, UTC, date, datetime, time, timedelta, timezone

from pairscreen.db.models import Screen
from pairscreen.errors import BadRequest, NotFound
from pairscreen.market.cutoff import close_of

KEPT_IN_MEMORY = 32  # payloads a runtime keeps in memory, the least recently used dropped


# A date, or a date and a time (hours, minutes and seconds optional from the right) with an
# optional offset: ``Z``, ``+01:00``, ``+0100`` or ``+01``. An unencoded ``+`` in a URL's query
# arrives as a space, so a space before the offset reads as ``+``.
MOMENT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?([Zz]|[+\- ]\d{2}(?::?\d{2})?)?)?"
)


def parse_moment(text: str) -> datetime:
    """A query's ``at``: a date means the end of that UTC day (when its close is final); a
    date-time (RFC 3339) without an offset is UTC. Moments beyond the calendar's ends are
    taken as its first or last instant.

    Raises :class:`BadRequest` naming the parameter and the accepted forms.
    """
    match = MOMENT.fullmatch(text.strip())
    try:
        if match is None:
            raise ValueError(text)
        year, month, day, hour, minute, second, fraction, offset = match.groups()
        calendar_day = date(int(year), int(month), int(day))
        if hour is None:
            return _clamped(lambda: close_of(calendar_day), calendar_day)
        micro = int((fraction or "0")[:6].ljust(6, "0"))
        # a leap second (:60) is the last instant of its minute
        clock_time = time(int(hour), int(minute or 0), min(int(second or 0), 59), micro)
        zone = UTC if offset in (None, "Z", "z") else _zone(offset)
        moment = datetime.combine(calendar_day, clock_time, zone)
        return _clamped(lambda: moment.astimezone(UTC), calendar_day)
    except ValueError:
        raise BadRequest(
            f"query parameter 'at' is {text[:64]!r}; allowed: a date (2025-03-01) or a "
            "date-time (2025-03-01T12:00:00Z)."
        ) from None


def _zone(offset: str) -> timezone:
    sign = -1 if offset[0] == "-" else 1  # "+", or the space an unencoded "+" became
    hours, minutes = int(offset[1:3]), int(offset[-2:]) if len(offset) > 3 else 0
    if hours > 23 or minutes > 59:
        raise ValueError(offset)
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _clamped(compute: Callable[[], datetime], day: date) -> datetime:
    try:
        return compute()
    except OverflowError:
        edge = datetime.max if day.year == MAXYEAR else datetime.min
        return edge.replace(tzinfo=UTC)


def whole_second(moment: datetime) -> datetime:
    """The last instant of ``moment``'s second when it names a whole second: screens show
    ``generated_at`` to the second, so asking at a shown time finds that screen."""
    if moment.microsecond or moment.replace(tzinfo=None) == datetime.max.replace(microsecond=0):
        return moment
    return moment + timedelta(microseconds=999_999)


class ScreenHistory:
    """Stored screens by time, their payloads kept in memory by row id (a row never changes).

    Held by a :class:`~pairscreen.runtime.Runtime`; thread-safe, bounded to
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
        payload = Screen.select(Screen.payload).where(Screen.id == row.id).scalar()
        if payload is None:  # pruned in between: look again
            return self.at(moment)
        with self._lock:
            self._payloads[row.id] = payload
            while len(self._payloads) > KEPT_IN_MEMORY:
                self._payloads.popitem(last=False)
        return str(payload)
