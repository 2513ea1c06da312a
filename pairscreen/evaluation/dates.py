"""The as-of dates of an evaluation: a regular grid of past days."""

from __future__ import annotations

from datetime import date, timedelta


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
