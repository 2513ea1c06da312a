"""The as-of points of an evaluation: a regular grid of past days, or of bar closes.

A daily universe is evaluated as of days (``date``: the day's close). An intraday universe is
evaluated as of bar closes (an aware UTC ``datetime``, which is a ``date`` too, so the rest of
the evaluation carries either); horizons and steps are then counts of the universe's bars.
On a daily universe a bar is a day, so every count below is the days it always was.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np

from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.market.cutoff import close_of


def as_of_dates(start: date, end: date, every_days: int) -> list[date]:
    """``start``, ``start + every``, … up to ``end`` inclusive.

    Raises ``ValueError`` for an empty range or a step below one day.
    """
    if every_days < 1:
        raise ValueError(f"--every must be at least 1 day, got {every_days}")
    if end < start:
        raise ValueError(f"--to {end} is before --from {start}")
    count = (end - start).days // every_days + 1
    return [start + timedelta(days=i * every_days) for i in range(count)]


def as_of_points(start: date, end: date, every: int, bar: BarSize = DAILY) -> list[date]:
    """The as-of points from ``start`` to ``end`` inclusive, ``every`` bars apart: days on a
    daily universe (:func:`as_of_dates`), bar closes (aware UTC datetimes) on an intraday one."""
    if not bar.intraday:
        return as_of_dates(start, end, every)
    if every < 1:
        raise ValueError(f"--every must be at least 1 bar, got {every}")
    if end < start:
        raise ValueError(f"--to {end.isoformat()} is before --from {start.isoformat()}")
    step = timedelta(seconds=every * bar.seconds)
    count = int((_moment(end) - _moment(start)) // step) + 1
    return [_moment(start) + i * step for i in range(count)]


def close_at(point: date) -> datetime:
    """The moment an as-of point's close is final: a bar's close time is its own; a day's
    is 00:00 UTC of the next day."""
    if isinstance(point, datetime):
        return point
    return close_of(point)


def stamp(point: date, bar: BarSize = DAILY) -> np.datetime64:
    """An as-of point as the engine dates its closes: a day, or a close time at the bar's
    unit."""
    if not bar.intraday:
        return np.datetime64(point, "D")
    seconds = int(_moment(point).timestamp())
    moment: np.datetime64 = np.datetime64(seconds, "s").astype(bar.dtype)
    return moment


def after(point: date, bars: int, bar: BarSize = DAILY) -> np.datetime64:
    """``bars`` bars after an as-of point, at the engine's unit (``t + h``)."""
    if not bar.intraday:
        return np.datetime64(point + timedelta(days=bars), "D")
    moment: np.datetime64 = (stamp(point, bar) + bar.duration(bars)).astype(bar.dtype)
    return moment


def point_of(moment: np.datetime64, bar: BarSize = DAILY) -> date:
    """A close as the evaluation names its points: the day, or an aware UTC datetime."""
    if not bar.intraday:
        day: date = moment.astype("datetime64[D]").astype(date)
        return day
    seconds = int(moment.astype("datetime64[s]").astype(np.int64))
    return datetime.fromtimestamp(seconds, UTC)


def in_days(bars: int, bar: BarSize = DAILY) -> float:
    """``bars`` bars in days (fractional on an intraday universe)."""
    return bars * bar.seconds / 86_400


def in_hours(bars: int, bar: BarSize) -> float:
    """``bars`` bars in hours (the intraday JSON's ``*_hours`` fields)."""
    return bars * bar.seconds / 3600


def spell(bars: int, bar: BarSize = DAILY) -> str:
    """A horizon or step for people: ``30 days`` on a daily universe, ``24 h`` (``45 min``
    below an hour) on an intraday one."""
    if not bar.intraday:
        return f"{bars} day{'' if bars == 1 else 's'}"
    seconds = bars * bar.seconds
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min"


def iso(point: date) -> str:
    """An as-of point in ISO 8601: ``2023-03-10`` or ``2023-03-10T14:00:00Z``."""
    if isinstance(point, datetime):
        return point.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return point.isoformat()


def day_of_point(point: date) -> date:
    """The UTC day an as-of point belongs to: a day itself, or the day of a bar's close (a
    bar closing at 00:00 is the day before's last)."""
    if isinstance(point, datetime):
        return (_moment(point) - timedelta(seconds=1)).date()
    return point


def _moment(point: date) -> datetime:
    if isinstance(point, datetime):
        return point if point.tzinfo is not None else point.replace(tzinfo=UTC)
    return datetime.combine(point, datetime.min.time(), UTC)
