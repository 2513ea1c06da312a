"""What a sync checks in the bars a market source returns, before any is stored.

The daily rules of :mod:`pairscreen.market.row_checks`, applied per bar: rows are sorted; a
bar closing after the last closed bar (unfinished, or not closed yet) is left out and
counted; a bar repeated with the same values is stored once; a close that is not a finite
positive number, a close time off the bar's UTC grid, or a bar given twice with different
values refuses the asset (``RowIssues.refuses``), since storing the rest would be a history
with rows left out or chosen between. A source that read its rows from a file (``csv``)
names their lines itself; what reaches here from it is already on the grid and unique.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pairscreen.contracts import Candles
from pairscreen.contracts.assets import ROW_EXAMPLES
from pairscreen.contracts.bars import BarSize
from pairscreen.market.bar_store import as_bar_candles, bar_times
from pairscreen.market.row_checks import settled


def iso_time(epoch_seconds: int) -> str:
    """``2023-12-31T23:00:00Z``: a close time as a person reads it."""
    return f"{np.datetime64(int(epoch_seconds), 's')}Z"


def checked_bars(candles: Candles, bar: BarSize, until: int) -> Candles:
    """``candles`` sorted by close time with one row per bar on ``bar``'s grid, closing at
    or before ``until`` (epoch seconds), with positive finite closes; what was left out or
    could not be used is counted and its first rows named."""
    dates = np.asarray(candles.dates)
    valid_time = ~np.isnat(dates) if len(dates) else np.ones(0, dtype=bool)
    times = bar_times(candles)
    close = np.asarray(candles.close, dtype=np.float64)
    volume = np.asarray(candles.volume, dtype=np.float64)
    examples: list[str] = []

    def name(rows: np.ndarray, why: Callable[[int], str]) -> None:
        for i in rows[: max(0, ROW_EXAMPLES - len(examples))].tolist():
            examples.append(f"row {i + 1} of the source's answer: {why(i)}")

    bad_close = ~(np.isfinite(close) & (close > 0)) | ~valid_time
    name(
        np.flatnonzero(bad_close),
        lambda i: f"close {float(close[i])!r} is not a finite positive number",
    )
    off_grid = ~bad_close & ~bar.on_grid(times)
    name(
        np.flatnonzero(off_grid),
        lambda i: f"{iso_time(times[i])} is not a {bar.name} close time on the UTC grid",
    )
    usable = ~bad_close & ~off_grid
    unparseable = int((~usable).sum())
    rows = settled(times[usable], close[usable], volume[usable], until)
    examples += rows.conflict_examples(
        lambda i: f"the bar closing {iso_time(rows.stamps[i])}", ROW_EXAMPLES - len(examples)
    )
    found = rows.issues(unparseable, examples)
    last = rows.last
    out = as_bar_candles(candles.ticker, rows.stamps[last], rows.close[last], rows.volume[last])
    return Candles(out.ticker, out.dates, out.close, out.volume, candles.issues + found)
