"""What a sync checks in the rows a market source returns before any is stored.

Any source, a plugin's too, may return days beyond the last closed one, a date twice, rows
out of order or closes that are not positive numbers. :func:`checked` sorts the rows, leaves
out the days not closed yet and a day repeated with the same values, and counts everything
else it finds in :class:`~pairscreen.contracts.RowIssues`, added to what the source counted
itself: a close that is not a positive number, a missing date or a day given twice with
different closes refuses the asset (``RowIssues.refuses``), since storing the rest would be a
history with rows left out or chosen between. :func:`big_moves` finds the day-over-day moves
above the asset class's limit that a sync stores but names as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from pairscreen.contracts import Candles, RowIssues
from pairscreen.contracts.assets import ROW_EXAMPLES


def checked(candles: Candles, until: date) -> Candles:
    """``candles`` sorted by day with one row per day, up to ``until``, with positive finite
    closes; what was left out or could not be used is counted and its first rows named."""
    dates = np.asarray(candles.dates, dtype="datetime64[D]")
    close = np.asarray(candles.close, dtype=np.float64)
    volume = np.asarray(candles.volume, dtype=np.float64)
    usable = np.isfinite(close) & (close > 0) & ~np.isnat(dates)
    examples = [
        f"row {i + 1} of the source's answer ({dates[i]}): close {close[i]!r} is not a finite "
        "positive number"
        for i in np.flatnonzero(~usable)[:ROW_EXAMPLES].tolist()
    ]
    unparseable = int((~usable).sum())
    dates, close, volume = dates[usable], close[usable], volume[usable]
    future = dates > np.datetime64(until, "D")
    n_future = int(future.sum())
    dates, close, volume = dates[~future], close[~future], volume[~future]
    volume = np.where(np.isfinite(volume) & (volume >= 0), volume, np.nan)  # unknown, not 0
    order = np.argsort(dates, kind="stable")
    dates, close, volume = dates[order], close[order], volume[order]
    last_of_day = np.ones(len(dates), dtype=bool)
    if len(dates) > 1:
        last_of_day[:-1] = dates[1:] != dates[:-1]
    # A repeated day is harmless when it repeats the next row's values exactly.
    repeat = np.flatnonzero(~last_of_day)
    same = (close[repeat] == close[repeat + 1]) & (
        (volume[repeat] == volume[repeat + 1])
        | (np.isnan(volume[repeat]) & np.isnan(volume[repeat + 1]))
    )
    differing = repeat[~same]
    examples += [
        f"{dates[i]} is given twice, with closes {close[i]!r} and {close[i + 1]!r}"
        if close[i] != close[i + 1]
        else f"{dates[i]} is given twice, with volumes {volume[i]!r} and {volume[i + 1]!r}"
        for i in differing[: max(0, ROW_EXAMPLES - len(examples))].tolist()
    ]
    found = RowIssues(
        future=n_future,
        duplicate=int(same.sum()),
        unparseable=unparseable,
        conflicting=len(differing),
        examples=tuple(examples),
    )
    return Candles(
        candles.ticker,
        dates[last_of_day],
        close[last_of_day],
        volume[last_of_day],
        candles.issues + found,
    )


@dataclass(frozen=True)
class BigMoves:
    """The day-over-day moves of one asset above its limit: how many, and the largest."""

    ticker: str
    count: int
    limit_pct: float
    day: date  # the day of the largest move
    before: float  # the close the day before it
    after: float  # the close of that day

    @property
    def move_pct(self) -> float:
        return (self.after / self.before - 1.0) * 100.0

    def describe(self) -> str:
        more = f" and {self.count - 1} more" if self.count > 1 else ""
        return (
            f"{self.ticker}: close moved {self.move_pct:+.1f} % on {self.day} "
            f"({self.before:.10g} -> {self.after:.10g}){more}, above its limit of "
            f"{self.limit_pct:g} %; stored"
        )


def move_sizes_pct(close: np.ndarray) -> np.ndarray:
    """Each day's move from the close before, either way, in percent:
    ``|close[i] / close[i - 1] - 1| * 100`` for every close after the first."""
    sizes: np.ndarray = np.abs(close[1:] / close[:-1] - 1.0) * 100.0
    return sizes


def big_moves(
    ticker: str,
    close: np.ndarray,
    dates: np.ndarray,
    limit_pct: float,
    skip: frozenset[date] = frozenset(),
) -> BigMoves | None:
    """The moves from one close to the next whose size (either way, ``|close[i] / close[i - 1]
    - 1|``) is above ``limit_pct`` percent, but for those into a day of ``skip`` (reported
    otherwise); None when none is."""
    if len(close) < 2:
        return None
    size = move_sizes_pct(close)
    if skip:
        into = np.array([date.fromisoformat(str(d)) in skip for d in dates[1:]], dtype=bool)
        size = np.where(into, 0.0, size)
    above = np.flatnonzero(size > limit_pct)
    if not len(above):
        return None
    worst = int(above[np.argmax(size[above])])
    return BigMoves(
        ticker=ticker,
        count=len(above),
        limit_pct=limit_pct,
        day=date.fromisoformat(str(dates[worst + 1])),
        before=float(close[worst]),
        after=float(close[worst + 1]),
    )
