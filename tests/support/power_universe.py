"""Simulated universes for the evaluation's power study (benchmarks/evaluation_power.py and
its small CI version, tests/test_evaluation_power.py).

Every asset's log-price is a shared market factor plus its own random walk, except in the
planted groups: the assets of a group share one random-walk trend and each adds its own
Ornstein-Uhlenbeck deviation (AR(1) with the given half-life and standard deviation), so the
pairs inside a group truly mean-revert and every other pair is a random walk. One sector:
every pair of assets is screened. Each universe comes from its own seed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from pairscreen.bootstrap import load_all_plugins
from pairscreen.config import load_settings
from pairscreen.contracts import Asset, Candles
from pairscreen.evaluation.dates import as_of_dates
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import Evaluation, evaluate
from pairscreen.evaluation.verdicts import Market
from pairscreen.universe import Universe

LAST_DAY = date(2025, 6, 30)
WINDOW_DAYS = 540
MIN_HISTORY_DAYS = 200
HORIZONS = (30, 90)
FEE = 0.001
MARKET_VOL = 0.02
ASSET_VOL = 0.03


@dataclass(frozen=True)
class Group:
    """Assets sharing one trend, each with an OU deviation of this half-life and size."""

    size: int
    half_life_days: float
    deviation_sd: float


def planted(deviation_sd: float, groups: int = 4, size: int = 3) -> tuple[Group, ...]:
    """``groups`` groups of ``size`` assets, half-lives spread over 5 to 20 days."""
    half_lives = np.linspace(5.0, 20.0, groups)
    return tuple(Group(size, float(h), deviation_sd) for h in half_lives)


def _ou(rng: np.random.Generator, n: int, half_life: float, sd: float) -> np.ndarray:
    phi = 0.5 ** (1.0 / half_life)
    shocks = rng.normal(0.0, sd * np.sqrt(1.0 - phi**2), n)
    out = np.empty(n)
    out[0] = rng.normal(0.0, sd)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + shocks[t]
    return out


def universe(
    seed: int, groups: Sequence[Group], n_assets: int = 30, n_days: int = 1100
) -> tuple[Universe, dict[str, Candles]]:
    """``n_assets`` assets over ``n_days`` days ending :data:`LAST_DAY`, the groups first."""
    rng = np.random.default_rng(seed)
    dates = np.datetime64(LAST_DAY) - np.arange(n_days)[::-1]
    market = np.cumsum(rng.normal(0.0, MARKET_VOL, n_days))
    logs: list[np.ndarray] = []
    for group in groups:
        trend = np.cumsum(rng.normal(0.0, ASSET_VOL, n_days))
        logs += [
            market + trend + _ou(rng, n_days, group.half_life_days, group.deviation_sd)
            for _ in range(group.size)
        ]
    while len(logs) < n_assets:
        logs.append(market + np.cumsum(rng.normal(0.0, ASSET_VOL, n_days)))
    assets, candles = [], {}
    for i, log_price in enumerate(logs):
        ticker = f"X{i:02d}"
        assets.append(Asset(ticker, sector="all"))
        volume = rng.lognormal(15.0, 0.5, n_days)
        candles[ticker] = Candles(ticker, dates, 20.0 * np.exp(log_price), volume)
    return Universe(tuple(assets), market_source="csv"), candles


def evaluate_universe(
    u: Universe,
    candles: dict[str, Candles],
    every: int,
    n_days: int = 1100,
    followed_days: int = min(HORIZONS),
) -> Evaluation:
    """``evaluate`` as ``pairscreen evaluate --every EVERY`` runs it on this universe over the
    default range (the screen's own rules only, as ``--publish`` does). The last as-of day
    is ``followed_days`` before the data ends: the shortest horizon's (the default range:
    each horizon uses every day it can follow, a longer one leaves out the last days), or
    the longest's (the range before)."""
    plugins = load_all_plugins(load_settings(data_dir=tempfile.gettempdir()), u)
    market = Market.of(u, candles, window_days=WINDOW_DAYS, min_history_days=MIN_HISTORY_DAYS)
    first = LAST_DAY - timedelta(days=n_days - 1 - WINDOW_DAYS)
    dates = as_of_dates(first, LAST_DAY - timedelta(days=followed_days), every)
    return evaluate(
        plugins,
        market,
        rule_sets(plugins, u, [])[:1],
        dates,
        HORIZONS,
        every_days=every,
        fee=FEE,
        depegs_at=lambda _at: {},
    )
