"""Intraday bars from one ``csv`` file (a universe whose ``[market] bar`` is 4h, 1h or 15m).

The file is read as a daily one is (:mod:`~pairscreen_plugins.market.csv_layout`: UTF-8, a
header naming a ``timestamp`` or ``date`` column, ``close`` and optionally ``volume``), but
each row's time is a **bar close time** (:func:`~pairscreen_plugins.market.csv_cells.
close_time`: an ISO date-time with ``Z``, an offset or none (UTC), or epoch seconds or
milliseconds). The row stamped ``14:00Z`` in an hourly file is the bar of 13:00-14:00 UTC.

Every row is understood or named with its line: a time off the bar's UTC grid (``13:30Z`` in
an hourly file), a bar given again with other values, or a cell that cannot be read refuses
the asset (nothing of it is stored); a bar given again with the same values is stored once,
and a bar closing after ``until`` (unfinished at the service's clock) is left out; both are
counted.
"""

from __future__ import annotations

import csv
import io
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from pairscreen import Candles, RowIssues
from pairscreen.bar_size import BarSize
from pairscreen_plugins.market.csv_cells import CellError, close_time, close_value, volume_value
from pairscreen_plugins.market.csv_layout import Layout, Unreadable, decode, layout
from pairscreen_plugins.market.csv_source import _Rows, _unreadable

if TYPE_CHECKING:
    import _csv


def read_csv_bars(
    path: Path,
    ticker: str,
    bar: BarSize,
    *,
    after: int | None,
    until: int,
    volume_unit: str | None,
) -> Candles:
    """One file's bars closing after ``after`` and at or before ``until`` (epoch seconds),
    as :class:`Candles` whose dates are close times (``datetime64[s]``), volumes in the quote
    currency. A file or row that cannot be read is counted in ``issues``."""
    try:
        text = decode(path.read_bytes())
        reader = csv.reader(io.StringIO(text, newline=""))
        columns = layout(next(reader))
    except Unreadable as exc:
        return _no_bars(_unreadable(path, ticker, str(exc)))
    except OSError as exc:
        return _no_bars(_unreadable(path, ticker, f"cannot be read: {exc.strerror or exc}"))
    except csv.Error as exc:
        return _no_bars(_unreadable(path, ticker, f"line 1 is not CSV: {exc}"))
    if columns.volume is not None and volume_unit not in ("base", "quote"):
        raise ValueError(
            f"{path} has a volume column: declare its unit in [plugins.csv_source], "
            'volume_unit = "base" or "quote"'
        )
    try:
        rows = _read_bar_rows(reader, columns, bar)
    except csv.Error as exc:
        return _no_bars(_unreadable(path, ticker, f"line {reader.line_num} is not CSV: {exc}"))
    if not rows.days and not rows.unparseable:
        return _no_bars(_unreadable(path, ticker, "has its header and no rows"))
    future = 0
    kept: list[int] = []
    values: list[tuple[float, float]] = []
    for moment in sorted(rows.days):
        seconds = int(cast(datetime, moment).timestamp())  # the keys are close times
        if after is not None and seconds <= after:
            continue
        if seconds > until:
            future += 1
            continue
        kept.append(seconds)
        close, volume, _line = rows.days[moment]
        values.append((close, volume))
    close_array = np.array([c for c, _ in values], dtype=np.float64)
    volume_array = np.array([v for _, v in values], dtype=np.float64)
    if volume_unit == "base":
        volume_array = volume_array * close_array
    return Candles(
        ticker=ticker,
        dates=np.array(kept, dtype=np.int64).astype("datetime64[s]"),
        close=close_array,
        volume=volume_array,
        issues=RowIssues(
            future=future,
            duplicate=rows.duplicate,
            unparseable=rows.unparseable,
            conflicting=rows.conflicting,
            examples=tuple(rows.examples),
            origin=path.name,
        ),
    )


def _read_bar_rows(reader: _csv.Reader, columns: Layout, bar: BarSize) -> _Rows:
    """Every row after the header, keyed by its close time, or counted with its line."""
    rows = _Rows()
    for record in reader:
        line = reader.line_num
        if not record or (len(record) == 1 and not record[0].strip()):
            continue
        if len(record) != columns.width:
            rows.refuse(line, f" has {len(record)} fields, the header {columns.width}")
            continue
        try:
            seconds = close_time(record[columns.day])
            close = close_value(record[columns.close])
            volume = math.nan if columns.volume is None else volume_value(record[columns.volume])
        except CellError as exc:
            rows.refuse(line, f": {exc}")
            continue
        moment = datetime.fromtimestamp(seconds, UTC)
        if seconds % bar.seconds:
            rows.refuse(
                line,
                f": {record[columns.day].strip()} is off the {bar.name} grid (bars close "
                f"every {bar.name} from 00:00 UTC)",
            )
            continue
        rows.add(line, moment, close, volume)
    return rows


def _no_bars(candles: Candles) -> Candles:
    """An unreadable file's empty answer, its dates at the bars' resolution."""
    return Candles(
        candles.ticker,
        np.array([], dtype="datetime64[s]"),
        candles.close,
        candles.volume,
        candles.issues,
    )
