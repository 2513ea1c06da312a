"""Daily candles: pulled from the universe's market source into the database, read back.

:func:`sync_candles` asks the source, per ticker, for the days from the start of an overlap
on: the last :data:`~pairscreen.market.reconcile.OVERLAP_DAYS` stored days (the whole stored
history with ``verify``). The overlap is compared with what is stored; an asset whose
stored history the source contradicts is a conflict and gets nothing written (appending
would splice two histories), the others get their new days. ``replace`` names the assets
whose stored candles are replaced by the source's whole history instead.

Nothing partial is stored: an asset whose rows the source could not all read
(:mod:`~pairscreen.market.row_checks`, ``RowIssues.refuses``) gets nothing written, and so
does an asset whose new closes move implausibly (:mod:`~pairscreen.market.jumps`) until a
person accepts each such move (``accept``, ``BTC:2023-10-01``) or replaces the asset's
history; either is named in the report, which the caller (``data sync``) turns into exit 7.
Fetching happens
before the write transaction (a source may be slow or remote); the candles, the asset rows
and the ``candles`` data version are then written in one transaction, so a reader sees
either the old data with the old version or the new data with the new one. Users, keys,
watchlists, screens and notifications are other tables: a sync never touches them.

:func:`load_candles` reads the table in one ordered query into numpy arrays.

Only closed days are stored and read: a day's candle counts once it has closed at 24:00 UTC
(:func:`~pairscreen.market.freshness.last_closed_day`), whatever the source serves, so a
forming candle never enters a screen.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, timedelta

import numpy as np
import peewee

from pairscreen import clock
from pairscreen.contracts import Candles
from pairscreen.contracts.bars import require_daily
from pairscreen.db import rows
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import AssetRow, Candle, DataVersion
from pairscreen.market.freshness import AssetFreshness, asset_freshness, describe, last_closed_day
from pairscreen.market.reconcile import OVERLAP_DAYS
from pairscreen.market.row_checks import checked
from pairscreen.market.sync_plan import SyncPlan
from pairscreen.market.sync_report import SyncReport, describe_refusal
from pairscreen.plugin_system.registry import Plugins
from pairscreen.progress import Progress, no_progress
from pairscreen.universe import Universe

log = logging.getLogger(__name__)

DATA_VERSION_NAME = "candles"
# Rows bound per executemany call (keeps one call's memory small for long histories).
BATCH_ROWS = 2000
LOAD_BATCH_TICKERS = 100  # tickers read per query when loading candles

__all__ = ["SyncReport", "freshness_line", "load_candles", "sync_candles"]


def sync_candles(
    universe: Universe,
    plugins: Plugins,
    *,
    until: date | None = None,
    verify: bool = False,
    replace: Collection[str] = (),
    accept: Collection[str] = (),
    on_progress: Progress = no_progress,
) -> SyncReport:
    """Check the overlap of every asset with the source and store the new days.

    ``until`` (by default the last closed day) never reaches past the last closed day;
    ``verify`` compares every stored day, not only the last ones; ``replace`` names tickers
    whose stored candles become the source's whole history (what a first sync would store,
    its implausible moves accepted); ``accept`` names implausible moves a person has reviewed
    (``BTC:2023-10-01``, the move into that day); ``on_progress`` hears of each ticker fetched.
    """
    require_daily(universe.bar, "the daily candle sync")
    closed = last_closed_day()
    until = min(until or closed, closed)
    source = plugins.market_sources.get(universe.market_source)
    replacing = set(replace)
    with _connected():
        last = _last_days()
        whole = set(last) if verify else set(last) & replacing
        stored = _stored_tails(set(last) - whole, OVERLAP_DAYS)
        stored.update(_load_whole(sorted(whole)))
        since: dict[str, date | None] = {}
        for asset in universe.assets:
            mine = stored.get(asset.ticker)
            if asset.ticker in replacing or mine is None or not len(mine.dates):
                since[asset.ticker] = None
            else:
                since[asset.ticker] = _day(mine.dates[0]) - timedelta(days=1)
        fetched: dict[str, Candles] = {}
        total = len(universe.assets)
        on_progress(0, total)
        known = set(universe.tickers)
        for candles in source.fetch_candles(
            universe.assets, universe.market_options, since=since, until=until
        ):
            if candles.ticker not in known:
                log.warning(
                    "market source %s returned unknown ticker %s; ignored",
                    source.name,
                    candles.ticker,
                )
                continue
            fetched[candles.ticker] = checked(candles, until)
            on_progress(min(len(fetched), total), total)
        on_progress(total, total)

        plan = SyncPlan(set(accept), _stored_closes)
        for asset in universe.assets:
            t = asset.ticker
            got = fetched.get(t)
            if got is None:
                if t in last:
                    plan.unanswered.append(t)
                continue
            limit = universe.move_limit_pct(asset)
            plan.add(asset, got, stored.get(t), limit, until, t in replacing)

        version: int | None = None
        with write_transaction():
            assets_changed = _upsert_assets(universe)
            for candles in plan.replace:
                Candle.delete().where(Candle.ticker == candles.ticker).execute()
                _write(candles)
            for candles in plan.append:
                _write(candles)
            replaced_any = any(c.days for c in plan.replaced)
            if any(plan.inserted.values()) or replaced_any or assets_changed:
                version = _bump_version()
        stored_now = set(last) | {t for t, n in plan.inserted.items() if n}
        fresh_now = _stored_freshness(universe)
    missing = tuple(t for t in universe.tickers if t not in stored_now)
    if missing:
        log.warning("market source %s has no candles for %s", source.name, ", ".join(missing))
    for conflict in plan.conflicts:
        log.warning("sync conflict: %s", conflict.describe())
    for ticker, issues in plan.issues.items():
        if issues.refuses:
            log.warning("sync refused: %s", describe_refusal(ticker, issues))
    for hold in plan.holds:
        log.warning("sync held: %s", hold.describe())
    for acceptance in plan.accepted:
        log.warning("sync accepted after review: %s", acceptance.describe())
    return SyncReport(
        source=source.name,
        until=until,
        inserted={t: plan.inserted[t] for t in universe.tickers if t in plan.inserted},
        missing=missing,
        assets_changed=assets_changed,
        data_version=version,
        freshness=fresh_now,
        conflicts=tuple(plan.conflicts),
        replaced=tuple(plan.replaced),
        moves=tuple(plan.moves),
        issues=plan.issues,
        unanswered=tuple(plan.unanswered),
        verified=verify,
        holds=tuple(plan.holds),
        accepted=tuple(plan.accepted),
        unmatched=plan.unmatched(),
    )


def _day(value: np.datetime64) -> date:
    return date.fromisoformat(str(value.astype("datetime64[D]")))


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
        out[ticker] = rows.read_date(day)
    return out


def oldest_stored_day(universe: Universe) -> date | None:
    """The oldest stored close of the universe's assets, None when none is stored."""
    tickers = [asset.ticker for asset in universe.assets]
    day = Candle.select(peewee.fn.MIN(Candle.day)).where(Candle.ticker.in_(tickers)).scalar()
    return None if day is None else rows.read_date(day)


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


def _stored_tails(tickers: Iterable[str], days: int) -> dict[str, Candles]:
    """The last ``days`` stored candles of each of ``tickers``: one statement, compiled
    once, run per ticker on the (ticker, day) key (a window over the whole table sorts every
    row: 15 s for 3 million on SQLite, against well under a second this way)."""
    sentinel = "\x00ticker"
    query = (
        Candle.select(Candle.ticker, Candle.day, Candle.close, Candle.volume)
        .where(Candle.ticker == sentinel)
        .order_by(Candle.day.desc())
        .limit(days)
    )
    sql, params = database.get_sql_context().sql(query).query()
    cursor = database.cursor()
    found: list[tuple[object, ...]] = []
    for ticker in sorted(tickers):
        cursor.execute(sql, [ticker if p == sentinel else p for p in params])
        found.extend(reversed(cursor.fetchall()))
    return _as_candles(found)


def _stored_closes(ticker: str) -> np.ndarray:
    """Every stored close of ``ticker``, oldest first (what its typical day is measured on)."""
    found = _load_whole([ticker]).get(ticker)
    return found.close if found is not None else np.array([], dtype=np.float64)


def _load_whole(tickers: Sequence[str]) -> dict[str, Candles]:
    """Every stored candle of ``tickers``, closed or not (what a sync compares)."""
    out: dict[str, Candles] = {}
    for start in range(0, len(tickers), LOAD_BATCH_TICKERS):
        query = (
            Candle.select(Candle.ticker, Candle.day, Candle.close, Candle.volume)
            .where(Candle.ticker.in_(list(tickers[start : start + LOAD_BATCH_TICKERS])))
            .order_by(Candle.ticker, Candle.day)
        )
        out.update(_as_candles(database.execute(query).fetchall()))
    return out


def _load_batch(tickers: Sequence[str]) -> dict[str, Candles]:
    query = (
        Candle.select(Candle.ticker, Candle.day, Candle.close, Candle.volume)
        .where((Candle.day <= last_closed_day()) & Candle.ticker.in_(list(tickers)))
        .order_by(Candle.ticker, Candle.day)
    )
    return _as_candles(database.execute(query).fetchall())


def _as_candles(rows: list[tuple[object, ...]]) -> dict[str, Candles]:
    """Rows of (ticker, day, close, volume) ordered by ticker and day, as arrays per ticker."""
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
