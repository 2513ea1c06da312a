"""The Dask executor's speed-up: a LocalCluster of 2 workers versus the local executor.

    .venv/bin/python benchmarks/dask_speedup.py [--assets 100] [--repeat 3] [--workers 2]

What it does:

1. writes a synthetic universe of ``--assets`` assets in one sector (every pair screened:
   100 assets give 4,950 pairs, the reference workload) as a ``csv`` universe: 1,100 days
   of a factor model (a market random walk, plus per asset either a mean-reverting or a
   trending component, so that some pairs survive the filters and get backtested);
2. syncs it into a fresh SQLite database in a temporary folder;
3. times the whole screen computation (``compute_screen``: metrics, filters, score, both
   360-day backtest legs of the survivors) with the local executor in this process, with the
   local executor on a pool of forked processes (one per core), and with the dask executor
   on a ``LocalCluster`` of ``--workers`` worker processes (one thread each) on this
   machine: once cold (the workers load the plugins on their first chunk) and then warm;
4. checks that every executor produced the identical screen, and prints the figures.

Each time is the best of ``--repeat`` runs. The local cluster runs on this machine's cores,
so the dask figure measures the executor's overhead against the same hardware; on a real
cluster each worker brings its own cores. Other load on the machine (the printed load
average) flattens every parallel figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("PAIRSCREEN_LOAD_PLUGINS", "")  # built-in plugins only, on every worker too

from pairscreen import clock  # noqa: E402
from pairscreen.bootstrap import build_runtime  # noqa: E402
from pairscreen.config import load_settings  # noqa: E402
from pairscreen.db.connection import database  # noqa: E402
from pairscreen.market.sync import sync_candles  # noqa: E402
from pairscreen.runtime import Runtime  # noqa: E402
from pairscreen.screening.screen import compute_screen  # noqa: E402

DAYS = 1100


def write_universe(folder: Path, n_assets: int, seed: int = 7) -> Path:
    """A one-sector csv universe: market factor + mean-reverting or trending components."""
    rng = np.random.default_rng(seed)
    prices = folder / "prices"
    prices.mkdir()
    end = clock.today() - timedelta(days=1)
    days = [end - timedelta(days=DAYS - 1 - i) for i in range(DAYS)]
    market = np.cumsum(rng.normal(0.0003, 0.03, DAYS))
    lines = [
        'label = "synthetic benchmark universe"',
        "",
        "[components]",
        'market_source = "csv"',
        "",
        "[plugins.csv_source]",
        'path = "prices"',
        'volume_unit = "quote"',
        "",
    ]
    for k in range(n_assets):
        ticker = f"A{k:03d}"
        if k % 2 == 0:  # an Ornstein-Uhlenbeck level: pairs of two of these mean-revert
            level, phi, own = 0.0, 1 - 1 / rng.uniform(15, 60), np.empty(DAYS)
            for t in range(DAYS):
                level = phi * level + rng.normal(0, 0.04)
                own[t] = level
        else:  # momentum: returns with a wandering drift
            drift = np.cumsum(rng.normal(0, 0.0004, DAYS))
            own = np.cumsum(drift + rng.normal(0, 0.02, DAYS))
        close = 10 ** rng.uniform(-1, 4) * np.exp(market + own)
        volume = close * rng.uniform(1e4, 1e6) * np.exp(rng.normal(0, 0.3, DAYS))
        rows = "\n".join(
            f"{d.isoformat()},{c:.10g},{v:.6g}" for d, c, v in zip(days, close, volume, strict=True)
        )
        (prices / f"{ticker}.csv").write_text("date,close,volume\n" + rows + "\n")
        lines += ["[[asset]]", f'ticker = "{ticker}"', 'sector = "bench"', ""]
    path = folder / "universe.toml"
    path.write_text("\n".join(lines))
    return path


def best_of(repeat: int, run: Callable[[], dict]) -> tuple[float, dict]:
    best, result = float("inf"), {}
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def screen(rt: Runtime, at, **kwargs) -> dict:  # type: ignore[no-untyped-def]
    with database.connection_context():
        return compute_screen(rt, at, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    try:
        from dask.distributed import LocalCluster
    except ImportError:
        sys.exit("this benchmark needs the dask extra: pip install -e '.[dask]'")

    with tempfile.TemporaryDirectory(prefix="pairscreen-dask-bench-") as tmp:
        folder = Path(tmp)
        universe = write_universe(folder, args.assets)
        settings = load_settings(
            data_dir=folder, database_url=f"sqlite:///{folder / 'bench.sqlite3'}", universe=universe
        )
        rt = build_runtime(settings)
        sync_candles(rt.universe, rt.plugins)
        n_pairs = len(rt.universe.screened_pairs())
        at = clock.now()
        cores = os.cpu_count() or 1
        print(
            f"universe: {args.assets} assets, {n_pairs} pairs, {DAYS} days; {cores} cores "
            f"(load average {os.getloadavg()[0]:.1f} before the runs); best of {args.repeat}"
        )

        screen(rt, at, processes=1)  # warm-up: imports, caches
        t_one, one = best_of(args.repeat, lambda: screen(rt, at, processes=1))
        t_pool, pool = best_of(args.repeat, lambda: screen(rt, at, processes=cores))
        with LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:
            address = cluster.scheduler_address
            started = time.perf_counter()
            cold = screen(rt, at, executor="dask", scheduler=address)
            t_cold = time.perf_counter() - started
            t_dask, warm = best_of(
                args.repeat, lambda: screen(rt, at, executor="dask", scheduler=address)
            )

        reference = json.dumps(one)
        identical = all(json.dumps(r) == reference for r in (pool, cold, warm))
        print(f"survivors: {one['n_survivors']}; identical screens on every executor: {identical}")
        rows = [
            ("local, 1 process", t_one),
            (f"local, {cores} forked processes", t_pool),
            (f"dask LocalCluster {args.workers} workers, cold", t_cold),
            (f"dask LocalCluster {args.workers} workers, warm", t_dask),
        ]
        for label, seconds in rows:
            print(f"  {label:<40} {seconds:7.2f} s  {n_pairs / seconds:8.0f} pairs/s")
        print(
            f"speed-up of dask ({args.workers} workers, warm) over local 1 process: "
            f"{t_one / t_dask:.2f}x; over the local {cores}-process pool: {t_pool / t_dask:.2f}x"
        )
        if not identical:
            sys.exit("the executors disagree")


if __name__ == "__main__":
    main()
