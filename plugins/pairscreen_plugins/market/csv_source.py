"""Market source ``csv``: daily candles from a folder of ``<symbol>.csv`` files.

Universe options: ``path``, the folder (relative paths are resolved against the universe
file), and ``volume_unit``, what the ``volume`` column counts: ``"base"`` (units of the asset,
as exchanges such as Binance publish it) or ``"quote"`` (the quote currency). Each file has
the header ``date,close`` and optionally ``volume`` (column order free, extra columns
ignored) and one row per UTC day with an ISO date (``2025-01-31``; a timestamp such as
``2025-01-31T00:00:00Z`` counts as its UTC day). pairscreen stores quote volume, so a base
volume is multiplied by that day's close. A file with a volume column and no declared
``volume_unit`` is an error: guessing the unit would make every volume wrong by the price.
A file without the column, an empty cell or a value that is not a non-negative number is an
unknown volume (NaN, served as ``null``), never 0: a made-up zero would read as a market
nobody trades.

The reader is tolerant and counts what it skipped (:class:`~pairscreen.RowIssues`, which
``data sync`` names per asset): rows come back sorted by date, a repeated date keeps the
row nearest the end of the file (a later correction wins) and counts as a duplicate, a row
dated after ``until`` counts as not closed yet, and a row with a bad date, a missing,
non-numeric, non-positive or non-finite close counts as unparseable (each logged with the
file and line). A missing file logs a warning and skips that asset; a file whose header
lacks ``date`` or ``close`` is an error (:class:`ValueError` naming the file), because
nothing in it can be trusted.

Reads are incremental in effect: only days after ``since[ticker]`` (and up to ``until``)
are returned; an asset whose file has none of them comes back with no rows, so a sync can
tell "the file no longer has these days" from "there is no file".
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pairscreen import Asset, Candles, RowIssues, hookimpl

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("date", "close")
VOLUME_COLUMN = "volume"  # optional: without it every volume is unknown (NaN)
VOLUME_UNITS = ("base", "quote")


def _parse_day(text: str) -> date:
    text = text.strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
        return moment.date()


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

    Raises :class:`ValueError` when the header lacks a required column, or has a volume
    column while ``volume_unit`` is None (undeclared).
    """
    rows: dict[date, tuple[float, float]] = {}
    unparseable = duplicate = future = 0
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        names = [h.strip().lower() for h in header or []]
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if header is None or missing:
            found = ",".join(header) if header else "nothing"
            raise ValueError(
                f"{path}: the first line must be the header 'date,close' or "
                f"'date,close,volume' (found {found!r}; missing {', '.join(missing)})"
            )
        i_date, i_close = (names.index(c) for c in REQUIRED_COLUMNS)
        i_volume = names.index(VOLUME_COLUMN) if VOLUME_COLUMN in names else None
        if i_volume is not None and volume_unit not in VOLUME_UNITS:
            raise ValueError(
                f"{path} has a volume column: declare its unit in [market], "
                'volume_unit = "base" (units of the asset, as exchanges publish it) or '
                '"quote" (the quote currency)'
            )
        width = max(i_date, i_close, -1 if i_volume is None else i_volume) + 1
        for line_no, record in enumerate(reader, start=2):
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) < width:
                unparseable += 1
                log.warning(
                    "%s line %d: expected %d columns, got %d; row skipped",
                    path,
                    line_no,
                    width,
                    len(record),
                )
                continue
            try:
                day = _parse_day(record[i_date])
            except ValueError:
                unparseable += 1
                log.warning(
                    "%s line %d: %r is not an ISO date; row skipped", path, line_no, record[i_date]
                )
                continue
            try:
                close = float(record[i_close])
            except ValueError:
                close = math.nan
            if not (math.isfinite(close) and close > 0):
                unparseable += 1
                log.warning(
                    "%s line %d: close %r is not a positive number; row skipped",
                    path,
                    line_no,
                    record[i_close].strip(),
                )
                continue
            volume = _volume(path, line_no, "" if i_volume is None else record[i_volume])
            if after is not None and day <= after:
                continue
            if until is not None and day > until:
                future += 1
                continue
            if day in rows:
                duplicate += 1
                log.warning("%s line %d: %s is given again; the later row kept", path, line_no, day)
            rows[day] = (close, volume)  # a later row for the same day replaces the earlier
    days = sorted(rows)
    close_array = np.array([rows[d][0] for d in days], dtype=np.float64)
    volume_array = np.array([rows[d][1] for d in days], dtype=np.float64)
    if volume_unit == "base":
        volume_array = volume_array * close_array  # quote volume: units times the close
    if future:
        log.warning("%s: %d rows dated after %s (not closed yet) skipped", path, future, until)
    return Candles(
        ticker=ticker,
        dates=np.array(days, dtype="datetime64[D]"),
        close=close_array,
        volume=volume_array,
        issues=RowIssues(future=future, duplicate=duplicate, unparseable=unparseable),
    )


def _volume(path: Path, line_no: int, cell: str) -> float:
    """The cell's volume, NaN when it is empty or unusable (unknown, never 0)."""
    raw = cell.strip()
    if not raw:
        return math.nan
    try:
        volume = float(raw)
    except ValueError:
        volume = math.nan
    if not (math.isfinite(volume) and volume >= 0):
        log.warning(
            "%s line %d: volume %r is not a non-negative number; read as unknown",
            path,
            line_no,
            raw,
        )
        return math.nan
    return volume


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
        folder_option = options.get("path")
        if not isinstance(folder_option, str) or not folder_option:
            raise ValueError(
                'csv market source: set path = "<folder of SYMBOL.csv files>" in [market]'
            )
        folder = Path(folder_option).expanduser()
        if not folder.is_dir():
            raise ValueError(f"csv market source: the folder {folder} does not exist")
        volume_unit = options.get("volume_unit")
        if volume_unit is not None and volume_unit not in VOLUME_UNITS:
            raise ValueError(
                f'csv market source: volume_unit must be "base" or "quote", got {volume_unit!r}'
            )
        for asset in assets:
            path = folder / f"{asset.market_symbol}.csv"
            if not path.is_file():
                log.warning("csv market source: %s has no file %s; skipped", asset.ticker, path)
                continue
            yield read_csv_candles(
                path,
                asset.ticker,
                after=since.get(asset.ticker),
                until=until,
                volume_unit=volume_unit,
            )


@hookimpl
def pairscreen_register_market_sources() -> list[CsvMarketSource]:
    return [CsvMarketSource()]
