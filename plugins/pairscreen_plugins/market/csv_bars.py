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

A clean file (the common case: every row read, on the grid, each bar once) is read column
by column with numpy; any other is read again row by row, so that each row not understood
is named with its line. Both give the same bars, bit for bit.
"""

from __future__ import annotations

import csv
import io
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from pairscreen.contracts import Candles
from pairscreen.contracts.bars import BarSize
from pairscreen_plugins.market.csv_cells import (
    MILLISECONDS,
    PLAIN_NUMBER,
    SECONDS,
    WHOLE_NUMBER,
    CellError,
    close_time,
    close_value,
    volume_value,
)
from pairscreen_plugins.market.csv_layout import Layout, Unreadable, decode, layout
from pairscreen_plugins.market.csv_source import _Rows, _unreadable

if TYPE_CHECKING:
    import _csv

ISO_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


class CloseTime(datetime):
    """A bar's close time that prints as the files write it (``2023-03-10T09:00:00Z``), in
    the sentences naming a row."""

    def __str__(self) -> str:
        return self.strftime("%Y-%m-%dT%H:%M:%SZ")


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
        records = list(reader)
    except csv.Error as exc:
        return _no_bars(_unreadable(path, ticker, f"line {reader.line_num} is not CSV: {exc}"))
    clean = _clean_bars(records, columns, bar)
    if clean is not None:
        times, close_array, volume_array = clean
        rows = _Rows()  # nothing to count: every row was read and each bar given once
    else:  # read again row by row, to name each row not understood with its line
        again = csv.reader(io.StringIO(text, newline=""))
        next(again)
        rows = _read_bar_rows(again, columns, bar)
        if not rows.days and not rows.unparseable:
            return _no_bars(_unreadable(path, ticker, "has its header and no rows"))
        ordered = sorted(rows.days)
        times = np.array(
            [int(cast(datetime, moment).timestamp()) for moment in ordered], dtype=np.int64
        )  # the keys are close times
        close_array = np.array([rows.days[m][0] for m in ordered], dtype=np.float64)
        volume_array = np.array([rows.days[m][1] for m in ordered], dtype=np.float64)
    future_rows = times > until
    future = int(future_rows.sum())
    keep = ~future_rows & (times > after if after is not None else True)
    times, close_array, volume_array = times[keep], close_array[keep], volume_array[keep]
    return rows.candles(
        ticker,
        times.astype("datetime64[s]"),
        close_array,
        volume_array,
        volume_unit=volume_unit,
        future=future,
        origin=path.name,
    )


def _clean_bars(
    records: list[list[str]], columns: Layout, bar: BarSize
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The bars of a clean file, read column by column: every row has the header's fields,
    a time of the commonest forms (``2023-03-10T14:00:00Z``, or whole epoch seconds, or
    milliseconds), a plain positive close and a plain or empty volume, on the bar's grid,
    each bar once. None when any row is not so: then the rows are read one by one, and
    those not understood named with their lines (:func:`_read_bar_rows`), which gives the
    same bars for a clean file at about five times the cost."""
    rows = [r for r in records if r and not (len(r) == 1 and not r[0].strip())]
    if not rows or any(len(r) != columns.width for r in rows):
        return None
    stamps = [r[columns.day].strip() for r in rows]
    closes = [r[columns.close].strip() for r in rows]
    times: np.ndarray | None
    try:
        if all(ISO_UTC.fullmatch(t) for t in stamps):
            times = np.array([t[:-1] for t in stamps], dtype="datetime64[s]").astype(np.int64)
        elif all(WHOLE_NUMBER.fullmatch(t) for t in stamps):
            times = _epoch_seconds(np.array([int(t) for t in stamps], dtype=np.int64))
        else:
            return None
    except (ValueError, OverflowError):  # a day that is not of the calendar, and the like
        return None
    if times is None or not all(PLAIN_NUMBER.fullmatch(c) for c in closes):
        return None
    close = np.array(closes, dtype=np.float64)
    if columns.volume is None:
        volume = np.full(len(rows), np.nan)
    else:
        cells = [r[columns.volume].strip() for r in rows]
        if not all(not c or PLAIN_NUMBER.fullmatch(c) for c in cells):
            return None
        volume = np.array([c or "nan" for c in cells], dtype=np.float64)
        if ((volume < 0) | np.isinf(volume)).any():
            return None
    if not (np.isfinite(close) & (close > 0)).all() or (times % bar.seconds).any():
        return None
    order = np.argsort(times, kind="stable")
    times, close, volume = times[order], close[order], volume[order]
    if (np.diff(times) == 0).any():
        return None
    return times, close, volume


def _epoch_seconds(values: np.ndarray) -> np.ndarray | None:
    """Whole epoch seconds, or milliseconds of whole seconds (each range all through), as
    seconds; None otherwise."""
    if ((values >= SECONDS.start) & (values < SECONDS.stop)).all():
        return values
    in_ms = (values >= MILLISECONDS.start) & (values < MILLISECONDS.stop)
    if in_ms.all() and not (values % 1000).any():
        seconds: np.ndarray = values // 1000
        return seconds
    return None


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
        moment = CloseTime.fromtimestamp(seconds, UTC)
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
