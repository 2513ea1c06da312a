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

__all__ = ["BAR_SIZES", "DAILY", "BarSize", "bar_size", "days_between"]

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

    @property
    def unit(self) -> str:
        """numpy's datetime unit of one bar (``D``, ``4h``, ``h``, ``15m``): the engine puts
        its dates on it, so that the difference of two close times counts bars."""
        if not self.intraday:
            return "D"
        if self.seconds % 3600 == 0:
            hours = self.seconds // 3600
            return "h" if hours == 1 else f"{hours}h"
        return f"{self.seconds // 60}m"

    @property
    def dtype(self) -> np.dtype:
        """``datetime64`` at :attr:`unit`."""
        return np.dtype(f"datetime64[{self.unit}]")

    def bars(self, days: int) -> int:
        """``days`` days of this size's bars: a span of time counted in bars."""
        return days * self.per_day

    def duration(self, bars: int) -> np.timedelta64:
        """``bars`` bars of this size as a ``timedelta64`` (in days for daily bars)."""
        if not self.intraday:
            return np.timedelta64(bars, "D")
        return np.timedelta64(bars * self.seconds, "s")

    def on_grid(self, close_times: np.ndarray) -> np.ndarray:
        """Which close times (epoch seconds, int64) fall on this size's UTC grid."""
        on: np.ndarray = close_times % self.seconds == 0
        return on

    def last_closed(self, now: datetime) -> int:
        """The close time (epoch seconds) of the last bar closed at ``now``: a bar closing
        exactly at ``now`` has closed."""
        seconds = int(now.astimezone(UTC).timestamp())
        return seconds - seconds % self.seconds


def days_between(later: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """``later - earlier`` in days (float) for ``datetime64`` arrays at any unit: exactly
    the whole days of a daily calendar, fractions of a day between intraday bars."""
    delta = np.asarray(later) - np.asarray(earlier)
    if delta.dtype == np.dtype("timedelta64[D]"):
        days: np.ndarray = delta.astype(float)
        return days
    seconds: np.ndarray = delta.astype("timedelta64[s]").astype(float)
    return seconds / DAY_SECONDS


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
    """Refuse, in one line, to run ``what`` on a universe whose bar is intraday: a part
    that does not handle bars yet (docs/bar_sizes.md says which do)."""
    if bar != DAILY.name:
        raise ValueError(
            f"{what} runs on daily bars only so far; this universe's [market] bar is {bar} "
            "(the sync, 'screen run', /pair and its chart handle bars; see docs/bar_sizes.md)"
        )
