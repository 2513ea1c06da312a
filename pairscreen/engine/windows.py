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

from pairscreen.contracts import BacktestBatch, CalendarWindow, PairPanel


def _spans(
    panel: PairPanel, rows: np.ndarray, days: list[int], start: np.ndarray, stop: np.ndarray
) -> list[dict[str, Any]]:
    """Per row of ``rows``: the span of ``days`` calendar days holding its closes
    ``start:stop`` (per row), its first and last day (None when it holds none); for intraday
    bars also the first and last bar's close time (``first_close``, ``last_close``)."""
    dates = np.asarray(panel.dates)
    used = stop > start
    first_at = dates[rows, np.where(used, start, 0)]
    last_at = dates[rows, np.where(used, stop - 1, 0)]
    first = first_at.astype("datetime64[D]").astype(str).tolist()
    last = last_at.astype("datetime64[D]").astype(str).tolist()
    spans = [
        {
            "days": d,
            "observations": n,
            "first_day": f if u else None,
            "last_day": la if u else None,
        }
        for d, n, f, la, u in zip(
            days, (stop - start).tolist(), first, last, used.tolist(), strict=True
        )
    ]
    if panel.bar.intraday:  # a daily window says what it always has
        for span, f, la, u in zip(
            spans, _moments(first_at), _moments(last_at), used.tolist(), strict=True
        ):
            span["first_close"] = f if u else None
            span["last_close"] = la if u else None
    return spans


def _moments(dates: np.ndarray) -> list[str]:
    """Bars' close times as every timestamp of the API is written
    (``2023-03-10T14:00:00+00:00``)."""
    return [f"{t}+00:00" for t in dates.astype("datetime64[s]").astype(str).tolist()]


def _window(panel: PairPanel, rows: np.ndarray, window: CalendarWindow) -> list[dict[str, Any]]:
    n = rows.shape[0]
    return _spans(
        panel, rows, [int(window.days)] * n, np.full(n, window.start), np.full(n, window.stop)
    )


def windows_of(panel: PairPanel, row: int, leg_a: BacktestBatch, j: int) -> dict[str, Any]:
    """The ``metric``, ``band`` and ``backtest`` windows of row ``row`` of ``panel``, with its
    backtest read from entry ``j`` of ``leg_a`` (both legs simulate the same days)."""
    return windows_of_rows(panel, np.array([row]), leg_a, np.array([j]))[0]


def windows_of_rows(
    panel: PairPanel, rows: np.ndarray, leg_a: BacktestBatch, entries: np.ndarray
) -> list[dict[str, Any]]:
    """:func:`windows_of` of every row of ``rows`` (entry ``entries[k]`` of ``leg_a`` for
    row ``rows[k]``), built column by column: the screen writes thousands at a time."""
    rows = np.asarray(rows, dtype=np.intp)
    entries = np.asarray(entries, dtype=np.intp)
    closes = np.asarray(leg_a.simulated_closes())[entries].astype(np.int64)
    history = np.asarray(leg_a.history_days)[entries].astype(np.int64).tolist()
    n_days = np.full(rows.shape[0], panel.n_days, dtype=np.int64)
    metric = _window(panel, rows, panel.metric_window)
    band = _window(panel, rows, panel.band_window)
    backtest = _spans(panel, rows, history, n_days - closes, n_days)
    return [
        {"metric": m, "band": b, "backtest": t}
        for m, b, t in zip(metric, band, backtest, strict=True)
    ]
