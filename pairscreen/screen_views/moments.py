"""The moment a ``/screens?at=`` query names.

The screen current then is the newest stored screen, regular or point-in-time (see
:mod:`pairscreen.screening.point_in_time`), dated at or before that moment
(:meth:`pairscreen.screen_store.store.ScreenStore.at`), so a backtest can replay what
the service said then.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import MAXYEAR, UTC, date, datetime, time, timedelta, timezone

from pairscreen.errors import BadRequest
from pairscreen.market.cutoff import close_of

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
