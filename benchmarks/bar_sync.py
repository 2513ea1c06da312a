"""How long ``data sync`` of an hourly ``csv`` universe takes: files written, then one sync
into a fresh database, timed as a whole (reading and checking every file, writing the
blocks), then a second sync that finds nothing new.

Run from the checkout: ``.venv/bin/python benchmarks/bar_sync.py [--assets 500] [--days 730]
[--database-url postgresql://...]`` (SQLite in a temporary folder by default). The files
hold synthetic random-walk closes, one row per hour stamped with its close time
(``2022-01-01T01:00:00Z``), no volume, as the shipped hourly history is written.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from _harness import machine_line

os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""


def write_files(folder: Path, assets: int, days: int) -> Path:
    """``assets`` hourly files of ``days`` days and the universe over them."""
    prices = folder / "prices"
    prices.mkdir()
    rng = np.random.default_rng(3)
    stamps = np.datetime64("2022-01-01T01:00:00", "s") + np.arange(days * 24) * np.timedelta64(
        3600, "s"
    )
    text_stamps = [f"{s}Z," for s in stamps]
    entries = []
    for i in range(assets):
        close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, len(stamps))))
        rows = "".join(f"{s}{c:.8g}\n" for s, c in zip(text_stamps, close.tolist(), strict=True))
        (prices / f"A{i:04d}.csv").write_text("timestamp,close\n" + rows, encoding="utf-8")
        entries.append(f'[[asset]]\nticker = "A{i:04d}"\nsector = "s"\n')
    universe = folder / "universe.toml"
    universe.write_text(
        '[market]\nbar = "1h"\n\n[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\n\n' + "\n".join(entries),
        encoding="utf-8",
    )
    return universe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=500)
    parser.add_argument("--days", type=int, default=730)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database
    from pairscreen.market.bar_sync import sync_bars

    with tempfile.TemporaryDirectory(prefix="pairscreen-bar-sync-") as tmp:
        folder = Path(tmp)
        print(f"writing {args.assets} files of {args.days * 24:,} hourly rows ...", flush=True)
        universe = write_files(folder, args.assets, args.days)
        url = args.database_url or f"sqlite:///{folder / 'bars.sqlite3'}"
        rt = build_runtime(load_settings(data_dir=folder, database_url=url, universe=universe))
        print(machine_line())
        started = time.perf_counter()
        first = sync_bars(rt.universe, rt.plugins)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = sync_bars(rt.universe, rt.plugins)
        second_s = time.perf_counter() - started
        database.close()
        print(
            f"{url.split(':', 1)[0]}: first sync {first.total:,} bars of "
            f"{len(first.inserted)} assets in {first_s:.1f} s; second sync {second.total} new "
            f"in {second_s:.1f} s"
        )


if __name__ == "__main__":
    main()
