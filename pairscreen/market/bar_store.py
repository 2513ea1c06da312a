"""Intraday bars at rest: one packed row per asset, bar size and UTC day (``bar_block``).

A daily candle row carries its ticker as text, its day, two doubles and a composite key over
the text; 24 such rows an asset-day would make an hourly history cost 24 times the daily one.
A block instead holds one day's bars as two float64 arrays (closes, and volumes or NULL when
none is known), keyed by the asset's integer id: an hour then costs its 8 bytes of close (16
with a volume) plus 1/24 of one row's overhead. Values are stored exactly (float64, no
compression of the mantissa), so what a sync wrote is what the reader gives back, bit for bit.

Bars are exchanged as :class:`~pairscreen.contracts.Candles` whose ``dates`` are the bars' close
times (``datetime64[s]``, UTC): the engine's candle arrays, at a finer clock. Slot ``k`` of
day D is the bar opening at ``D + k * bar`` (:mod:`pairscreen.contracts.bars`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date

import numpy as np
from peewee import fn

from pairscreen import clock
from pairscreen.contracts import Candles
from pairscreen.contracts.bars import DAY_SECONDS, BarSize
from pairscreen.db.connection import database
from pairscreen.db.models import AssetRow, BarBlock
from pairscreen.db.rows import read_date

PACKED = np.dtype("<f8")  # little-endian float64 on every machine
WRITE_BATCH_ROWS = 500  # blocks a statement writes (2,500 parameters)
UPSERT_COLUMNS = 5
READ_BATCH_ASSETS = 100  # assets read per query


def bar_times(candles: Candles) -> np.ndarray:
    """The close times of ``candles`` as epoch seconds (int64)."""
    times: np.ndarray = np.asarray(candles.dates, dtype="datetime64[s]").astype(np.int64)
    return times


def as_bar_candles(
    ticker: str, close_times: np.ndarray, close: np.ndarray, volume: np.ndarray
) -> Candles:
    """Bars as :class:`Candles`: close times (epoch seconds) become ``datetime64[s]``."""
    return Candles(ticker, close_times.astype("datetime64[s]"), close, volume)


def pack_days(
    bar: BarSize, close_times: np.ndarray, close: np.ndarray, volume: np.ndarray
) -> list[tuple[int, bytes, bytes | None]]:
    """The blocks of one asset's bars (close times on ``bar``'s grid, each once): per UTC
    day (epoch days), the packed closes and volumes (None when no volume is known)."""
    opens = close_times - bar.seconds
    days = opens // DAY_SECONDS
    slots = (opens % DAY_SECONDS) // bar.seconds
    blocks: list[tuple[int, bytes, bytes | None]] = []
    if not len(days):
        return blocks
    unique_days, where = np.unique(days, return_inverse=True)
    closes = np.full((len(unique_days), bar.per_day), np.nan, dtype=PACKED)
    volumes = np.full((len(unique_days), bar.per_day), np.nan, dtype=PACKED)
    closes[where, slots] = close
    volumes[where, slots] = volume
    known_volume = np.asarray(~np.isnan(volumes).all(axis=1))
    for i, day in enumerate(unique_days.tolist()):
        packed_volume = volumes[i].tobytes() if known_volume[i] else None
        blocks.append((int(day), closes[i].tobytes(), packed_volume))
    return blocks


def unpack_days(
    bar: BarSize, days: np.ndarray, closes: Sequence[bytes], volumes: Sequence[bytes | None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks (epoch days ascending, packed arrays) back to the bars they hold: close times
    (epoch seconds), closes and volumes, the empty slots left out."""
    n = len(days)
    close_grid = np.frombuffer(b"".join(closes), dtype=PACKED).reshape(n, bar.per_day)
    volume_grid = np.full((n, bar.per_day), np.nan)
    for i, packed in enumerate(volumes):
        if packed is not None:
            volume_grid[i] = np.frombuffer(packed, dtype=PACKED)
    slot_close = (np.arange(1, bar.per_day + 1, dtype=np.int64) * bar.seconds)[None, :]
    times = days.astype(np.int64)[:, None] * DAY_SECONDS + slot_close
    present = ~np.isnan(close_grid)
    return times[present], close_grid[present].astype(np.float64), volume_grid[present]


def write_bars(bar: BarSize, asset_ids: Mapping[str, int], candles: Candles) -> int:
    """Store ``candles`` (one asset's bars, checked: on the grid, each once), merged into the
    blocks already stored for their days; returns the bars written."""
    times = bar_times(candles)
    if not len(times):
        return 0
    asset_id = asset_ids[candles.ticker]
    first_day = int((times[0] - bar.seconds) // DAY_SECONDS)
    stored = _blocks(bar, [asset_id], first_day).get(asset_id)
    close, volume = candles.close, candles.volume
    if stored is not None:
        old_times, old_close, old_volume = stored
        keep = ~np.isin(old_times, times)
        times = np.concatenate([old_times[keep], times])
        close = np.concatenate([old_close[keep], close])
        volume = np.concatenate([old_volume[keep], volume])
    blocks = pack_days(bar, times, close, volume)
    values: list[object] = []
    for day, packed_close, packed_volume in blocks:
        values += [asset_id, bar.seconds, iso_day(day), packed_close, packed_volume]
    cursor = database.cursor()
    width = WRITE_BATCH_ROWS * UPSERT_COLUMNS
    for start in range(0, len(values), width):
        batch = values[start : start + width]
        cursor.execute(_upsert_sql(len(batch) // UPSERT_COLUMNS), batch)
    return len(candles.dates)


def delete_bars(bar: BarSize, asset_id: int) -> None:
    """Forget every stored bar of one asset at ``bar`` (a replaced history)."""
    BarBlock.delete().where(
        (BarBlock.asset == asset_id) & (BarBlock.bar_seconds == bar.seconds)
    ).execute()


def load_bars(
    bar: BarSize,
    tickers: Iterable[str] | None = None,
    *,
    until: int | None = None,
    since_day: int | None = None,
) -> dict[str, Candles]:
    """The stored bars of every asset (or of ``tickers``) at ``bar``, closing at or before
    ``until`` (epoch seconds; all when None) and in UTC days from ``since_day`` (epoch
    days) on, as :class:`Candles` whose dates are close times. Runs on the open connection."""
    ids = _asset_ids(tickers)
    by_id = {asset_id: ticker for ticker, asset_id in ids.items()}
    out: dict[str, Candles] = {}
    ordered = sorted(by_id, key=lambda i: by_id[i])
    for start in range(0, len(ordered), READ_BATCH_ASSETS):
        batch = ordered[start : start + READ_BATCH_ASSETS]
        for asset_id, (times, close, volume) in _blocks(bar, batch, since_day).items():
            if until is not None:
                closed = times <= until
                times, close, volume = times[closed], close[closed], volume[closed]
            if len(times):
                out[by_id[asset_id]] = as_bar_candles(by_id[asset_id], times, close, volume)
    return out


def load_closed_bars(bar: BarSize, tickers: Iterable[str] | None = None) -> dict[str, Candles]:
    """What the engine reads, as :func:`~pairscreen.market.sync.load_candles` does for days:
    every stored bar at ``bar`` that has closed at the service's clock, per ticker."""
    return load_bars(bar, tickers, until=bar.last_closed(clock.now()))


def last_closes(bar: BarSize) -> dict[str, int]:
    """Each asset's last stored bar at ``bar``: its close time (epoch seconds), by ticker.
    One query reads each asset's last block."""
    latest = (
        BarBlock.select(BarBlock.asset, fn.MAX(BarBlock.day).alias("last_day"))
        .where(BarBlock.bar_seconds == bar.seconds)
        .group_by(BarBlock.asset)
        .alias("latest")
    )
    query = (
        BarBlock.select(AssetRow.ticker, BarBlock.day, BarBlock.closes)
        .join(AssetRow)
        .switch(BarBlock)
        .join(
            latest,
            on=(BarBlock.asset == latest.c.asset_id) & (BarBlock.day == latest.c.last_day),
        )
        .where(BarBlock.bar_seconds == bar.seconds)
    )
    out: dict[str, int] = {}
    for ticker, day, packed in database.execute(query).fetchall():
        closes = np.frombuffer(bytes(packed), dtype=PACKED)
        slot = int(np.flatnonzero(~np.isnan(closes))[-1])
        epoch_day = int(stored_day(day).astype(np.int64))
        out[str(ticker)] = epoch_day * DAY_SECONDS + (slot + 1) * bar.seconds
    return out


def first_day(bar: BarSize, tickers: Iterable[str]) -> date | None:
    """The first UTC day holding a stored ``bar`` of ``tickers``, None when none does."""
    ids = list(_asset_ids(tickers).values())
    query = BarBlock.select(fn.MIN(BarBlock.day)).where(
        (BarBlock.bar_seconds == bar.seconds) & BarBlock.asset.in_(ids)
    )
    day = query.scalar()
    return None if day is None else read_date(day)


def asset_ids() -> dict[str, int]:
    """Every stored asset's integer id by ticker (the key of its blocks)."""
    return _asset_ids(None)


def _asset_ids(tickers: Iterable[str] | None) -> dict[str, int]:
    query = AssetRow.select(AssetRow.ticker, AssetRow.id)
    if tickers is not None:
        query = query.where(AssetRow.ticker.in_(sorted(set(tickers))))
    return {str(ticker): int(asset_id) for ticker, asset_id in database.execute(query).fetchall()}


def _blocks(
    bar: BarSize, ids: Sequence[int], since_day: int | None
) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The stored bars of the assets ``ids`` from ``since_day`` on, per asset id."""
    if not ids:
        return {}
    condition = (BarBlock.bar_seconds == bar.seconds) & BarBlock.asset.in_(list(ids))
    if since_day is not None:
        condition &= BarBlock.day >= iso_day(since_day)
    query = (
        BarBlock.select(BarBlock.asset, BarBlock.day, BarBlock.closes, BarBlock.volumes)
        .where(condition)
        .order_by(BarBlock.asset, BarBlock.day)
    )
    rows = database.execute(query).fetchall()
    out: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    if not rows:
        return out
    owners = np.array([row[0] for row in rows], dtype=np.int64)
    days = np.array([row[1] for row in rows], dtype="datetime64[D]").astype(np.int64)
    bounds = np.flatnonzero(owners[1:] != owners[:-1]) + 1
    starts = [0, *bounds.tolist()]
    ends = [*bounds.tolist(), len(rows)]
    for s, e in zip(starts, ends, strict=True):
        closes = [bytes(row[2]) for row in rows[s:e]]
        volumes = [None if row[3] is None else bytes(row[3]) for row in rows[s:e]]
        out[int(owners[s])] = unpack_days(bar, days[s:e], closes, volumes)
    return out


def stored_day(value: object) -> np.datetime64:
    """A block's ``day`` as read back (:func:`~pairscreen.db.rows.read_date`), as a numpy day."""
    return np.datetime64(read_date(value), "D")


def iso_day(epoch_day: int) -> str:
    """An epoch day as the ISO text both databases take for a ``date``."""
    return str(np.datetime64(epoch_day, "D"))


def _upsert_sql(rows: int) -> str:
    """``INSERT ... VALUES (...), (...) ON CONFLICT (asset, bar_seconds, day) DO UPDATE`` for
    ``rows`` blocks, parameters (asset, bar_seconds, day, closes, volumes) a block.

    One statement of many rows: psycopg2's ``executemany`` sends a statement per row, which
    made a PostgreSQL sync of 73,000 blocks take 38-82 s on the shared machine. peewee
    compiles the one-row statement (so it is right for the database in use); its row of
    placeholders is then repeated.
    """
    sentinels = (-7, -8, "\x00day", b"\x00c", b"\x00v")
    query = (
        BarBlock.insert(
            asset=sentinels[0],
            bar_seconds=sentinels[1],
            day=sentinels[2],
            closes=sentinels[3],
            volumes=sentinels[4],
        )
        .on_conflict(
            conflict_target=[BarBlock.asset, BarBlock.bar_seconds, BarBlock.day],
            preserve=[BarBlock.closes, BarBlock.volumes],
        )
        .returning()
    )
    sql, params = database.get_sql_context().sql(query).query()
    order = [_sentinel_index(p, sentinels) for p in params]
    if order != list(range(UPSERT_COLUMNS)):
        raise RuntimeError(f"bar_block upsert binds its parameters in an unexpected order {order}")
    mark = database.param
    one_row = "(" + ", ".join([mark] * UPSERT_COLUMNS) + ")"
    if str(sql).count(one_row) != 1:
        raise RuntimeError(f"bar_block upsert has an unexpected form: {sql}")
    return str(sql).replace(one_row, ", ".join([one_row] * rows))


def _sentinel_index(param: object, sentinels: tuple[object, ...]) -> int:
    """Which sentinel a bound parameter is (the driver may wrap a blob)."""
    value = bytes(param) if isinstance(param, memoryview | bytearray) else param
    if hasattr(param, "adapted"):  # psycopg2.Binary
        value = bytes(param.adapted)
    return sentinels.index(value)
