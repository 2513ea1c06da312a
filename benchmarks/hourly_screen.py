"""How long ``screen run --no-sync`` takes on an hourly universe, and how much memory.

Writes a synthetic hourly ``csv`` universe (half the assets mean-revert around a common
market, half trend; one row per hour stamped with its close time, the last the newest closed
hour, so nothing is stale), syncs it into a fresh SQLite database (not timed), then runs
``python -m pairscreen screen run --no-sync`` in a fresh process and prints its wall time,
the peak memory of the process and its workers together (PSS summed, as benchmarks/scale.py
measures it), the pairs, the survivors and the machine line. The universe screens a
``--window-days`` window (30: 720 hourly bars) with ``[screen] backtest_days = [7, 14, 30]``
(the screen's own backtest is 30 days) and ``min_range_width = 0.05`` (so that mean-reverting
pairs survive and are backtested), so each pair's panel is 60 days of bars; the files hold
``--days`` days (61 by default).

    .venv/bin/python benchmarks/hourly_screen.py [--assets 500] [--window-days 30]
                                                 [--days 61] [--processes 0]

Issue 36's target: 500 assets (124,750 pairs) in at most 60 s and under 1 GB on the 2-core
CI machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _harness import machine_line
from scale import run_measured

ROOT = Path(__file__).resolve().parents[1]
BACKTEST_DAYS = (7, 14, 30)
# The filter's range width, 0.40 by default (a daily 540-day window's): a 30-day hourly
# window of these spreads spans about 0.1, so a tenth of the pairs survive and are backtested
RANGE_WIDTH = 0.05


def write_universe(
    folder: Path, assets: int, days: int, window_days: int, range_width: float = RANGE_WIDTH
) -> Path:
    """``assets`` hourly files of ``days`` days ending at the last closed hour, and the
    universe over them."""
    rng = np.random.default_rng(36)
    prices = folder / "prices"
    prices.mkdir()
    bars = days * 24
    now = int(datetime.now(UTC).timestamp())
    last = now - now % 3600
    stamps = np.datetime64(last - (bars - 1) * 3600, "s") + np.arange(bars) * np.timedelta64(
        3600, "s"
    )
    text_stamps = [f"{s}Z," for s in stamps]
    market = np.cumsum(rng.normal(0, 0.004, bars))
    entries = []
    for i in range(assets):
        if i % 2 == 0:  # mean-reverting around the market: an AR(1) spread
            spread = np.zeros(bars)
            shocks = rng.normal(0, 0.01, bars)
            for t in range(1, bars):
                spread[t] = 0.95 * spread[t - 1] + shocks[t]
            log_close = market + spread
        else:
            log_close = np.cumsum(rng.normal(0.0001, 0.006, bars))
        close = 100 * np.exp(log_close)
        rows = "".join(f"{s}{c:.8g}\n" for s, c in zip(text_stamps, close.tolist(), strict=True))
        (prices / f"H{i:04d}.csv").write_text("timestamp,close\n" + rows, encoding="utf-8")
        entries.append(f'[[asset]]\nticker = "H{i:04d}"\nsector = "s"\n')
    universe = folder / "universe.toml"
    universe.write_text(
        'label = "synthetic hourly universe"\n\n[market]\nbar = "1h"\n\n'
        '[components]\nmarket_source = "csv"\n\n[plugins.csv_source]\npath = "prices"\n\n'
        f"[screen]\nwindow_days = {window_days}\nbacktest_days = {list(BACKTEST_DAYS)}\n"
        f"min_history_days = {window_days}\nmin_range_width = {range_width}\n\n"
        + "\n".join(entries),
        encoding="utf-8",
    )
    return universe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=500)
    parser.add_argument("--window-days", type=int, default=30)
    parser.add_argument("--days", type=int, default=61)
    parser.add_argument("--processes", type=int, default=0, help="0: one per core")
    parser.add_argument(
        "--range-width",
        type=float,
        default=RANGE_WIDTH,
        help="the filter's min_range_width (0.40, the default filter's, leaves no survivor)",
    )
    args = parser.parse_args()
    os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database
    from pairscreen.market.bar_sync import sync_bars

    with tempfile.TemporaryDirectory(prefix="pairscreen-hourly-screen-") as tmp:
        folder = Path(tmp)
        print(f"writing {args.assets} files of {args.days * 24:,} hourly bars ...", flush=True)
        universe = write_universe(
            folder, args.assets, args.days, args.window_days, args.range_width
        )
        url = f"sqlite:///{folder / 'hourly.sqlite3'}"
        rt = build_runtime(load_settings(data_dir=folder, database_url=url, universe=universe))
        with database.connection_context():
            synced = sync_bars(rt.universe, rt.plugins)
        database.close()
        print(f"synced {synced.total:,} bars (not timed)")
        print(machine_line())
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")]),
            "PAIRSCREEN_UNIVERSE": str(universe),
            "PAIRSCREEN_DATA_DIR": tmp,
            "DATABASE_URL": url,
            "PAIRSCREEN_SCREEN_PROCESSES": str(args.processes),
        }
        cmd = [sys.executable, "-m", "pairscreen", "screen", "run", "--no-sync"]
        wall, peak, output = run_measured(cmd, env)
        pairs = args.assets * (args.assets - 1) // 2
        print(output.strip())
        print(
            f"hourly screen: {args.assets} assets, {pairs:,} pairs, window {args.window_days} d "
            f"({args.window_days * 24} bars), backtest {max(BACKTEST_DAYS)} d: {wall:.1f} s wall, "
            f"{pairs / wall:,.0f} pairs/s, peak memory {peak / 2**20:,.0f} MiB (PSS, all "
            "processes)"
        )


if __name__ == "__main__":
    main()
