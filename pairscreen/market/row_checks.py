"""What a sync checks in the rows a market source returns before any is stored.

Any source, a plugin's too, may return days beyond the last closed one, a date twice, rows
out of order or closes that are not positive numbers. :func:`checked` keeps the usable rows
and counts the others in :class:`~pairscreen.types.RowIssues`, added to what the source
counted itself, so ``data sync`` can name them per asset. :func:`big_moves` finds the
day-over-day moves above the asset class's limit: stored, but named as a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from pairscreen.types import Candles, RowIssues


def checked(candles: Candles, until: date) -> Candles:
    """``candles`` sorted by day with one row per day (the later row of a repeated day),
    up to ``until``, with positive finite closes; what was left out is counted."""
    dates = np.asarray(candles.dates, dtype="datetime64[D]")
    close = np.asarray(candles.close, dtype=np.float64)
    volume = np.asarray(candles.volume, dtype=np.float64)
    usable = np.isfinite(close) & (close > 0) & ~np.isnat(dates)
    unparseable = int((~usable).sum())
    dates, close, volume = dates[usable], close[usable], volume[usable]
    future = dates > np.datetime64(until, "D")
    n_future = int(future.sum())
    dates, close, volume = dates[~future], close[~future], volume[~future]
    # The last row of each day wins (a later correction), in day order.
    order = np.argsort(dates, kind="stable")
    dates, close, volume = dates[order], close[order], volume[order]
    last_of_day = np.ones(len(dates), dtype=bool)
    if len(dates) > 1:
        last_of_day[:-1] = dates[1:] != dates[:-1]
    n_duplicate = int((~last_of_day).sum())
    volume = np.where(np.isfinite(volume) & (volume >= 0), volume, np.nan)  # unknown, not 0
    return Candles(
        candles.ticker,
        dates[last_of_day],
        close[last_of_day],
        volume[last_of_day],
        candles.issues + RowIssues(n_future, n_duplicate, unparseable),
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


def big_moves(
    ticker: str, close: np.ndarray, dates: np.ndarray, limit_pct: float
) -> BigMoves | None:
    """The moves from one close to the next whose size (either way, ``|close[i] / close[i - 1]
    - 1|``) is above ``limit_pct`` percent; None when none is."""
    if len(close) < 2:
        return None
    size = np.abs(close[1:] / close[:-1] - 1.0) * 100.0
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
