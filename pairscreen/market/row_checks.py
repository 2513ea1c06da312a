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

from collections.abc import Callable
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
        f"row {i + 1} of the source's answer ({dates[i]}): close {float(close[i])!r} is not a "
        "finite positive number"
        for i in np.flatnonzero(~usable)[:ROW_EXAMPLES].tolist()
    ]
    unparseable = int((~usable).sum())
    rows = settled(dates[usable], close[usable], volume[usable], np.datetime64(until, "D"))
    examples += rows.conflict_examples(lambda i: f"{rows.stamps[i]}", ROW_EXAMPLES - len(examples))
    found = rows.issues(unparseable, examples)
    last = rows.last
    return Candles(
        candles.ticker,
        rows.stamps[last],
        rows.close[last],
        rows.volume[last],
        candles.issues + found,
    )


@dataclass(frozen=True)
class SettledRows:
    """A source's usable rows sorted by their stamp (a day, or a bar's close time), without
    those stamped after the last closed one. ``last`` marks the row kept for each stamp; a
    stamp given again with the same values is a harmless repeat (``duplicate``), with other
    values a conflict (``conflicting``: the index of its first row; the next row is the
    other)."""

    stamps: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # NaN where unknown
    last: np.ndarray
    future: int
    duplicate: int
    conflicting: np.ndarray

    def conflict_examples(self, label: Callable[[int], str], room: int) -> list[str]:
        """Up to ``room`` sentences naming a conflict each, the stamp written by ``label``."""
        out = []
        for i in self.conflicting[: max(0, room)].tolist():
            what, values = (
                ("closes", self.close)
                if self.close[i] != self.close[i + 1]
                else ("volumes", self.volume)
            )
            first, second = float(values[i]), float(values[i + 1])  # not np.float64(...)
            out.append(f"{label(i)} is given twice, with {what} {first!r} and {second!r}")
        return out

    def issues(self, unparseable: int, examples: list[str]) -> RowIssues:
        return RowIssues(
            future=self.future,
            duplicate=self.duplicate,
            unparseable=unparseable,
            conflicting=len(self.conflicting),
            examples=tuple(examples),
        )


def settled(
    stamps: np.ndarray, close: np.ndarray, volume: np.ndarray, until: np.generic | int
) -> SettledRows:
    """The rows up to ``until`` sorted by stamp, their repeats and conflicts found (the
    daily and the bar checks share this: a repeat is judged against the next row)."""
    future = stamps > until
    stamps, close, volume = stamps[~future], close[~future], volume[~future]
    volume = np.where(np.isfinite(volume) & (volume >= 0), volume, np.nan)  # unknown, not 0
    order = np.argsort(stamps, kind="stable")
    stamps, close, volume = stamps[order], close[order], volume[order]
    last = np.ones(len(stamps), dtype=bool)
    if len(stamps) > 1:
        last[:-1] = stamps[1:] != stamps[:-1]
    repeat = np.flatnonzero(~last)
    same = (close[repeat] == close[repeat + 1]) & (
        (volume[repeat] == volume[repeat + 1])
        | (np.isnan(volume[repeat]) & np.isnan(volume[repeat + 1]))
    )
    return SettledRows(
        stamps, close, volume, last, int(future.sum()), int(same.sum()), repeat[~same]
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
