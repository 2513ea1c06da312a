"""Market source ``csv``: daily candles from a folder of ``<symbol>.csv`` files.

Options (the ``[plugins.csv_source]`` table; ``[market]`` for one more release): ``path``, the
folder (relative paths are resolved against the universe file), ``close_time`` (when the daily
close is observed, for the peg checks) and ``volume_unit``, what the ``volume`` column counts:
``"base"`` (units of the asset, as exchanges such as Binance publish it) or ``"quote"`` (the
quote currency). pairscreen stores quote volume, so a base volume is multiplied by that day's
close. A file with a volume column and no declared ``volume_unit`` is an error: guessing the
unit would make every volume wrong by the price. A file without the column, or an empty cell,
is an unknown volume (NaN, served as ``null``), never 0: a made-up zero would read as a market
nobody trades.

A file is UTF-8 (with or without a byte-order mark, any line ends) and its first line names
the columns (:mod:`~pairscreen_plugins.market.csv_layout`): ``date`` (an ISO day; a timestamp
such as ``2025-01-31T00:00:00Z`` counts as its UTC day) or ``timestamp`` (seconds or
milliseconds since 1970, told apart by size), ``close`` (or Yahoo's ``Adj Close``, which wins
over its ``Close``), optionally ``volume``; column order is free, other columns are ignored.

Every row is understood or named. A row with another number of fields than the header, a
date, close or volume that cannot be read (:mod:`~pairscreen_plugins.market.csv_cells`), or a
day given again with other values is counted in :class:`~pairscreen.RowIssues` with its line,
and ``data sync`` then stores nothing of that asset; so does a file that cannot be read at
all (empty, not UTF-8, no usable header). A day given again with the same values is stored
once, and a row dated after ``until`` (not closed yet) is left out; both are counted. Rows
come back sorted by day. Nothing is logged per row: the counts and the first lines go to the
sync's report. A missing file logs a warning and skips that asset.

Reads are incremental in effect: only days after ``since[ticker]`` (and up to ``until``) are
returned, though every row of the file is checked; an asset whose file has none of them
comes back with no rows, so a sync can tell "the file no longer has these days" from "there
is no file".
"""

from __future__ import annotations

import csv
import io
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pairscreen.contracts import Asset, Candles, PluginOption, RowIssues, hookimpl
from pairscreen_plugins.market.csv_cells import (
    CellError,
    close_value,
    iso_day,
    timestamp_day,
    volume_value,
)
from pairscreen_plugins.market.csv_layout import Layout, Unreadable, decode, layout

if TYPE_CHECKING:
    import _csv

log = logging.getLogger(__name__)

VOLUME_UNITS = ("base", "quote")
NAMED_ROWS = 3  # rows not understood named one by one with their line; the rest are counted


@dataclass
class _Rows:
    """What the rows of one file said so far: the understood days and the rest, counted."""

    days: dict[date, tuple[float, float, int]] = field(default_factory=dict)  # close, vol, line
    unparseable: int = 0
    conflicting: int = 0
    duplicate: int = 0
    examples: list[str] = field(default_factory=list)

    def candles(
        self,
        ticker: str,
        stamps: np.ndarray,
        close: np.ndarray,
        volume: np.ndarray,
        *,
        volume_unit: str | None,
        future: int,
        origin: str,
    ) -> Candles:
        """The kept rows as :class:`Candles` (days or bar close times alike), their volume in
        the quote currency, with what these rows counted."""
        if volume_unit == "base":
            volume = volume * close  # quote volume: units times the close
        issues = RowIssues(
            future=future,
            duplicate=self.duplicate,
            unparseable=self.unparseable,
            conflicting=self.conflicting,
            examples=tuple(self.examples),
            origin=origin,
        )
        return Candles(ticker=ticker, dates=stamps, close=close, volume=volume, issues=issues)

    def refuse(self, line: int, why: str, *, conflict: bool = False) -> None:
        if conflict:
            self.conflicting += 1
        else:
            self.unparseable += 1
        if len(self.examples) < NAMED_ROWS:
            self.examples.append(f"line {line}{why}")

    def add(self, line: int, day: date, close: float, volume: float) -> None:
        seen = self.days.get(day)
        if seen is None:
            self.days[day] = (close, volume, line)
            return
        first_close, first_volume, first_line = seen
        if first_close != close:
            other = f"close {close:.10g} (line {first_line}: {first_close:.10g})"
        elif not (first_volume == volume or (math.isnan(first_volume) and math.isnan(volume))):
            other = f"volume {volume:.10g} (line {first_line}: {first_volume:.10g})"
        else:
            self.duplicate += 1  # the same row again: stored once
            return
        self.refuse(line, f" gives {day} again with {other}", conflict=True)


def read_csv_candles(
    path: Path,
    ticker: str,
    *,
    after: date | None = None,
    until: date | None = None,
    volume_unit: str | None = "quote",
) -> Candles:
    """Read one file into :class:`Candles` (days after ``after`` and up to ``until``), with
    volume in the quote currency (``volume_unit`` says what the file's column counts).

    A file or row that cannot be read comes back counted in ``issues`` (no rows for an
    unreadable file). Raises :class:`ValueError` only when the file has a volume column while
    ``volume_unit`` is None (undeclared): that is the universe file's to fix.
    """
    try:
        text = decode(path.read_bytes())
        reader = csv.reader(io.StringIO(text, newline=""))
        columns = layout(next(reader))
    except Unreadable as exc:
        return _unreadable(path, ticker, str(exc))
    except OSError as exc:
        return _unreadable(path, ticker, f"cannot be read: {exc.strerror or exc}")
    except csv.Error as exc:
        return _unreadable(path, ticker, f"line 1 is not CSV: {exc}")
    if columns.volume is not None and volume_unit not in VOLUME_UNITS:
        raise ValueError(
            f"{path} has a volume column: declare its unit in [plugins.csv_source], "
            'volume_unit = "base" (units of the asset, as exchanges publish it) or '
            '"quote" (the quote currency)'
        )
    try:
        rows = _read_rows(reader, columns)
    except csv.Error as exc:
        return _unreadable(path, ticker, f"line {reader.line_num} is not CSV: {exc}")
    if not rows.days and not rows.unparseable:
        # A header and nothing under it is a broken export, not a market with no days.
        return _unreadable(path, ticker, "has its header and no rows")
    future = 0
    kept: list[date] = []
    for day in sorted(rows.days):
        if after is not None and day <= after:
            continue
        if until is not None and day > until:
            future += 1
            continue
        kept.append(day)
    return rows.candles(
        ticker,
        np.array(kept, dtype="datetime64[D]"),
        np.array([rows.days[d][0] for d in kept], dtype=np.float64),
        np.array([rows.days[d][1] for d in kept], dtype=np.float64),
        volume_unit=volume_unit,
        future=future,
        origin=path.name,
    )


def _read_rows(reader: _csv.Reader, columns: Layout) -> _Rows:
    """Every row after the header, understood or counted with its line."""
    rows = _Rows()
    read_day = iso_day if columns.day_kind == "date" else timestamp_day
    for record in reader:
        line = reader.line_num
        if not record or (len(record) == 1 and not record[0].strip()):
            continue  # an empty line carries no row
        if len(record) != columns.width:
            hint = (
                "a thousands separator in an unquoted number?"
                if len(record) > columns.width
                else "a cut-off row?"
            )
            rows.refuse(line, f" has {len(record)} fields, the header {columns.width} ({hint})")
            continue
        try:
            day = read_day(record[columns.day])
            close = close_value(record[columns.close])
            volume = math.nan if columns.volume is None else volume_value(record[columns.volume])
        except CellError as exc:
            rows.refuse(line, f": {exc}")
            continue
        rows.add(line, day, close, volume)
    return rows


def _unreadable(path: Path, ticker: str, why: str) -> Candles:
    empty = np.array([], dtype=np.float64)
    return Candles(
        ticker=ticker,
        dates=np.array([], dtype="datetime64[D]"),
        close=empty,
        volume=empty.copy(),
        issues=RowIssues(unreadable=f"{path.name} {why}", origin=path.name),
    )


class CsvMarketSource:
    """The ``csv`` market-data source. Options: ``path``, the folder of CSV files, and
    ``volume_unit`` (``"base"`` or ``"quote"``), required when a file has volumes."""

    name = "csv"

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        folder, volume_unit = _folder_and_unit(options)
        for asset, path in _files(folder, assets):
            yield read_csv_candles(
                path,
                asset.ticker,
                after=since.get(asset.ticker),
                until=until,
                volume_unit=volume_unit,
            )

    def fetch_bars(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        bar: str,
        since: Mapping[str, datetime | None],
        until: datetime,
    ) -> Iterator[Candles]:
        """Intraday bars (:mod:`~pairscreen_plugins.market.csv_bars`): each row's time is
        the bar's close time, UTC."""
        from pairscreen.contracts.bars import bar_size
        from pairscreen_plugins.market.csv_bars import read_csv_bars

        size = bar_size(bar)
        folder, volume_unit = _folder_and_unit(options)
        last = int(until.timestamp())
        for asset, path in _files(folder, assets):
            after = since.get(asset.ticker)
            yield read_csv_bars(
                path,
                asset.ticker,
                size,
                after=None if after is None else int(after.timestamp()),
                until=last,
                volume_unit=volume_unit,
            )


def _folder_and_unit(options: Mapping[str, Any]) -> tuple[Path, str | None]:
    """The folder of files and the declared volume unit, or a one-line error."""
    folder_option = options.get("path")
    if not isinstance(folder_option, str) or not folder_option:
        raise ValueError(
            'csv market source: set path = "<folder of SYMBOL.csv files>" in [plugins.csv_source]'
        )
    folder = Path(folder_option).expanduser()
    if not folder.is_dir():
        raise ValueError(f"csv market source: the folder {folder} does not exist")
    volume_unit = options.get("volume_unit")
    if volume_unit is not None and volume_unit not in VOLUME_UNITS:
        raise ValueError(
            f'csv market source: volume_unit must be "base" or "quote", got {volume_unit!r}'
        )
    return folder, volume_unit


def _files(folder: Path, assets: Sequence[Asset]) -> Iterator[tuple[Asset, Path]]:
    """Each asset with its file; an asset without one is skipped with a warning."""
    for asset in assets:
        path = folder / f"{asset.market_symbol}.csv"
        if not path.is_file():
            log.warning("csv market source: %s has no file %s; skipped", asset.ticker, path)
            continue
        yield asset, path


@hookimpl
def pairscreen_register_market_sources() -> list[CsvMarketSource]:
    return [CsvMarketSource()]


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.csv_source]`` table; a key left out is not given to the source."""
    return [
        PluginOption("path", "", "the folder of SYMBOL.csv files (relative to the universe file)"),
        PluginOption(
            "volume_unit",
            "",
            'what the volume column counts, "base" or "quote" (required when a file has one)',
        ),
        PluginOption(
            "close_time",
            "",
            'when the market\'s daily close is observed, "HH:MM" UTC (unset: 24:00)',
        ),
    ]
