"""The calendar windows behind a pair's numbers, as the snapshot and the screen report them.

Every window is a calendar span ending at (or, for the band, the day before) the pair's last
common close; what a reader cannot infer from the span alone is which closes fell inside it.
For each window this gives its span in days, the first and last day of the closes used and
how many there were: for two assets with a close every day the count equals the span, for a
crypto x equity pair it is the exchange's trading days inside the span.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pairscreen.types import BacktestBatch, CalendarWindow, PairPanel


def _span(panel: PairPanel, row: int, days: int, start: int, stop: int) -> dict[str, Any]:
    used = np.asarray(panel.dates[row, start:stop]).astype("datetime64[D]")
    return {
        "days": int(days),
        "observations": int(stop - start),
        "first_day": str(used[0]) if used.size else None,
        "last_day": str(used[-1]) if used.size else None,
    }


def _window(panel: PairPanel, row: int, window: CalendarWindow) -> dict[str, Any]:
    return _span(panel, row, window.days, window.start, window.stop)


def windows_of(panel: PairPanel, row: int, leg_a: BacktestBatch, j: int) -> dict[str, Any]:
    """The ``metric``, ``band`` and ``backtest`` windows of row ``row`` of ``panel``, with its
    backtest read from entry ``j`` of ``leg_a`` (both legs simulate the same days)."""
    closes = int(leg_a.simulated_closes()[j])
    return {
        "metric": _window(panel, row, panel.metric_window),
        "band": _window(panel, row, panel.band_window),
        "backtest": _span(
            panel, row, int(leg_a.history_days[j]), panel.n_days - closes, panel.n_days
        ),
    }
