"""Range metrics of the filter window ``W``: width, alternating touches, trend.

The touches count is pairscan-rmr's state machine (a run of low-side excursions counts once;
a side's counter moves only after the series touched the other side), vectorised: when the
5th percentile is below the 95th a value can touch only one side, so a touch counts exactly
when it differs from the last side touched before it: among a row's touched days taken in
order, the first and every one whose side changed. Rows whose two
thresholds coincide (a window at least 90 % constant) can touch both sides at once; there the
machine toggles and is run as written, row by row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins._percentiles import sorted_percentiles, sorted_rows

TOUCH_PERCENTILES = (5.0, 95.0)
_NONE, _LOW, _HIGH = 0, 1, 2
_BLOCK = 1024  # pairs per block: keeps the day-by-day temporaries small


def sorted_window(panel: PairPanel) -> np.ndarray:
    """``W``'s rows sorted (NaN last), cached on the panel: its percentiles and extremes."""
    return panel.cached("window_sorted", lambda: sorted_rows(panel.window))


def window_thresholds(panel: PairPanel) -> np.ndarray:
    """p5 and p95 of ``W`` itself per pair, shape (2, pairs), as ``np.percentile`` gives
    them; cached on the panel."""
    return panel.cached(
        "window_p5_p95", lambda: sorted_percentiles(sorted_window(panel), TOUCH_PERCENTILES)
    )


def window_range(panel: PairPanel) -> np.ndarray:
    """``max - min`` of each row of ``W`` (NaN for a row holding one), from its sort."""
    ordered = sorted_window(panel)
    if ordered.shape[1] == 0:
        return np.full(ordered.shape[0], np.nan)
    # A NaN sorts last: the difference is NaN, as max - min gives it.
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, ordered[:, -1] - ordered[:, 0])


def alternating_touches(
    series: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Alternating low/high touch counts per row of ``series`` against per-row thresholds."""
    x = np.asarray(series, dtype=float)
    low_count = np.empty(x.shape[0], dtype=np.int64)
    high_count = np.empty(x.shape[0], dtype=np.int64)
    for start in range(0, x.shape[0], _BLOCK):
        rows = slice(start, start + _BLOCK)
        low_count[rows], high_count[rows] = _touches_block(x[rows], low[rows], high[rows])
    for i in np.flatnonzero(~(low < high)):
        low_count[i], high_count[i] = _touches_one(x[i], float(low[i]), float(high[i]))
    return low_count, high_count


def _touches_block(
    x: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    rows, days = x.shape
    side = np.less_equal(x, low[:, None]).view(np.uint8)  # _LOW where at or below ``low``
    side += np.greater_equal(x, high[:, None]).view(np.uint8) << 1  # _HIGH at or above
    # The touched days in row order; a touch counts when it is its row's first or its side
    # differs from the previous touch's (a forward fill of the last side, without the fill).
    at = np.flatnonzero(side)
    touched = side.ravel()[at]
    row = at // days if days else at
    counts = np.empty(at.size, dtype=bool)
    counts[:1] = True
    np.not_equal(touched[1:], touched[:-1], out=counts[1:])
    counts[1:] |= row[1:] != row[:-1]
    low_count = np.bincount(row[counts & (touched == _LOW)], minlength=rows)
    high_count = np.bincount(row[counts & (touched == _HIGH)], minlength=rows)
    return low_count, high_count


def _touches_one(row: np.ndarray, low: float, high: float) -> tuple[int, int]:
    low_count = high_count = 0
    last = _NONE
    for value in row:
        if value <= low and last != _LOW:
            low_count += 1
            last = _LOW
        elif value >= high and last != _HIGH:
            high_count += 1
            last = _HIGH
    return low_count, high_count


def trend_slope(series: np.ndarray, days_back: np.ndarray | None = None) -> np.ndarray:
    """Least-squares slope of each row on its calendar day (log units per day).

    ``days_back`` gives each column's calendar days before the last one; None (or one close
    every day) is the day index 0..n-1.
    """
    y = np.asarray(series, dtype=float)
    n = y.shape[1]
    if days_back is None or bool((np.diff(days_back) == -1).all()):
        t = np.arange(n) - (n - 1) / 2.0
    else:
        day = -np.asarray(days_back, dtype=float)
        t = day - day.mean()
    centred = y - y.mean(axis=1, keepdims=True)
    # A row-wise sum, not ``centred @ t``: BLAS blocks a matrix-vector product by the number
    # of rows, so its last bits would depend on how the screen is split into chunks.
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, (centred * t).sum(axis=1) / (t @ t))


@dataclass(frozen=True)
class RangeStatsMetric:
    """``range_width``(``_pct``) and ``touches_low``/``touches_high`` of W."""

    name: str = "range_stats"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "range_width",
            description="max - min of W in log units; null below 541 days of history.",
            nullable=True,
            needs_full_window=True,
        ),
        MetricField(
            "range_width_pct",
            description="100 x range_width.",
            nullable=True,
            needs_full_window=True,
        ),
        MetricField(
            "touches_low", type="integer", description="Alternating touches of W's 5th pct."
        ),
        MetricField(
            "touches_high", type="integer", description="Alternating touches of W's 95th pct."
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        w = panel.window
        low, high = window_thresholds(panel)
        touches_low, touches_high = alternating_touches(w, low, high)
        # Null below a full window: the same 541-day rule as p15/p85 (openapi SnapshotMetrics).
        width = np.where(panel.has_full_window, window_range(panel), np.nan)
        return {
            "range_width": width,
            "range_width_pct": 100.0 * width,
            "touches_low": touches_low,
            "touches_high": touches_high,
        }


@dataclass(frozen=True)
class TrendMetric:
    """``trend_slope`` of ``W``: a metric of its own so that the screen, whose filter does
    not read it, computes it for its survivors only."""

    name: str = "trend"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "trend_slope",
            description="Least-squares slope of W on the calendar day, log units per day.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        offsets = panel.day_offsets[panel.metric_window.columns]
        return {"trend_slope": trend_slope(panel.window, offsets)}


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The range metric and the trend."""
    return [RangeStatsMetric(), TrendMetric()]
