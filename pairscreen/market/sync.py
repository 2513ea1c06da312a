"""Daily candles: pulled from the universe's market source into the database, read back.

:func:`sync_candles` asks the source only for days after the last stored day of each ticker,
so a sync is incremental and a second sync on the same day writes nothing. Fetching happens
before the write transaction (a source may be slow or remote); the candles, the asset rows
and the ``candles`` data version are then written in one transaction, so a reader sees
either the old data with the old version or the new data with the new one.

:func:`load_candles` reads the table in one ordered query into numpy arrays.

Only closed days are stored and read: a day's candle counts once it has closed at 24:00 UTC
(:func:`~pairscreen.market.freshness.last_closed_day`), whatever the source serves, so a
forming candle never enters a screen.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import peewee

from pairscreen import clock
from pairscreen.db import rows
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import AssetRow, Candle, DataVersion
from pairscreen.hooks import Plugins
from pairscreen.market.freshness import AssetFreshness, asset_freshness, describe, last_closed_day
from pairscreen.progress import Progress, no_progress
from pairscreen.types import Candles
from pairscreen.universe import Universe

log = logging.getLogger(__name__)

DATA_VERSION_NAME = "candles"
# Rows bound per executemany call (keeps one call's memory small for long histories).
BATCH_ROWS = 2000
LOAD_BATCH_TICKERS = 100  # tickers read per query when loading candles


@dataclass(frozen=True)
class SyncReport:
    """What one sync did: new candles per ticker, assets the source had nothing for."""

    source: str
    until: date
    inserted: dict[str, int] = field(default_factory=dict)  # ticker -> new candles
    missing: tuple[str, ...] = ()  # universe tickers with no candles stored at all
    assets_changed: int = 0  # asset rows created or updated
    data_version: int | None = None  # the new "candles" version, None when unchanged
    freshness: dict[str, AssetFreshness] = field(default_factory=dict)  # after the sync

    @property
    def total(self) -> int:
        return sum(self.inserted.values())

    @property
    def changed(self) -> bool:
        return self.data_version is not None

    def summary(self) -> str:
        """One line for a person: what was added, up to which day."""
        if not self.changed:
            text = f"{self.source}: candles already up to date through {self.until.isoformat()}"
        else:
            tickers = sum(1 for n in self.inserted.values() if n)
            text = (
                f"{self.source}: {self.total} new candles for {tickers} assets through "
                f"{self.until.isoformat()} (data version {self.data_version})"
            )
        if self.missing:
            text += f"; no data for {', '.join(self.missing)}"
        return f"{text}; {describe(self.freshness)}"


def sync_candles(
    universe: Universe,
    plugins: Plugins,
    *,
    until: date | None = None,
    on_progress: Progress = no_progress,
) -> SyncReport:
    """Pull the days after the last stored one, per ticker, from the universe's source.

    ``until`` (by default the last closed day) never reaches past the last closed day;
    ``on_progress`` hears of each ticker fetched.
    """
    closed = last_closed_day()
    until = min(until or closed, closed)
    source = plugins.market_sources.get(universe.market_source)
    with _connected():
        last = _last_days()
        since = {a.ticker: last.get(a.ticker) for a in universe.assets}
        fetched: list[Candles] = []
        total = len(universe.assets)
        on_progress(0, total)
        for candles in source.fetch_candles(
            universe.assets, universe.market_options, since=since, until=until
        ):
            fetched.append(_only_new(candles, since.get(candles.ticker), until))
            on_progress(min(len(fetched), total), total)
        on_progress(total, total)
        known = set(universe.tickers)
        unknown = sorted({c.ticker for c in fetched} - known)
        if unknown:
            log.warning(
                "market source %s returned unknown tickers %s; ignored",
                source.name,
                ", ".join(unknown),
            )
        fetched = [c for c in fetched if c.ticker in known and len(c.dates)]

        inserted: dict[str, int] = {}
        version: int | None = None
        with write_transaction():
            assets_changed = _upsert_assets(universe)
            for candles in fetched:
                inserted[candles.ticker] = inserted.get(candles.ticker, 0) + _write(candles)
            if any(inserted.values()) or assets_changed:
                version = _bump_version()
        stored = set(last) | {t for t, n in inserted.items() if n}
        fresh = _stored_freshness(universe)
    missing = tuple(t for t in universe.tickers if t not in stored)
    if missing:
        log.warning("market source %s has no candles for %s", source.name, ", ".join(missing))
    return SyncReport(
        source=source.name,
        until=until,
        inserted={t: inserted.get(t, 0) for t in universe.tickers if t in inserted},
        missing=missing,
        assets_changed=assets_changed,
        data_version=version,
        freshness=fresh,
    )


def freshness_line(universe: Universe) -> str:
    """How fresh the stored candles are, one line for a person (``serve`` and ``demo``)."""
    with _connected():
        return f"{universe.market_source}: {describe(_stored_freshness(universe))}"


def _stored_freshness(universe: Universe) -> dict[str, AssetFreshness]:
    closed = last_closed_day()
    return asset_freshness(universe, {t: min(d, closed) for t, d in _last_days().items()})


def _last_days() -> dict[str, date]:
    query = Candle.select(Candle.ticker, peewee.fn.MAX(Candle.day)).group_by(Candle.ticker)
    out: dict[str, date] = {}
    for ticker, day in rows.tuples(query):
        out[ticker] = day if isinstance(day, date) else date.fromisoformat(str(day)[:10])
    return out


def _only_new(candles: Candles, after: date | None, until: date) -> Candles:
    """Keep what the contract promised: days after ``after`` up to ``until``, positive closes."""
    dates = np.asarray(candles.dates, dtype="datetime64[D]")
    close = np.asarray(candles.close, dtype=np.float64)
    volume = np.asarray(candles.volume, dtype=np.float64)
    keep = (dates <= np.datetime64(until, "D")) & np.isfinite(close) & (close > 0)
    if after is not None:
        keep &= dates > np.datetime64(after, "D")
    if not keep.all():
        dropped = int((~keep).sum())
        log.warning(
            "%s: %d candles outside the requested days or without a positive close were ignored",
            candles.ticker,
            dropped,
        )
    volume = np.where(np.isfinite(volume) & (volume >= 0), volume, np.nan)  # unknown, not 0
    return Candles(candles.ticker, dates[keep], close[keep], volume[keep])


def _write(candles: Candles) -> int:
    """Upsert one ticker's candles with one prepared statement run over all rows.

    Building a multi-row ``insert_many`` costs peewee ~25 µs per value; the statement is
    compiled once by peewee (so it is right for the database in use) and the driver's
    ``executemany`` binds the rows.
    """
    sql, order = _candle_upsert_sql()
    columns = {
        "ticker": [candles.ticker] * len(candles.dates),
        "day": np.datetime_as_string(candles.dates, unit="D").tolist(),  # ISO, both databases
        "close": candles.close.tolist(),
        "volume": [None if math.isnan(v) else v for v in candles.volume.tolist()],  # NULL
    }
    rows = list(zip(*(columns[name] for name in order), strict=True))
    cursor = database.cursor()
    for start in range(0, len(rows), BATCH_ROWS):
        cursor.executemany(sql, rows[start : start + BATCH_ROWS])
    return len(rows)


def _candle_upsert_sql() -> tuple[str, list[str]]:
    """``INSERT ... ON CONFLICT (ticker, day) DO UPDATE`` for one row, and its parameter order."""
    sentinels = {"ticker": "\x00t", "day": "\x00d", "close": -1.25, "volume": -2.5}
    query = (
        Candle.insert(**sentinels)
        .on_conflict(
            conflict_target=[Candle.ticker, Candle.day],
            preserve=[Candle.close, Candle.volume],
        )
        .returning()  # no RETURNING clause: nothing to read back
    )
    sql, params = database.get_sql_context().sql(query).query()
    by_value = {v: k for k, v in sentinels.items()}
    return sql, [by_value[p] for p in params]


def _upsert_assets(universe: Universe) -> int:
    stored = {
        t: (s, c)
        for t, s, c in rows.tuples(
            AssetRow.select(AssetRow.ticker, AssetRow.sector, AssetRow.asset_class)
        )
    }
    changed = [
        (a.ticker, a.sector, a.asset_class)
        for a in universe.assets
        if stored.get(a.ticker) != (a.sector, a.asset_class)
    ]
    if changed:
        (
            AssetRow.insert_many(
                changed, fields=[AssetRow.ticker, AssetRow.sector, AssetRow.asset_class]
            )
            .on_conflict(
                conflict_target=[AssetRow.ticker],
                preserve=[AssetRow.sector, AssetRow.asset_class],
            )
            .execute()
        )
    return len(changed)


def _bump_version() -> int:
    """``version = version + 1`` in SQL (never read-then-write); returns the new value."""
    now = clock.now()
    (
        DataVersion.insert(name=DATA_VERSION_NAME, version=1, updated_at=now)
        .on_conflict(
            conflict_target=[DataVersion.name],
            update={DataVersion.version: DataVersion.version + 1, DataVersion.updated_at: now},
        )
        .execute()
    )
    return DataVersion.get_by_id(DATA_VERSION_NAME).version


def load_candles(tickers: Iterable[str] | None = None) -> dict[str, Candles]:
    """Every stored candle of a closed day (or those of ``tickers``) as arrays per ticker.

    Read a batch of tickers at a time, each batch in one query ordered by ticker and day,
    through the raw cursor (no model objects, no per-row conversions), split on ticker
    boundaries. Batches keep the driver's row tuples (about 250 bytes a candle) to a few MB
    where a 2,000-asset universe read at once would hold half a gigabyte of them.
    """
    with _connected():
        if tickers is None:
            stored = Candle.select(Candle.ticker).distinct().order_by(Candle.ticker)
            wanted = [row[0] for row in database.execute(stored).fetchall()]
        else:
            wanted = sorted(set(tickers))
        out: dict[str, Candles] = {}
        for start in range(0, len(wanted), LOAD_BATCH_TICKERS):
            out.update(_load_batch(wanted[start : start + LOAD_BATCH_TICKERS]))
    return out


def _load_batch(tickers: Sequence[str]) -> dict[str, Candles]:
    query = (
        Candle.select(Candle.ticker, Candle.day, Candle.close, Candle.volume)
        .where((Candle.day <= last_closed_day()) & Candle.ticker.in_(list(tickers)))
        .order_by(Candle.ticker, Candle.day)
    )
    rows = database.execute(query).fetchall()
    if not rows:
        return {}
    ticker_col, day_col, close_col, volume_col = zip(*rows, strict=True)
    del rows
    names = np.array(ticker_col, dtype=object)
    days = _as_days(day_col)
    close = np.array(close_col, dtype=np.float64)
    volume = np.array(volume_col, dtype=np.float64)
    bounds = np.flatnonzero(names[1:] != names[:-1]) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(names)]])
    out: dict[str, Candles] = {}
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        ticker = str(names[s])
        out[ticker] = Candles(ticker, days[s:e], close[s:e], volume[s:e])
    return out


def _as_days(values: Sequence[object]) -> np.ndarray:
    """Driver dates to ``datetime64[D]``: SQLite returns 'YYYY-MM-DD' text (parsed by numpy in
    C), PostgreSQL ``date`` objects; both convert directly."""
    return np.array(values, dtype="datetime64[D]")


@contextmanager
def _connected() -> Iterator[None]:
    """Use the caller's open connection, or open one for the duration (and close it)."""
    if database.is_closed():
        with database.connection_context():
            yield
    else:
        yield
