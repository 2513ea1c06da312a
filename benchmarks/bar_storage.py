"""Bytes per stored bar: intraday blocks (``bar_block``) against daily candle rows, on SQLite
and PostgreSQL side by side, extrapolated to 500 assets x 2 years of hourly bars.

Run from the checkout: ``.venv/bin/python benchmarks/bar_storage.py [--assets 100]
[--days 730] [--postgres postgresql://postgres@127.0.0.1:5432/test]``. Synthetic random-walk
closes (no compression helps them, as none would help real ones much) are written through the
project's own writers (:func:`pairscreen.market.bar_store.write_bars` and the daily sync's
``_write``) into fresh databases; the size of each table with its indexes is read from the
database (SQLite ``dbstat`` after ``VACUUM``, PostgreSQL ``pg_total_relation_size`` after
``VACUUM FULL``). PostgreSQL is skipped, saying so, when no server answers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _harness import machine_line

os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""
HOURS_PER_YEAR = 8760
TARGET_ASSETS, TARGET_YEARS, LIMIT_BYTES = 500, 2, 2 * 1024**3


def fill(url: str, assets: int, days: int, with_volume: bool) -> tuple[int, int, float]:
    """A fresh database at ``url`` with ``assets`` x ``days`` of hourly bars and the same
    assets' daily candles; returns (bar_block bytes, candle bytes, seconds writing bars)."""
    from pairscreen.contracts import Candles
    from pairscreen.contracts.bars import BAR_SIZES
    from pairscreen.db.connection import database, init_database, is_sqlite, write_transaction
    from pairscreen.db.models import AssetRow
    from pairscreen.market import sync
    from pairscreen.market.bar_store import asset_ids, write_bars

    hour = BAR_SIZES["1h"]
    init_database(url)
    rng = np.random.default_rng(7)
    start = np.datetime64("2022-01-01T01:00:00", "s")
    times = start + np.arange(days * 24) * np.timedelta64(3600, "s")
    day_dates = np.datetime64("2022-01-01", "D") + np.arange(days)
    with database.connection_context():
        with write_transaction():
            AssetRow.insert_many(
                [(f"A{i:04d}", "s", "crypto") for i in range(assets)],
                fields=[AssetRow.ticker, AssetRow.sector, AssetRow.asset_class],
            ).execute()
        ids = asset_ids()
        started = time.perf_counter()
        for i in range(assets):
            close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, len(times))))
            volume = rng.random(len(times)) * 1e6 if with_volume else np.full(len(times), np.nan)
            with write_transaction():
                write_bars(hour, ids, Candles(f"A{i:04d}", times, close, volume))
        seconds = time.perf_counter() - started
        for i in range(assets):
            daily = 100 * np.exp(np.cumsum(rng.normal(0, 0.03, days)))
            with write_transaction():
                sync._write(Candles(f"A{i:04d}", day_dates, daily, rng.random(days) * 1e7))
        if is_sqlite():
            database.execute_sql("VACUUM")
            sizes = dict(
                database.execute_sql(
                    "SELECT CASE WHEN name LIKE '%bar_block%' THEN 'bar' "
                    "WHEN name LIKE '%candle%' THEN 'candle' ELSE 'other' END, SUM(pgsize) "
                    "FROM dbstat GROUP BY 1"
                ).fetchall()
            )
            bar_bytes, candle_bytes = int(sizes["bar"]), int(sizes["candle"])
        else:
            database.execute_sql("VACUUM FULL bar_block")
            database.execute_sql("VACUUM FULL candle")
            bar_bytes = database.execute_sql(
                "SELECT pg_total_relation_size('bar_block')"
            ).fetchone()[0]
            candle_bytes = database.execute_sql(
                "SELECT pg_total_relation_size('candle')"
            ).fetchone()[0]
    database.close()
    return bar_bytes, candle_bytes, seconds


def postgres_database(server: str) -> tuple[str, Callable[[], None]] | None:
    """A fresh database on ``server`` (and its dropper), or None when none answers."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from tests.support.databases import PostgresDatabases

        servers = PostgresDatabases(server)
        name = servers.create("bench")
    except Exception as exc:  # no server, no psycopg2: say so and measure SQLite alone
        print(f"PostgreSQL: skipped ({str(exc).splitlines()[0]})")
        return None
    return servers.url(name), lambda: servers.drop(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=100)
    parser.add_argument("--days", type=int, default=730)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    print(machine_line())
    bars = args.assets * args.days * 24
    print(
        f"{args.assets} assets x {args.days} days of hourly bars = {bars:,} bars "
        f"({args.assets * args.days:,} blocks), and {args.assets * args.days:,} daily candle rows"
    )
    rows: list[tuple[str, str, int, int, float]] = []
    with tempfile.TemporaryDirectory(prefix="pairscreen-bar-bench-") as tmp:
        for with_volume in (False, True):
            label = "closes and volumes" if with_volume else "closes only"
            url = f"sqlite:///{Path(tmp) / f'bars-{with_volume}.sqlite3'}"
            rows.append(("SQLite", label, *fill(url, args.assets, args.days, with_volume)))
            made = postgres_database(args.postgres)
            if made is not None:
                pg_url, drop = made
                try:
                    measured = fill(pg_url, args.assets, args.days, with_volume)
                    rows.append(("PostgreSQL", label, *measured))
                finally:
                    drop()
    target = TARGET_ASSETS * TARGET_YEARS * HOURS_PER_YEAR
    print(
        f"{'database':<11} {'hourly bars hold':<19} {'B/bar':>6} {'B/daily row':>12} "
        f"{'ratio':>6} {'write s':>8} {'500 x 2 y hourly':>17}"
    )
    for db, label, bar_bytes, candle_bytes, seconds in rows:
        per_bar = bar_bytes / bars
        per_row = candle_bytes / (args.assets * args.days)
        projected = per_bar * target
        verdict = "under" if projected < LIMIT_BYTES else "OVER"
        print(
            f"{db:<11} {label:<19} {per_bar:>6.1f} {per_row:>12.1f} {per_row / per_bar:>6.1f} "
            f"{seconds:>8.1f} {projected / 1024**2:>10.0f} MiB ({verdict} 2 GiB)"
        )
    print(
        f"the last column is bytes per bar x {target:,} bars "
        f"({TARGET_ASSETS} assets x {TARGET_YEARS} x {HOURS_PER_YEAR} hours), linear in bars"
    )


if __name__ == "__main__":
    main()
