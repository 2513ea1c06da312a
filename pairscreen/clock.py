"""The service's clock: one place to read the time, so tests can freeze it."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def today(at: datetime | None = None) -> date:
    return (at or now()).astimezone(UTC).date()


def next_midnight(at: datetime | None = None) -> datetime:
    """The next 00:00 UTC strictly after ``at``."""
    moment = (at or now()).astimezone(UTC)
    return datetime.combine(moment.date() + timedelta(days=1), datetime.min.time(), UTC)


def seconds_to_midnight(at: datetime | None = None) -> int:
    """Whole seconds until the next 00:00 UTC, at least 1 (rounded up)."""
    moment = at or now()
    return max(1, math.ceil((next_midnight(moment) - moment).total_seconds()))


def iso(moment: datetime) -> str:
    """ISO 8601 with an explicit UTC offset, whole seconds."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()
