"""The service's clock: one place to read the time, so tests can freeze it.

Every date the service derives from "now" (the last closed day, ages, quotas, the demo
market's end) goes through :func:`now`. ``PAIRSCREEN_CLOCK_SHIFT`` (signed seconds, default
0) moves it away from the system clock while time keeps flowing: every process started with
the same value agrees on the same "today", which is how the test suite builds the same
market, screens and answers whatever day it runs, and how an operator can reproduce what the
service did on a past day. Read on every call, so a process always follows its environment.
"""

from __future__ import annotations

import math
import os
from datetime import UTC, date, datetime, timedelta

SHIFT_VARIABLE = "PAIRSCREEN_CLOCK_SHIFT"


def seconds_of(text: str) -> float:
    """A shift's text as seconds; :class:`ValueError` unless it is a finite number."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def shift() -> timedelta:
    """How far ``PAIRSCREEN_CLOCK_SHIFT`` moves the clock (zero when unset).

    The one variable read outside ``pairscreen.config``: the clock sits below every layer
    (row timestamps included) and must follow the environment a process was started with.
    A bad value raises :class:`ValueError` naming it (``load_settings`` reports it first):
    a clock that ignored a typo would date everything wrongly.
    """
    text = os.environ.get(SHIFT_VARIABLE, "").strip()
    if not text:
        return timedelta(0)
    try:
        return timedelta(seconds=seconds_of(text))
    except ValueError:
        raise ValueError(f"{SHIFT_VARIABLE} must be a number of seconds, got {text!r}") from None


def shift_to(moment: datetime, *, system_now: datetime | None = None) -> str:
    """The ``PAIRSCREEN_CLOCK_SHIFT`` value that makes :func:`now` read ``moment`` at
    ``system_now`` (by default the system clock's present)."""
    base = system_now or datetime.now(UTC)
    return repr((moment - base).total_seconds())


def now() -> datetime:
    """The current time, timezone-aware UTC (the system clock moved by :func:`shift`)."""
    return datetime.now(UTC) + shift()


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
