"""Peg reference source ``csv``: reference prices from a folder of ``<REFERENCE>.csv`` files.

Options (the ``[plugins.csv_reference]`` table; ``[peg_sources.csv]`` for one more release):
``folder`` (or ``path``), the folder of files, relative to the universe file; ``max_age_hours``
overrides the default maximum age of an answer (26 hours, made for one price a day: Friday's
fix is stale by Sunday); ``close_time`` (``"HH:MM"`` UTC, e.g. ``"21:00"`` for a New York
close) says when a daily row's price is final, by default at the end of its UTC day.

Each file is named after the reference symbol (``XAU.csv``, ``AAPL.csv``) and has the header
``timestamp,price`` (column order free, extra columns ignored). A timestamp is ISO 8601; one
without an offset is UTC. A bare date is a daily bar: its price is the day's close, final
only once the day has closed, so it is observed at the ``close_time`` of that day (24:00 UTC
unless set). A row dated today is therefore not used before today's close: a file written
during the day holds a price that may still move. The answer for a sampling time is the
last row observed at or before it, with that moment as ``as_of``.

Like the csv market source, the reader is tolerant and says what it skipped: a row with a bad
timestamp or a non-numeric price is dropped with a warning naming the file and line (absurd
prices, zero or negative, are left for the sampler to reject with the rest of the answer);
a file whose header lacks ``timestamp`` or ``price`` is an error, because nothing in it can
be trusted. A missing file means the source has no answer for that reference. Files are read
once and re-read only when they change on disk.
"""

from __future__ import annotations

import bisect
import csv
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from pairscreen.contracts import PluginOption, ReferenceQuote, hookimpl

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("timestamp", "price")
# A reference symbol names a file in the folder: no separators, no leading dot.
REFERENCE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


DAY = timedelta(days=1)


def parse_timestamp(text: str, close: timedelta = DAY) -> datetime:
    """When a row's price was observed, as an aware UTC datetime: an ISO 8601 timestamp as
    written (naive means UTC), a bare date at its close (``close`` after 00:00 UTC)."""
    text = text.strip()
    if len(text) == 10:
        day = date.fromisoformat(text)
        return datetime(day.year, day.month, day.day, tzinfo=UTC) + close
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class ReferenceSeries:
    """One file's rows, oldest first."""

    times: tuple[datetime, ...]
    prices: tuple[float, ...]

    def at(self, moment: datetime) -> tuple[float, datetime] | None:
        """The last row at or before ``moment``."""
        i = bisect.bisect_right(self.times, moment) - 1
        if i < 0:
            return None
        return self.prices[i], self.times[i]


def close_offset(options: Mapping[str, Any]) -> timedelta:
    """The ``close_time`` option as a time after 00:00 UTC (default 24:00: the day's end)."""
    text = options.get("close_time")
    if not text:
        return DAY
    try:
        moment = time.fromisoformat(str(text))
    except ValueError:
        raise ValueError(
            f'csv peg source: close_time must be a UTC time of day such as "21:00", got {text!r}'
        ) from None
    return timedelta(hours=moment.hour, minutes=moment.minute, seconds=moment.second)


def read_reference_csv(path: Path, close: timedelta = DAY) -> ReferenceSeries:
    """Read one ``timestamp,price`` file (a bare date observed ``close`` after its 00:00
    UTC); a repeated moment keeps the later row."""
    rows: dict[datetime, float] = {}
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        names = [h.strip().lower() for h in header or []]
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if missing:
            found = ",".join(header) if header else "nothing"
            raise ValueError(
                f"{path.name}: the first line must be the header 'timestamp,price' "
                f"(found {found!r}; missing {', '.join(missing)})"
            )
        i_time, i_price = names.index("timestamp"), names.index("price")
        for line_no, record in enumerate(reader, start=2):
            if not record or all(not cell.strip() for cell in record):
                continue
            try:
                moment = parse_timestamp(record[i_time], close)
                price = float(record[i_price])
            except (IndexError, ValueError):
                log.warning(
                    "%s line %d: expected an ISO timestamp and a number; row skipped",
                    path.name,
                    line_no,
                )
                continue
            rows[moment] = price
    times = tuple(sorted(rows))
    return ReferenceSeries(times, tuple(rows[t] for t in times))


class CsvPegSource:
    """The ``csv`` peg reference source (see the module docstring for the file format)."""

    name = "csv"
    max_age = timedelta(hours=26)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # path -> ((mtime_ns, size, close), series): a file is parsed again only when it
        # changed, or when its rows' close time did
        self._cache: dict[Path, tuple[tuple[int, int, timedelta], ReferenceSeries]] = {}

    def reference_price(
        self, reference: str, at: datetime, options: Mapping[str, Any]
    ) -> ReferenceQuote | None:
        folder = options.get("folder") or options.get("path")
        if not folder:
            raise ValueError('csv peg source: set folder = "..." in [peg_sources.csv]')
        if not REFERENCE_PATTERN.match(reference):
            raise ValueError(f"csv peg source: {reference!r} cannot name a file")
        path = Path(folder) / f"{reference}.csv"
        series = self._series(path, close_offset(options))
        if series is None:
            return None
        found = series.at(at.astimezone(UTC))
        if found is None:
            return None
        price, as_of = found
        return ReferenceQuote(source=self.name, reference=reference, price=price, as_of=as_of)

    def _series(self, path: Path, close: timedelta) -> ReferenceSeries | None:
        try:
            stat = path.stat()
        except FileNotFoundError:
            log.info("csv peg source: no file %s", path.name)
            return None
        version = (stat.st_mtime_ns, stat.st_size, close)
        with self._lock:
            cached = self._cache.get(path)
            if cached is not None and cached[0] == version:
                return cached[1]
        series = read_reference_csv(path, close)
        with self._lock:
            self._cache[path] = (version, series)
        return series


@hookimpl
def pairscreen_register_peg_sources() -> list[CsvPegSource]:
    return [CsvPegSource()]


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.csv_reference]`` table; a key left out is not given to the source."""
    return [
        PluginOption("folder", "", "the folder of REFERENCE.csv files (relative to the universe)"),
        PluginOption("path", "", "the same as folder"),
        PluginOption(
            "close_time", "", 'when a daily row\'s price is final, "HH:MM" UTC (unset: 24:00)'
        ),
        PluginOption("max_age_hours", 26.0, "an answer older than this many hours does not count"),
        PluginOption(
            "max_skew_hours",
            1.0,
            "how many hours apart the token price's moment and the answer's may be",
        ),
        PluginOption(
            "max_deviation_pct",
            50.0,
            "an answer farther than this from the market price is a broken feed, not a depeg",
        ),
    ]
