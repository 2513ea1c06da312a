"""Two candidate redesigns of the evaluation's test, measured on the power study's universes
beside today's (docs/methodology.md, "Evaluating the rules": "How close to the best
possible"). Neither is adopted; this script keeps the measurement repeatable.

Both read a day's comparison as a sum of one-day moves. A pair's 30-day reversion is the sum
of its log-ratio's signed one-day changes after the as-of day, so ``D_t`` (survivors' mean
minus the rest's) is ``c_t . m``: the day's net exposure to each asset (survivors' mean minus
the rest's, +1 for the cheap leg, -1 for the other) times the assets' moves.

* ``increments``: the standard error from the one-day contributions ``g_s`` (each calendar
  day's move of every open comparison, weighted) instead of the overlapping 30-day sums
  (Hodrick's "1B" errors): ``var = sum g_s^2`` has hundreds of terms, so the test needs no
  t-quantile with few degrees of freedom. It is exact when no move is predictable, but a
  mean-reverting pair's one-day changes are negatively autocorrelated, which it ignores: on
  the planted universes it overstates the error.
* ``exposure``: today's test with each day weighted by the precision of ``D_t`` computed
  from its exposures (``1 / |c_t|^2``: shared legs make some days' survivors one bet, not
  several) instead of ``n_s n_r / (n_s + n_r)``.

Beside them, the **oracle**: a test that knew the estimate's true spread (the spread of
estimates over the random-walk universes, pure noise) would call evidence 4 times in 5 from
a true difference of ``(z_0.95 + z_0.80) x spread``; no test of this estimate does better.

    .venv/bin/python benchmarks/evaluation_candidates.py [--null 30] [--planted 30]
        [--level 0.12] [--processes 1]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process = one core
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""

import argparse
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import machine_line  # noqa: E402
from evaluation_power import NULL_SEED, PLANTED_SEED, Z80, Z95  # noqa: E402  (the study's seeds)

from pairscreen.bootstrap import load_all_plugins  # noqa: E402
from pairscreen.config import load_settings  # noqa: E402
from pairscreen.evaluation.dates import as_of_dates  # noqa: E402
from pairscreen.evaluation.day_work import DayPlan, day_work  # noqa: E402
from pairscreen.evaluation.outcomes import ZONE_SIGN  # noqa: E402
from pairscreen.evaluation.rule_sets import rule_sets  # noqa: E402
from pairscreen.evaluation.statistics import daily_difference  # noqa: E402
from pairscreen.evaluation.verdicts import Market  # noqa: E402
from tests.support.power_universe import (  # noqa: E402
    FEE,
    LAST_DAY,
    MIN_HISTORY_DAYS,
    WINDOW_DAYS,
    planted,
    universe,
)

HORIZON = 30
EVERY = 5
N_DAYS = 1100


@dataclass(frozen=True)
class Tested:
    """One design's 30-day estimate, standard error, min_detectable and one-sided p."""

    estimate: float
    standard_error: float
    min_detectable: float
    p_value: float


def one(task: tuple[float, int]) -> tuple[float, dict[str, Tested]]:
    """One simulated universe (level 0: random walks) under the three designs."""
    level, seed = task
    u, candles = universe(seed, planted(level) if level > 0 else ())
    plugins = load_all_plugins(load_settings(data_dir=tempfile.gettempdir()), u)
    market = Market.of(u, candles, window_days=WINDOW_DAYS, min_history_days=MIN_HISTORY_DAYS)
    first = LAST_DAY - timedelta(days=N_DAYS - 1 - WINDOW_DAYS)
    dates = as_of_dates(first, LAST_DAY - timedelta(days=HORIZON), EVERY)
    screen = rule_sets(plugins, u, [])[:1]
    plan = DayPlan(plugins, market, screen, 6, (HORIZON,), FEE, None, None, False)
    tickers = [a.ticker for a in u.assets]
    column = {t: i for i, t in enumerate(tickers)}
    legs = [(column[a.ticker], column[b.ticker]) for a, b in market.pairs]
    log_price = np.array([np.log(candles[t].close) for t in tickers])  # every day present
    day0 = candles[tickers[0]].dates[0]
    gap, count_weight, exposure_weight = (np.zeros(len(dates)) for _ in range(3))
    contributions = np.zeros(log_price.shape[1])
    for d, work in enumerate(day_work(plan, dates, lambda _moment: {})):
        zone = work.replayed.verdicts.zone
        moved = work.outcomes[HORIZON].reversion
        at = np.flatnonzero(np.isfinite(moved))
        chosen = work.replayed.survives[screen[0].name][at]
        n_s, n_r = int(chosen.sum()), int((~chosen).sum())
        if not (n_s and n_r):
            continue
        gap[d] = moved[at][chosen].mean() - moved[at][~chosen].mean()
        count_weight[d] = n_s * n_r / (n_s + n_r)
        exposure = np.zeros(len(tickers))
        for pair, survivor in zip(at, chosen, strict=True):
            a, b = legs[pair]
            share = ZONE_SIGN[str(zone[pair])] * (1.0 / n_s if survivor else -1.0 / n_r)
            exposure[a] += share
            exposure[b] -= share
        exposure_weight[d] = 1.0 / float(exposure @ exposure)
        t = int((np.datetime64(dates[d], "D") - day0).astype(int))
        steps = np.diff(log_price[:, t : t + HORIZON + 1], axis=1)
        contributions[t + 1 : t + HORIZON + 1] += count_weight[d] * (exposure @ steps)
    block = math.ceil(HORIZON / EVERY)
    out = {
        "today": _tested(daily_difference(gap, count_weight, block)),
        "exposure": _tested(daily_difference(gap, exposure_weight, block)),
    }
    total = count_weight.sum()
    estimate = float(contributions.sum() / total)
    se = math.sqrt(float((contributions**2).sum())) / total
    out["increments"] = Tested(
        estimate, se, (Z95 + Z80) * se, float(1.0 - stats.norm.cdf(estimate / se))
    )
    return level, out


def _tested(diff: object) -> Tested:
    return Tested(
        diff.estimate,  # type: ignore[attr-defined]
        diff.standard_error,  # type: ignore[attr-defined]
        diff.min_detectable,  # type: ignore[attr-defined]
        diff.p_value,  # type: ignore[attr-defined]
    )


def _spread(values: list[float]) -> str:
    """The sample standard deviation, or "-" below two universes."""
    return f"{statistics.stdev(values):.2f}" if len(values) > 1 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--null", type=int, default=30, help="random-walk universes")
    parser.add_argument("--planted", type=int, default=30, help="planted universes")
    parser.add_argument("--level", type=float, default=0.12, help="planted OU deviation sd")
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    tasks = [(0.0, NULL_SEED + k) for k in range(args.null)]
    tasks += [(args.level, PLANTED_SEED + k) for k in range(args.planted)]
    start = time.perf_counter()
    with Pool(args.processes) as pool:
        runs = pool.map(one, tasks, chunksize=1)
    print(machine_line())
    print(
        f"{len(tasks)} universes (30 assets, {N_DAYS:,} days, --every {EVERY}, the 30-day "
        f"row, default rules) in {time.perf_counter() - start:.0f} s\n"
    )
    print(
        f"{'design':<12}{'scenario':<18}{'sims':>5}{'mean pp':>9}{'sd pp':>7}"
        f"{'rms se pp':>10}{'min_det pp':>11}{'evidence':>10}"
    )
    for design in ("today", "increments", "exposure"):
        for level in (0.0, args.level):
            mine = [r[design] for lv, r in runs if lv == level]
            if not mine:
                continue
            name = "random walks" if level == 0 else f"planted sd {level:g}"
            estimates = [t.estimate * 100 for t in mine]
            rms = math.sqrt(statistics.fmean(t.standard_error**2 for t in mine)) * 100
            called = sum(t.p_value < 0.05 for t in mine)
            print(
                f"{design:<12}{name:<18}{len(mine):>5}{statistics.fmean(estimates):>+9.2f}"
                f"{_spread(estimates):>7}{rms:>10.2f}"
                f"{statistics.fmean(t.min_detectable for t in mine) * 100:>11.2f}"
                f"{f'{called}/{len(mine)}':>10}"
            )
    noise = [r["today"].estimate * 100 for lv, r in runs if lv == 0.0]
    if len(noise) > 1:
        spread = statistics.stdev(noise)
        print(
            f"\noracle: the random walks' estimates spread {spread:.2f} pp, so a test knowing "
            f"it calls evidence 4 times in 5 from {(Z95 + Z80) * spread:.2f} pp"
        )


if __name__ == "__main__":
    main()
