"""Alert hygiene settings of a watchlist item, as the API and the CLI take them.

``cooldown_hours`` (whole hours, 0 = none), ``snooze_until`` (a date, a date-time or
``none``) and ``rearm_margin`` (position units) are checked here once, so the API's ``PUT``
and the CLI's ``watchlist add/set`` refuse the same values with the same sentence. The rules
they feed are in :mod:`pairscreen.notify.states`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone

from pairscreen.errors import BadRequest
from pairscreen.notify.states import MAX_COOLDOWN_HOURS, MAX_MARGIN

SNOOZE_OFF = "none"
_MOMENT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?"
)


@dataclass(frozen=True)
class HygieneChange:
    """What a write changes; ``None`` leaves a setting as it is (``clear_snooze`` ends one)."""

    cooldown_hours: int | None = None
    snoozed_until: datetime | None = None
    clear_snooze: bool = False
    rearm_margin: float | None = None

    @classmethod
    def of(
        cls,
        cooldown_hours: int | None = None,
        snooze_until: str | None = None,
        rearm_margin: float | None = None,
    ) -> HygieneChange:
        """Checked values, or :class:`BadRequest` naming the parameter and what it allows."""
        if cooldown_hours is not None and not 0 <= cooldown_hours <= MAX_COOLDOWN_HOURS:
            raise BadRequest(
                f"cooldown_hours is {cooldown_hours}; allowed: whole hours from 0 (no "
                f"cooldown) to {MAX_COOLDOWN_HOURS}."
            )
        if rearm_margin is not None and not (
            math.isfinite(rearm_margin) and 0 <= rearm_margin <= MAX_MARGIN
        ):
            raise BadRequest(
                f"rearm_margin is {rearm_margin}; allowed: a position distance from 0 to "
                f"{MAX_MARGIN} (default 0.02)."
            )
        clear = snooze_until is not None and snooze_until.strip().lower() == SNOOZE_OFF
        until = None if snooze_until is None or clear else parse_snooze(snooze_until)
        return cls(cooldown_hours, until, clear, rearm_margin)


def parse_snooze(text: str) -> datetime:
    """``snooze_until``: a date is 00:00 UTC of that day (notifications resume on it); a
    date-time without an offset is UTC."""
    match = _MOMENT.fullmatch(text.strip())
    try:
        if match is None:
            raise ValueError(text)
        year, month, day, hour, minute, second, offset = match.groups()
        calendar_day = date(int(year), int(month), int(day))
        if hour is None:
            return datetime.combine(calendar_day, time(), UTC)
        zone = UTC
        if offset not in (None, "Z", "z"):
            sign = -1 if offset[0] == "-" else 1
            zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])))
        moment = datetime.combine(
            calendar_day, time(int(hour), int(minute), min(int(second or 0), 59)), zone
        )
        try:
            return moment.astimezone(UTC)
        except OverflowError:  # an offset past the calendar's first or last day
            edge = datetime.min if calendar_day.year == 1 else datetime.max
            return edge.replace(tzinfo=UTC)
    except ValueError:
        raise BadRequest(
            f"snooze_until is {text[:64]!r}; allowed: a date (2026-12-01, from 00:00 UTC), a "
            f"date-time (2026-12-01T08:00:00Z) or {SNOOZE_OFF!r} to end a snooze."
        ) from None
