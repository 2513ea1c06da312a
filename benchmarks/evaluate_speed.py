"""Time of ``pairscreen evaluate`` on the size of the issue's real-data run, side by side with
the black-box way (one full point-in-time screen per as-of day, metrics only, estimated).

Generates 28 assets in one sector (378 pairs) with daily closes from a factor model (a common
market factor, sector-like clusters that mean-revert against each other, and idiosyncratic
random walks), ending 2025-11-11, then evaluates 45 as-of days every 30 days from 2022-01-01
at horizons 30 and 90 under the default rules and each rule left out (7 rule sets), in one
process. Prints the total, the time per as-of day, and the metric pass alone per day (what a
screen per day must at least pay once per rule set when run black-box).

    .venv/bin/python benchmarks/evaluate_speed.py [--assets 28] [--dates 45]
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
for path in (ROOT, ROOT / "plugins"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from pairscreen.config import load_settings  # noqa: E402
from pairscreen.engine.evaluate import compute_metrics  # noqa: E402
from pairscreen.engine.panels import group_by_history  # noqa: E402
from pairscreen.evaluation.dates import as_of_dates  # noqa: E402
from pairscreen.evaluation.rule_sets import rule_sets  # noqa: E402
from pairscreen.evaluation.run import evaluate  # noqa: E402
from pairscreen.evaluation.verdicts import Market  # noqa: E402
from pairscreen.hooks import Plugins  # noqa: E402
from pairscreen.plugins import load_plugins  # noqa: E402
from pairscreen.screening.screen import SCREEN_BT_DAYS  # noqa: E402
from pairscreen.types import Asset, Candles  # noqa: E402
from pairscreen.universe import Universe  # noqa: E402

LAST_DAY = date(2025, 11, 11)
FIRST_AS_OF = date(2022, 1, 1)
EVERY = 30
HORIZONS = (30, 90)


def market_of(n_assets: int, n_days: int, seed: int = 7) -> tuple[Universe, dict[str, Candles]]:
    rng = np.random.default_rng(seed)
    dates = np.datetime64(LAST_DAY) - np.arange(n_days)[::-1]
    market = np.cumsum(rng.normal(0, 0.03, n_days))
    clusters = 4
    spread = np.zeros((clusters, n_days))
    for t in range(1, n_days):  # mean-reverting cluster spreads (an AR(1) each)
        spread[:, t] = 0.97 * spread[:, t - 1] + rng.normal(0, 0.03, clusters)
    assets, candles = [], {}
    for i in range(n_assets):
        own = np.cumsum(rng.normal(0, 0.01 + 0.02 * (i % 3 == 0), n_days))
        log_price = 3 + market + spread[i % clusters] + own
        ticker = f"A{i:02d}"
        assets.append(Asset(ticker, sector="one"))
        volume = rng.lognormal(15, 0.5, n_days)
        candles[ticker] = Candles(ticker, dates, np.exp(log_price), volume)
    return Universe(tuple(assets), market_source="csv"), candles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=28)
    parser.add_argument("--dates", type=int, default=45)
    args = parser.parse_args()
    settings = load_settings()
    plugins = Plugins(load_plugins(settings), settings)
    n_days = (LAST_DAY - FIRST_AS_OF).days + settings.window_days + SCREEN_BT_DAYS + 1
    universe, candles = market_of(args.assets, n_days)
    last_as_of = FIRST_AS_OF + timedelta(days=EVERY * (args.dates - 1))
    dates = as_of_dates(FIRST_AS_OF, last_as_of, EVERY)
    started = time.perf_counter()
    market = Market.of(
        universe,
        candles,
        window_days=settings.window_days,
        min_history_days=settings.min_history_days,
    )
    sets = rule_sets(plugins, universe, [])
    result = evaluate(
        plugins,
        market,
        sets,
        dates,
        HORIZONS,
        every_days=EVERY,
        fee=0.001,
        depegs_at=lambda _at: {},
    )
    total = time.perf_counter() - started
    # the metric pass of one day (the last), alone
    aligned = [p for p in market.aligned if p is not None]
    metric_started = time.perf_counter()
    for _rows, panel in group_by_history(
        aligned, settings.window_days + SCREEN_BT_DAYS, settings.window_days
    ):
        compute_metrics(plugins, panel)
    metric_pass = time.perf_counter() - metric_started
    screen = result.results[0]
    per_day = sum(int(d["survivors"]) for d in screen.per_date) / len(dates)  # type: ignore[call-overload]
    print(
        f"{len(dates)} as-of days x {len(market.pairs)} pairs x {len(HORIZONS)} horizons x "
        f"{len(sets)} rule sets, {n_days} days of candles"
    )
    print(f"evaluate (one process):          {total:6.1f} s  ({total / len(dates):.2f} s per day)")
    print(f"one metric pass over every pair: {metric_pass:6.2f} s")
    print(
        f"black-box, metrics only, one screen per day and rule set (estimate): "
        f"{metric_pass * len(dates) * len(sets):6.1f} s"
    )
    stable = "-" if screen.stability is None else f"{screen.stability:.0%}"
    print(f"screen rules: {per_day:.1f} survivors per day, {stable} surviving again next day")


if __name__ == "__main__":
    main()
