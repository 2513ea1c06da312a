"""Stored history against what the source says now: conflicts and changes.

A sync re-reads an overlap of every asset's stored days (the last :data:`OVERLAP_DAYS`, or
all of them with ``--verify``). Any difference there is a conflict: a close that differs by
more than :data:`CLOSE_TOLERANCE` (relative), a stored day the source no longer has, or a day
inside the stored span the source has and the database lacks. Appending after a conflict
would splice two histories into one series, so nothing is written for that asset until an
operator chooses (``data sync --replace``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from pairscreen.contracts import Candles

OVERLAP_DAYS = 7  # stored days of each asset a sync reads again and compares
CLOSE_TOLERANCE = 1e-9  # relative difference of two closes still counted as equal


@dataclass(frozen=True)
class Conflict:
    """The first day where the stored history and the source disagree, and how many do."""

    ticker: str
    day: date
    stored: float | None  # None: the database has no close that day
    source: float | None  # None: the source no longer has that day
    days: int  # conflicting days in the compared span

    def describe(self) -> str:
        stored = "no close" if self.stored is None else f"close {self.stored:.10g}"
        source = "no longer has that day" if self.source is None else f"{self.source:.10g}"
        if self.stored is None:
            text = f"{self.ticker}: {self.day}: the source has {source}, the database no close"
        else:
            text = f"{self.ticker}: {self.day}: stored {stored}, the source {source}"
        more = f" (first of {self.days} conflicting days)" if self.days > 1 else ""
        return f"{text}{more}; nothing written for {self.ticker}"


@dataclass(frozen=True)
class Change:
    """How many stored days a replacement changes (close, volume, added or removed), from
    which day."""

    ticker: str
    days: int
    first: date | None

    def describe(self) -> str:
        if not self.days:
            return f"{self.ticker}: the source's history is the stored one; nothing changed"
        return (
            f"{self.ticker}: adopted the source's history: {self.days} days changed from "
            f"{self.first}"
        )


def _between(c: Candles, start: date, end: date) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = (c.dates >= np.datetime64(start, "D")) & (c.dates <= np.datetime64(end, "D"))
    return c.dates[keep], c.close[keep], c.volume[keep]


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise equality within :data:`CLOSE_TOLERANCE`; two NaNs (unknown) are equal."""
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= CLOSE_TOLERANCE * np.maximum(np.abs(a), np.abs(b))
    same: np.ndarray = close | (np.isnan(a) & np.isnan(b))
    return same


def _differing_days(
    stored: tuple[np.ndarray, np.ndarray, np.ndarray],
    source: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    volumes: bool,
) -> np.ndarray:
    s_days, s_close, s_volume = stored
    f_days, f_close, f_volume = source
    common, si, fi = np.intersect1d(s_days, f_days, assume_unique=True, return_indices=True)
    equal = _same(s_close[si], f_close[fi])
    if volumes:
        equal &= _same(s_volume[si], f_volume[fi])
    one_side = np.setxor1d(s_days, f_days, assume_unique=True)
    return np.union1d(common[~equal], one_side)


def first_conflict(stored: Candles, source: Candles, start: date, end: date) -> Conflict | None:
    """The first disagreement on closes between ``start`` and ``end`` (inclusive)."""
    s = _between(stored, start, end)
    f = _between(source, start, end)
    bad = _differing_days(s, f, volumes=False)
    if not len(bad):
        return None
    day = bad[0]
    s_at = np.flatnonzero(s[0] == day)
    f_at = np.flatnonzero(f[0] == day)
    return Conflict(
        ticker=stored.ticker,
        day=date.fromisoformat(str(day)),
        stored=float(s[1][s_at[0]]) if len(s_at) else None,
        source=float(f[1][f_at[0]]) if len(f_at) else None,
        days=len(bad),
    )


def change(stored: Candles, source: Candles) -> Change:
    """What replacing ``stored`` with ``source`` changes up to the last stored day: every
    day whose close or volume differs, that is removed or that is added (days after it are
    new, not changed)."""
    whole = (stored.dates, stored.close, stored.volume)
    upto = source.dates <= stored.dates[-1] if len(stored.dates) else source.dates < source.dates
    new = (source.dates[upto], source.close[upto], source.volume[upto])
    bad = _differing_days(whole, new, volumes=True)
    first = date.fromisoformat(str(bad[0])) if len(bad) else None
    return Change(stored.ticker, len(bad), first)
