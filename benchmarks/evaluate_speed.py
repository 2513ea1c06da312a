"""Time of ``pairscreen evaluate`` at the size of the issue's real-data run, side by side with
the black-box way (one full point-in-time screen per as-of day).

Writes 28 assets in one sector (378 pairs) as a ``csv`` universe: daily closes from a factor
model (a common market factor, clusters that mean-revert against each other, idiosyncratic
random walks) ending 2025-11-11, synced into a fresh SQLite database. Then, on that runtime:

* ``evaluate``: 45 as-of days every 30 days from 2022-01-01, horizons 30 and 90, the default
  rules and each rule left out, in one process, as the CLI runs it (strategy and ``[costs]``
  given, so the calibration's strategy outcomes are in the time);
* black-box: ``compute_screen(as_of=day)`` for each of the 45 days (metrics, filter, score and
  both backtests of the survivors, ``--processes`` workers), for the default rules only; the
  survivors must equal the evaluation's at every day.

    .venv/bin/python benchmarks/evaluate_speed.py [--assets 28] [--dates 45] [--processes 2]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process = one core, BLAS included
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""

import argparse
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins", ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import generated_runtime, timed_evaluate  # noqa: E402

from pairscreen.config import load_settings  # noqa: E402
from pairscreen.evaluation.dates import as_of_dates  # noqa: E402
from pairscreen.evaluation.rule_sets import rule_sets  # noqa: E402
from pairscreen.market.cutoff import close_of  # noqa: E402
from pairscreen.screening.screen import SCREEN_BT_DAYS, compute_screen  # noqa: E402

LAST_DAY = date(2025, 11, 11)
FIRST_AS_OF = date(2022, 1, 1)
EVERY = 30
HORIZONS = (30, 90)


def write_universe(folder: Path, n_assets: int, n_days: int, seed: int = 7) -> Path:
    rng = np.random.default_rng(seed)
    days = [LAST_DAY - timedelta(days=n_days - 1 - i) for i in range(n_days)]
    market = np.cumsum(rng.normal(0, 0.03, n_days))
    clusters = 4
    spread = np.zeros((clusters, n_days))
    for t in range(1, n_days):  # mean-reverting cluster spreads (an AR(1) each)
        spread[:, t] = 0.97 * spread[:, t - 1] + rng.normal(0, 0.03, clusters)
    prices = folder / "prices"
    prices.mkdir()
    lines = [
        'label = "synthetic evaluation benchmark"',
        "",
        "[components]",
        'market_source = "csv"',
        "",
        "[plugins.csv_source]",
    ]
    lines += ['path = "prices"', 'volume_unit = "quote"', ""]
    for i in range(n_assets):
        own = np.cumsum(rng.normal(0, 0.01 + 0.02 * (i % 3 == 0), n_days))
        close = np.exp(3 + market + spread[i % clusters] + own)
        volume = rng.lognormal(15, 0.5, n_days)
        ticker = f"A{i:02d}"
        rows = "\n".join(
            f"{d.isoformat()},{c:.10g},{v:.6g}" for d, c, v in zip(days, close, volume, strict=True)
        )
        (prices / f"{ticker}.csv").write_text("date,close,volume\n" + rows + "\n")
        lines += ["[[asset]]", f'ticker = "{ticker}"', 'sector = "one"', ""]
    path = folder / "universe.toml"
    path.write_text("\n".join(lines))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=28)
    parser.add_argument("--dates", type=int, default=45)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    n_days = (LAST_DAY - FIRST_AS_OF).days + load_settings().window_days + SCREEN_BT_DAYS + 1
    with generated_runtime("evaluate", lambda f: write_universe(f, args.assets, n_days)) as rt:
        run(rt, args)


def run(rt, args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    last_as_of = FIRST_AS_OF + timedelta(days=EVERY * (args.dates - 1))
    dates = as_of_dates(FIRST_AS_OF, last_as_of, EVERY)
    sets = rule_sets(rt.plugins, rt.universe, [])
    total, result = timed_evaluate(rt, sets, dates, HORIZONS, EVERY)
    n_pairs = result.n_pairs
    started = time.perf_counter()
    black_box = [
        compute_screen(rt, close_of(day), as_of=day, processes=args.processes) for day in dates
    ]
    loop = time.perf_counter() - started
    screen = result.results[0]
    for entry, payload in zip(screen.per_date, black_box, strict=True):
        expected = sorted(f"{s['pair'][0]}/{s['pair'][1]}" for s in payload["survivors"])
        if sorted(entry["survivor_pairs"]) != expected:  # type: ignore[call-overload]
            raise SystemExit(f"{entry['as_of']}: evaluate and the screen disagree")
    per_day = sum(int(d["survivors"]) for d in screen.per_date) / len(dates)  # type: ignore[call-overload]
    print(
        f"{len(dates)} as-of days x {n_pairs} pairs x {len(HORIZONS)} horizons x "
        f"{len(sets)} rule sets, {args.assets} assets with {len(rt.candles.get()['A00'].dates)} "
        f"days of candles; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"evaluate, {len(sets)} rule sets, one process:  {total:6.1f} s "
        f"({total / len(dates):.2f} s/day)"
    )
    print(
        f"black-box, one screen --as-of per day: {loop:6.1f} s for the default rules alone "
        f"({args.processes} processes; x{len(sets)} rule sets = {loop * len(sets):.0f} s); "
        "same survivors every day"
    )
    stable = "-" if screen.stability is None else f"{screen.stability:.0%}"
    print(f"default rules: {per_day:.1f} survivors per day, {stable} surviving again next day")


if __name__ == "__main__":
    main()
