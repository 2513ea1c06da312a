"""From per-asset candles to :class:`PairPanel` s: align by date, cut, group by calendar.

A pair's rows are the inner join of its legs' dates. A pair is cut to a calendar span ending
at its last common close (:func:`span_start`), and pairs are grouped so that every row of a
panel has its closes on the same days counted back from its own last close: every panel is a
dense ``(pairs, days)`` array, every calendar window is the same columns in every row, and no
metric ever sees padding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Candles, PairPanel
from pairscreen.contracts.bars import DAILY, BarSize


@dataclass(frozen=True)
class AlignedPair:
    a: str
    b: str
    dates: np.ndarray
    close_a: np.ndarray
    close_b: np.ndarray
    volume_a: np.ndarray
    volume_b: np.ndarray
    bar: BarSize = DAILY  # intraday bars: ``dates`` are close times at the bar's unit

    @property
    def n_days(self) -> int:
        """The number of common closes."""
        return int(self.dates.shape[0])

    @property
    def calendar_days(self) -> int:
        """Calendar days from the first common close to the last, both included (the number
        of closes for two assets with a close every day)."""
        return history_days(self.dates, self.bar)


def history_days(dates: np.ndarray, bar: BarSize = DAILY) -> int:
    """Calendar days from the first of ``dates`` to the last, both included (0 when empty);
    for intraday bars, the bars from the first to the last (both counted) in whole days, as
    the screen's calendar matrix counts them."""
    if dates.shape[0] == 0:
        return 0
    if bar.intraday:
        bars = int((dates[-1] - dates[0]).astype(f"timedelta64[{bar.unit}]").astype(np.int64))
        return (bars + 1) // bar.per_day
    return int((dates[-1] - dates[0]).astype("timedelta64[D]").astype(np.int64)) + 1


def span_start(dates: np.ndarray, span_days: int, bar: BarSize = DAILY) -> int:
    """The index of the first close a panel of the last ``span_days`` calendar days keeps.

    That is the first close inside the span (on or after ``last - span_days + 1``) when one
    falls on the span's first day; otherwise the last close before the span, so that the panel
    still shows that the history covers the whole span (a weekend can start a span of a
    pair mixing calendars). With a close every day it is ``n - span_days`` (or 0). For
    intraday bars the span is ``span_days * bars per day`` bars.
    """
    if dates.shape[0] == 0:
        return 0
    if bar.intraday:
        bars = dates.astype(bar.dtype)
        first_bar = bars[-1] - bar.duration(bar.bars(span_days) - 1)
        return max(int(np.searchsorted(bars, first_bar, side="right")) - 1, 0)
    days = as_days(dates)
    first_day = days[-1] - np.timedelta64(span_days - 1, "D")
    k = int(np.searchsorted(days, first_day, side="right")) - 1
    return max(k, 0)


def calendar_key(dates: np.ndarray, bar: BarSize = DAILY) -> bytes:
    """The days of ``dates`` counted back from the last one (the bars, at an intraday
    ``bar``): pairs with equal keys share every calendar window's columns."""
    if bar.intraday:
        bars = dates.astype(bar.dtype)
        back: np.ndarray = (bars[-1] - bars).astype(np.int64)
        return back.tobytes()
    days = as_days(dates)
    offsets: np.ndarray = (days[-1] - days).astype(np.int64)
    return offsets.tobytes()


def as_days(dates: np.ndarray) -> np.ndarray:
    """``dates`` as ``datetime64[D]``: the array itself when it already is (the candles'
    dates are), so the evaluation's thousands of cuts a day do not copy each pair's dates."""
    return dates if dates.dtype == _DAY else dates.astype(_DAY)


_DAY = np.dtype("datetime64[D]")


def align(candles_a: Candles, candles_b: Candles, bar: BarSize = DAILY) -> AlignedPair:
    """The days (the bars, at an intraday ``bar``) both legs have a candle, oldest first."""
    dates_a, dates_b = candles_a.dates, candles_b.dates
    if bar.intraday:
        dates_a, dates_b = dates_a.astype(bar.dtype), dates_b.astype(bar.dtype)
    dates, ia, ib = np.intersect1d(dates_a, dates_b, assume_unique=True, return_indices=True)
    return AlignedPair(
        a=candles_a.ticker,
        b=candles_b.ticker,
        dates=dates,
        close_a=candles_a.close[ia],
        close_b=candles_b.close[ib],
        volume_a=candles_a.volume[ia],
        volume_b=candles_b.volume[ib],
        bar=bar,
    )


def panel_of(pairs: Sequence[AlignedPair], days: int, window_days: int) -> PairPanel:
    """Stack the last ``days`` closes of pairs that all have at least that many (on the same
    days counted back from each pair's last close, see :class:`PairPanel`)."""
    return PairPanel(
        a=tuple(p.a for p in pairs),
        b=tuple(p.b for p in pairs),
        dates=np.stack([p.dates[-days:] for p in pairs]),
        close_a=np.stack([p.close_a[-days:] for p in pairs]),
        close_b=np.stack([p.close_b[-days:] for p in pairs]),
        volume_a=np.stack([p.volume_a[-days:] for p in pairs]),
        volume_b=np.stack([p.volume_b[-days:] for p in pairs]),
        window_days=window_days,
        bar=pairs[0].bar if pairs else DAILY,
    )


def span_panel(pair: AlignedPair, span_days: int, window_days: int) -> PairPanel:
    """One pair as a panel of its last ``span_days`` calendar days (see :func:`span_start`)."""
    start = span_start(pair.dates, span_days, pair.bar)
    return panel_of([pair], pair.n_days - start, window_days)


def group_by_history(
    pairs: Sequence[AlignedPair], span_days: int, window_days: int
) -> list[tuple[list[int], PairPanel]]:
    """Panels of the pairs' last ``span_days`` calendar days, one per calendar (pairs whose
    closes fall on the same days counted back from their last close), with row indices;
    the longest first."""
    groups: dict[bytes, list[int]] = defaultdict(list)
    cuts: list[int] = []
    for i, p in enumerate(pairs):
        start = span_start(p.dates, span_days, p.bar)
        cuts.append(p.n_days - start)
        groups[calendar_key(p.dates[start:], p.bar)].append(i)
    ordered = sorted(groups.values(), key=lambda idx: (-cuts[idx[0]], idx[0]))
    return [(idx, panel_of([pairs[i] for i in idx], cuts[idx[0]], window_days)) for idx in ordered]
