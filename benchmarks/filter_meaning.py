"""What the screening filter means on series whose nature we know.

Generates random-walk, mean-reverting and trending log-ratios (540-day windows, daily
volatility 3-5 %, crypto-like), runs the built-in metric plugins on them and prints a
markdown table: mean variance-ratio ``hurst`` (the one the filter uses), mean R/S
``hurst_rs`` (pairscan-rmr's), the pass rate of each filter and the survival rate of the full
filter (hurst < 0.5, adf < 0.7, range_width >= 0.40, touches >= 2 on each side).

    .venv/bin/python benchmarks/filter_meaning.py [--pairs 300] [--seed 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
if importlib.util.find_spec("pairscreen_plugins") is None:
    raise SystemExit("run from a pairscreen checkout")

from pairscreen_plugins.metrics import mean_reversion, range_stats  # noqa: E402

from pairscreen import PairPanel  # noqa: E402

N_DAYS = 541  # a full 540-day window W (and H) ending today
Generator = Callable[[np.random.Generator, int], np.ndarray]


def random_walk(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.cumsum(rng.normal(0.0, rng.uniform(0.03, 0.05), n))


def mean_reverting(rng: np.random.Generator, n: int) -> np.ndarray:
    """AR(1) log-ratio, half-lives from about 7 to 70 days."""
    phi = rng.uniform(0.90, 0.99)
    shocks = rng.normal(0.0, rng.uniform(0.03, 0.05), n)
    out = np.empty(n)
    out[0] = shocks[0] / np.sqrt(1 - phi**2)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + shocks[t]
    return out


def trending(rng: np.random.Generator, n: int) -> np.ndarray:
    """Momentum: AR(1) daily changes (coefficient 0.1-0.4) around a drift of 0-0.3 %/day."""
    rho = rng.uniform(0.1, 0.4)
    drift = rng.choice([-1.0, 1.0]) * rng.uniform(0.0, 0.003)
    shocks = rng.normal(0.0, rng.uniform(0.03, 0.05), n)
    steps = np.empty(n)
    steps[0] = shocks[0]
    for t in range(1, n):
        steps[t] = rho * steps[t - 1] + shocks[t]
    return np.cumsum(drift + steps)


KINDS: dict[str, Generator] = {
    "random walk": random_walk,
    "mean-reverting (AR(1), phi 0.90-0.99)": mean_reverting,
    "trending (momentum + drift)": trending,
}


def panel_of(log_ratios: np.ndarray, rng: np.random.Generator) -> PairPanel:
    pairs, n = log_ratios.shape
    close_b = 10.0 * np.exp(np.cumsum(rng.normal(0.0, 0.04, (pairs, n)), axis=1))
    close_a = close_b * np.exp(log_ratios)
    dates = np.tile(np.datetime64("2025-01-01") - np.arange(n)[::-1], (pairs, 1))
    volume = np.ones((pairs, n))
    names = tuple(f"P{i}" for i in range(pairs))
    return PairPanel(names, names, dates, close_a, close_b, volume, volume)


def evaluate(kind: Generator, pairs: int, rng: np.random.Generator) -> dict[str, float]:
    p = panel_of(np.stack([kind(rng, N_DAYS) for _ in range(pairs)]), rng)
    values: dict[str, np.ndarray] = {}
    for module in (mean_reversion, range_stats):
        for metric in module.pairscreen_register_metrics():
            values.update(metric.compute(p))
    hurst_ok = values["hurst"] < 0.5
    adf_ok = values["adf_pvalue"] < 0.7
    width_ok = values["range_width"] >= 0.40
    touches_ok = (values["touches_low"] >= 2) & (values["touches_high"] >= 2)
    return {
        "hurst": float(np.nanmean(values["hurst"])),
        "hurst_rs": float(np.nanmean(values["hurst_rs"])),
        "hurst_pass": float(hurst_ok.mean()),
        "adf_pass": float(adf_ok.mean()),
        "width_pass": float(width_ok.mean()),
        "touches_pass": float(touches_ok.mean()),
        "survive": float((hurst_ok & adf_ok & width_ok & touches_ok).mean()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(
        f"{args.pairs} series per kind, 540-day windows, daily volatility 3-5 %, "
        f"seed {args.seed}.\n"
    )
    print(
        "| series | mean `hurst` (variance ratio) | mean `hurst_rs` (R/S) "
        "| hurst < 0.5 | adf < 0.7 | range ≥ 0.40 | touches ≥ 2 | survive all |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, kind in KINDS.items():
        r = evaluate(kind, args.pairs, rng)
        print(
            f"| {label} | {r['hurst']:.3f} | {r['hurst_rs']:.3f} | {r['hurst_pass']:.0%} "
            f"| {r['adf_pass']:.0%} | {r['width_pass']:.0%} | {r['touches_pass']:.0%} "
            f"| {r['survive']:.0%} |"
        )


if __name__ == "__main__":
    main()
