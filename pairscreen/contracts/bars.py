"""The bar sizes a universe may declare (``[market] bar``) and the UTC grid of each.

A bar is named by its **close time**: the hourly bar of 13:00-14:00 UTC is the row stamped
``14:00Z``, and the bar closing at ``00:00Z`` of day D+1 is the last bar of day D (the daily
close of day D). Every bar size divides a UTC day, so the grid of a size is the multiples of
its length since 1970-01-01T00:00Z and a UTC day holds a whole number of bars.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

__all__ = ["BAR_SIZES", "DAILY", "BarSize", "bar_size"]

DAY_SECONDS = 86_400


@dataclass(frozen=True)
class BarSize:
    """One bar size: its name as a universe writes it and its length in seconds."""

    name: str
    seconds: int

    @property
    def intraday(self) -> bool:
        return self.seconds < DAY_SECONDS

    @property
    def per_day(self) -> int:
        """Bars in one UTC day."""
        return DAY_SECONDS // self.seconds

    def on_grid(self, close_times: np.ndarray) -> np.ndarray:
        """Which close times (epoch seconds, int64) fall on this size's UTC grid."""
        on: np.ndarray = close_times % self.seconds == 0
        return on

    def last_closed(self, now: datetime) -> int:
        """The close time (epoch seconds) of the last bar closed at ``now``: a bar closing
        exactly at ``now`` has closed."""
        seconds = int(now.astimezone(UTC).timestamp())
        return seconds - seconds % self.seconds


DAILY = BarSize("1d", DAY_SECONDS)
BAR_SIZES: dict[str, BarSize] = {
    size.name: size
    for size in (DAILY, BarSize("4h", 4 * 3600), BarSize("1h", 3600), BarSize("15m", 900))
}


def bar_size(name: str) -> BarSize:
    """The bar size called ``name``; :class:`ValueError` with the sizes there are."""
    try:
        return BAR_SIZES[name]
    except (KeyError, TypeError):
        choices = ", ".join(f'"{n}"' for n in BAR_SIZES)
        raise ValueError(f"bar must be one of {choices}, got {name!r}") from None


def require_daily(bar: str, what: str) -> None:
    """Refuse, in one line, to run ``what`` on a universe whose bar is intraday: only the
    storage and ``data sync`` know bars so far (docs/bar_sizes.md)."""
    if bar != DAILY.name:
        raise ValueError(
            f"{what} runs on daily bars only so far; this universe's [market] bar is {bar} "
            "(only 'pairscreen data sync' stores intraday bars yet; see docs/bar_sizes.md)"
        )
