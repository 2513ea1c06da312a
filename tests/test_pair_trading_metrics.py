"""half_life_days, the cointegration fields (both Engle-Granger orders, Johansen) and
return_correlation against their references.

References, run per series: statsmodels' ``coint`` both ways (defaults: trend "c", AIC
lags) and the OLS slopes it fits, ``coint_johansen(x, 0, 1)``, a direct AR(1) least-squares
fit of the log-ratio, numpy's ``corrcoef`` of the daily log returns. The corpus is the
parity corpus (mean-reverting, random walks, trending, short histories, flat stretches, a
constant ratio) plus series with a flat leg, each checked alone (a snapshot) and in one
panel per history length (the screen).
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest
from statsmodels.regression.linear_model import OLS
from statsmodels.tools import add_constant
from statsmodels.tsa.stattools import coint
from statsmodels.tsa.vector_ar.vecm import coint_johansen

from tests.series_factory import (
    PairSeries,
    all_series,
    by_length,
    mean_reverting,
    ou_log_ratio,
    panel,
    random_walk,
    trending,
)

from pairscreen_plugins.metrics import cointegration, correlation, half_life, johansen  # isort: skip

WINDOW = 540
METRICS = (
    half_life.HalfLifeMetric(),
    cointegration.CointegrationMetric(),
    johansen.JohansenMetric(),
    correlation.ReturnCorrelationMetric(),
)


def flat_leg(seed: int, n: int, leg: str) -> PairSeries:
    """One leg constant (a stablecoin that never moved), the other a random walk."""
    rng = np.random.default_rng(seed)
    moving = 30.0 * np.exp(np.cumsum(rng.normal(0.0, 0.04, n)))
    flat = np.full(n, 1.0)
    a, b = (flat, moving) if leg == "A" else (moving, flat)
    volume = np.full(n, 1e6)
    return PairSeries(f"flat_leg_{leg}[{seed}]", a, b, volume, volume)


def corpus() -> list[PairSeries]:
    """The parity corpus and 60 more full-window series, and flat legs."""
    return [
        *all_series(),
        *(mean_reverting(11000 + i, 541) for i in range(25)),
        *(random_walk(12000 + i, 541) for i in range(25)),
        *(trending(13000 + i, 541) for i in range(10)),
        *(flat_leg(8000 + i, 900, "A") for i in range(2)),
        *(flat_leg(8100 + i, 900, "B") for i in range(2)),
    ]


SERIES = corpus()
BY_NAME = {s.name: s for s in SERIES}


def compute(series: list[PairSeries]) -> dict[str, np.ndarray]:
    p = panel(series)
    out: dict[str, np.ndarray] = {}
    for metric in METRICS:
        out.update(metric.compute(p))
    return out


@functools.cache
def reference(name: str) -> dict[str, float]:
    s = BY_NAME[name]
    log_a, log_b = np.log(s.close_a[-WINDOW:]), np.log(s.close_b[-WINDOW:])
    flat = np.ptp(log_a) == 0 or np.ptp(log_b) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # collinear legs: statsmodels warns and answers 0
        p_ab = math.nan if flat else float(coint(log_a, log_b)[1])
        p_ba = math.nan if flat else float(coint(log_b, log_a)[1])
        slope = math.nan if flat else float(OLS(log_a, add_constant(log_b)).fit().params[1])
        slope_ba = math.nan if flat else float(OLS(log_b, add_constant(log_a)).fit().params[1])
        # Exactly proportional legs: the eigenvalue is 1 and statsmodels' statistic is the
        # size of a rounding error; the metric answers null there.
        collinear = flat or abs(np.corrcoef(log_a, log_b)[0, 1]) > 1 - 1e-12
        johansen = None if collinear else coint_johansen(np.column_stack([log_a, log_b]), 0, 1)
    w = s.log_ratio[-WINDOW:]
    design = np.column_stack([np.ones(w.size - 1), w[:-1]])
    beta = math.nan if np.ptp(w) == 0 else np.linalg.lstsq(design, np.diff(w), rcond=None)[0][1]
    returns_a = np.diff(np.log(s.close_a[-WINDOW - 1 :]))
    returns_b = np.diff(np.log(s.close_b[-WINDOW - 1 :]))
    moving = returns_a.std() > 0 and returns_b.std() > 0
    return {
        "coint_pvalue": max(p_ab, p_ba),
        "coint_pvalue_ab": p_ab,
        "coint_pvalue_ba": p_ba,
        "hedge_ratio": slope,
        "hedge_ratio_ba": slope_ba,
        "johansen_trace": math.nan if johansen is None else float(johansen.lr1[0]),
        "johansen_trace_crit95": math.nan if johansen is None else float(johansen.cvt[0, 1]),
        "half_life_days": -math.log(2) / math.log1p(beta) if -1 < beta < 0 else math.nan,
        "return_correlation": float(np.corrcoef(returns_a, returns_b)[0, 1])
        if moving
        else math.nan,
    }


TOLERANCE = {  # absolute for p-values and correlations, relative for the rest
    "coint_pvalue": ("abs", 1e-9),
    "coint_pvalue_ab": ("abs", 1e-9),
    "coint_pvalue_ba": ("abs", 1e-9),
    "hedge_ratio": ("rel", 1e-9),
    "hedge_ratio_ba": ("rel", 1e-9),
    "johansen_trace": ("rel", 1e-9),
    "johansen_trace_crit95": ("abs", 0.0),
    "half_life_days": ("rel", 1e-9),
    "return_correlation": ("abs", 1e-12),
}


def check_row(name: str, values: dict[str, np.ndarray], row: int) -> None:
    want = reference(name)
    for field, (kind, tol) in TOLERANCE.items():
        got = float(values[field][row])
        if math.isnan(want[field]):
            assert math.isnan(got), (name, field, got)
            continue
        scale = abs(want[field]) if kind == "rel" else 1.0
        assert abs(got - want[field]) <= tol * scale, (name, field, got, want[field])


@pytest.mark.parametrize("name", [s.name for s in SERIES])
def test_single_pair_panel_matches_the_references(name: str) -> None:
    check_row(name, compute([BY_NAME[name]]), 0)


@pytest.mark.parametrize("length", sorted(by_length(SERIES)))
def test_each_history_length_in_one_panel_matches_the_references(length: int) -> None:
    group = by_length(SERIES)[length]
    values = compute(group)
    for row, s in enumerate(group):
        check_row(s.name, values, row)


def test_the_corpus_covers_every_kind_of_series() -> None:
    kinds = {s.name.split("[")[0] for s in SERIES}
    assert {"mean_reverting", "random_walk", "trending", "flat_leg_A", "flat_leg_B"} <= kinds
    assert {"constant_ratio", "flat_segments", "short200", "short541"} <= kinds
    assert len(SERIES) >= 250


def test_a_flat_leg_gives_nulls_not_nan_errors() -> None:
    values = compute([s for s in SERIES if s.name.startswith("flat_leg")])
    for field in ("coint_pvalue", "hedge_ratio", "return_correlation", "johansen_trace"):
        assert np.isnan(values[field]).all(), field
    # The ratio still moves (the other leg does), so its half-life is a question of its own.
    assert values["half_life_days"].shape == (4,)


def test_a_constant_ratio_is_statsmodels_perfect_cointegration() -> None:
    s = next(x for x in SERIES if x.name.startswith("constant_ratio"))
    values = compute([s])
    assert values["coint_pvalue"][0] == 0.0  # statsmodels' collinear answer
    assert values["hedge_ratio"][0] == pytest.approx(1.0, rel=1e-12)
    assert values["coint_pvalue_ab"][0] == values["coint_pvalue_ba"][0] == 0.0
    assert math.isnan(values["johansen_trace"][0])  # eigenvalue 1: no finite statistic
    assert math.isnan(values["half_life_days"][0])
    assert values["return_correlation"][0] == pytest.approx(1.0, abs=1e-12)


def test_too_short_windows_are_null() -> None:
    s = next(x for x in SERIES if x.name.startswith("mean_reverting"))
    short = PairSeries("short", s.close_a[:10], s.close_b[:10], s.volume_a[:10], s.volume_b[:10])
    tiny = PairSeries("tiny", s.close_a[:2], s.close_b[:2], s.volume_a[:2], s.volume_b[:2])
    assert np.isnan(compute([short])["coint_pvalue"]).all()
    values = compute([tiny])
    for field in TOLERANCE:
        assert np.isnan(values[field]).all(), field


def test_no_reversion_means_no_half_life() -> None:
    assert np.isnan(half_life.half_life_days(np.array([0.0, 0.01, -1.0, -1.5, np.nan]))).all()
    assert half_life.half_life_days(np.array([-0.5]))[0] == pytest.approx(1.0)


def test_a_known_ou_half_life_is_recovered_within_its_confidence_interval() -> None:
    """phi = 0.95 a day: a true half-life of ln 2 / -ln 0.95 = 13.5 days. The 95 % interval
    of each fit (beta +- 1.96 standard errors, mapped through the half-life) must hold it
    about 95 % of the time over 200 independent windows."""
    phi, n_series = 0.95, 200
    true_half_life = -math.log(2) / math.log(phi)
    windows = np.stack(
        [ou_log_ratio(np.random.default_rng(9000 + i), WINDOW, phi, 0.04) for i in range(n_series)]
    )
    estimates = half_life.half_life_days(half_life.ar1_beta(windows))
    covered = 0
    for row, estimate in zip(windows, estimates, strict=True):
        fit = OLS(np.diff(row), add_constant(row[:-1])).fit()
        beta, se = fit.params[1], fit.bse[1]
        low, high = (-math.log(2) / math.log1p(b) for b in (beta - 1.96 * se, beta + 1.96 * se))
        assert low <= estimate <= high
        covered += low <= true_half_life <= high
    assert 0.9 * n_series <= covered <= 0.99 * n_series
    assert abs(np.median(estimates) - true_half_life) < 0.15 * true_half_life
