"""``fit = "mle"``: the Kalman filter's q and r by maximum likelihood equal statsmodels'.

The reference is statsmodels' state-space ``MLEModel`` set up as the same model: design
``[ln B_t, 1]`` (time-varying), transition and selection ``I``, state covariance ``q·I``,
observation variance ``r``, the state known at zero with covariance zero before the first
close (``initialize_known``) and the first 30 closes left out of the likelihood
(``loglikelihood_burn``), fitted by BFGS over ``(ln q, ln r)`` from the plugin's defaults.
Compared on every real pair of ``tests/fixtures`` whose likelihood has an interior maximum
(26 of the 65 of ``test_kalman``) and on 200 pairs simulated from the model itself.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from statsmodels.tsa.statespace.mlemodel import MLEModel

from pairscreen.contracts import PairPanel
from tests.series_factory import PairSeries, all_series, by_length, panel
from tests.test_kalman import NUMBERS, real_panels, reference, switching_pair, window_of

from pairscreen_plugins.metrics._kalman_mle import fit_variances  # isort: skip
from pairscreen_plugins.metrics.kalman import (  # isort: skip
    BURN_IN,
    DEFAULT_Q,
    DEFAULT_R,
    MIN_CLOSES,
    KalmanMetric,
)

WINDOW = 540
TOLERANCE = 1e-5  # relative, on q and on r


class ChanModel(MLEModel):  # type: ignore[misc]
    """ln A_t = β_t ln B_t + alpha_t + e_t with (β, alpha) a random walk: the plugin's model."""

    def __init__(self, y: np.ndarray, x: np.ndarray) -> None:
        super().__init__(y, k_states=2, loglikelihood_burn=BURN_IN)
        design = np.zeros((1, 2, y.shape[0]))
        design[0, 0], design[0, 1] = x, 1.0
        self["design"] = design
        self["transition"] = np.eye(2)
        self["selection"] = np.eye(2)
        self.ssm.initialize_known(np.zeros(2), np.zeros((2, 2)))

    @property
    def param_names(self) -> list[str]:
        return ["q", "r"]

    @property
    def start_params(self) -> np.ndarray:
        return np.array([DEFAULT_Q, DEFAULT_R])

    def transform_params(self, unconstrained: np.ndarray) -> np.ndarray:
        return np.exp(unconstrained)

    def untransform_params(self, constrained: np.ndarray) -> np.ndarray:
        return np.log(constrained)

    def update(self, params: np.ndarray, **kwargs: Any) -> np.ndarray:
        params = super().update(params, **kwargs)
        self["state_cov"] = params[0] * np.eye(2)
        self["obs_cov", 0, 0] = params[1]
        return params


def statsmodels_fit(y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float, ChanModel]:
    model = ChanModel(y, x)
    with warnings.catch_warnings():  # BFGS warns of lost precision at gtol 1e-12, at the top
        warnings.simplefilter("ignore")
        result = model.fit(method="bfgs", gtol=1e-12, maxiter=5000, disp=False, cov_type="none")
    return np.asarray(result.params), float(result.llf), model


def compare(ys: np.ndarray, xs: np.ndarray) -> dict[str, int]:
    """Fit every row both ways. Equal to TOLERANCE; or the same maximum on a ridge (the two
    estimates differ along a direction where statsmodels' own likelihood is flat to 1e-12,
    so which point BFGS stops at depends on the last bits of the libraries: seen with
    statsmodels 0.15.0 and scipy 1.17.1 on one real pair, r apart by 1.7e-5 relative,
    likelihoods by 7e-13); or (where BFGS from the defaults stops at another, lower local
    maximum) ours is higher by statsmodels' own likelihood."""
    fit = fit_variances(ys, xs, burn=BURN_IN)
    counts = {"equal": 0, "ridge": 0, "higher": 0, "boundary": 0}
    for i in range(ys.shape[0]):
        if not np.isfinite(fit.q[i]):
            assert "not identified" in fit.reasons[i]
            counts["boundary"] += 1
            continue
        assert fit.reasons[i] == ""
        params, llf, model = statsmodels_fit(ys[i], xs[i])
        ours = np.array([fit.q[i], fit.r[i]])
        at_ours = float(model.loglike(ours))
        # our likelihood is statsmodels' at our estimate
        assert fit.log_likelihood[i] == pytest.approx(at_ours, rel=1e-10)
        if np.allclose(ours, params, rtol=TOLERANCE, atol=0):
            counts["equal"] += 1
        elif abs(at_ours - llf) <= 1e-12 * abs(llf) and np.allclose(ours, params, rtol=1e-3):
            counts["ridge"] += 1
        else:
            assert at_ours > llf + 1e-6, (i, ours, params, at_ours, llf)
            counts["higher"] += 1
    return counts


def test_real_pairs_equal_statsmodels() -> None:
    ys, xs = [], []
    for members, _ in real_panels():
        for pair in members:
            inside = window_of(pair)
            ys.append(np.log(pair.close_a[inside]))
            xs.append(np.log(pair.close_b[inside]))
    counts = {"equal": 0, "ridge": 0, "higher": 0, "boundary": 0}
    for n in sorted({y.shape[0] for y in ys}):
        rows = [i for i, y in enumerate(ys) if y.shape[0] == n]
        part = compare(np.stack([ys[i] for i in rows]), np.stack([xs[i] for i in rows]))
        counts = {k: counts[k] + part[k] for k in counts}
    assert counts["equal"] + counts["ridge"] == 26 and counts["ridge"] <= 1, counts
    assert (counts["higher"], counts["boundary"]) == (0, 39), counts


def simulated(n: int, days: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs drawn from the model: q from 1e-6 to 1e-3, r from 1e-5 to 1e-2 (log-uniform)."""
    rng = np.random.default_rng(seed)
    q = np.exp(rng.uniform(np.log(1e-6), np.log(1e-3), n))
    r = np.exp(rng.uniform(np.log(1e-5), np.log(1e-2), n))
    x = 3.0 + np.cumsum(rng.normal(0.0, 0.03, (n, days)), axis=1)
    walk = np.sqrt(q)[:, None]
    beta = rng.uniform(0.5, 1.5, (n, 1)) + np.cumsum(rng.normal(0, 1, (n, days)) * walk, axis=1)
    alpha = rng.uniform(-0.5, 0.5, (n, 1)) + np.cumsum(rng.normal(0, 1, (n, days)) * walk, axis=1)
    y = beta * x + alpha + rng.normal(0.0, 1.0, (n, days)) * np.sqrt(r)[:, None]
    return y, x, q / r


def test_simulated_pairs_equal_statsmodels() -> None:
    y, x, _ = simulated(200, 250, seed=35)
    counts = compare(y, x)
    assert sum(counts.values()) == 200
    # measured: 182 equal, 1 higher (statsmodels at a lower local maximum), 17 boundary
    assert counts["equal"] + counts["ridge"] >= 180, counts
    assert counts["higher"] <= 2 and counts["boundary"] <= 20, counts


def test_the_metric_runs_the_filter_with_each_pairs_fit() -> None:
    """With fit = "mle" every published number is the replayed filter at the fitted q, r."""
    for members, p in real_panels():
        got = KalmanMetric(fit="mle").compute(p)
        for row, pair in enumerate(members):
            q, r = float(got["kalman_q"][row]), float(got["kalman_r"][row])
            if np.isnan(q):
                assert "not identified" in got["kalman_reason"][row]
                assert all(np.isnan(got[name][row]) for name in NUMBERS)
                continue
            inside = window_of(pair)
            x, y = np.log(pair.close_b[inside]), np.log(pair.close_a[inside])
            if row % 4 == 0:  # the row alone has the same fit: rows are independent
                fit = fit_variances(y[None], x[None], burn=BURN_IN)
                assert (q, r) == (fit.q[0], fit.r[0])
            want = reference(x, y, q, r)
            for name in NUMBERS:
                assert float(got[name][row]) == pytest.approx(want[name], rel=1e-12, abs=1e-12), (
                    name
                )
            assert got["kalman_reason"][row] == ""


def test_the_fitted_filter_follows_a_hedge_ratio_that_changes() -> None:
    cases = [switching_pair(seed) for seed in range(8)]
    p: PairPanel = panel([s for s, _, _ in cases], window_days=WINDOW)
    got = KalmanMetric(fit="mle").compute(p)
    followed = 0
    for row, (s, _, after) in enumerate(cases):
        beta = float(got["kalman_hedge_ratio"][row])
        if np.isnan(beta):  # r -> 0: the state takes all the noise (the other 3 of 8)
            assert "q/r = 100" in got["kalman_reason"][row]
            continue
        assert abs(beta - after) < 0.1 * after, (s.name, beta, after)
        followed += 1
    assert followed == 5


def test_a_fixed_fit_publishes_the_options() -> None:
    y, x, _ = simulated(3, 120, seed=1)
    volume = np.full(120, 1e6)
    series = [PairSeries(f"s{i}", np.exp(y[i]), np.exp(x[i]), volume, volume) for i in range(3)]
    got = KalmanMetric(q=2e-5, r=3e-3).compute(panel(series, window_days=120))
    assert list(got["kalman_q"]) == [2e-5] * 3 and list(got["kalman_r"]) == [3e-3] * 3


def test_constant_legs_have_no_fit_and_say_why() -> None:
    """A constant leg: the filter learns it exactly, the likelihood grows without bound as r
    goes to 0 (with ln B constant, β and alpha are not told apart either)."""
    y, x, _ = simulated(3, 200, seed=2)
    y[0], x[1] = np.log(5.0), np.log(2.0)
    fit = fit_variances(y, x, burn=BURN_IN)
    assert np.isnan(fit.q[:2]).all() and np.isnan(fit.r[:2]).all()
    assert list(fit.reasons[:2]) == [
        "ln A is constant over W: q and r have no maximum-likelihood estimate",
        "ln B is constant over W: q and r have no maximum-likelihood estimate",
    ]
    assert np.isfinite(fit.q[2]) and fit.reasons[2] == ""


def test_a_window_too_short_for_the_filter_has_no_fit_either() -> None:
    group = by_length(all_series())[900][:2]
    got = KalmanMetric(fit="mle").compute(panel(group, window_days=MIN_CLOSES - 1))
    assert np.isnan(got["kalman_q"]).all() and np.isnan(got["kalman_r"]).all()
    assert (
        list(got["kalman_reason"])
        == [f"W holds {MIN_CLOSES - 1} closes, the Kalman filter needs at least {MIN_CLOSES}"] * 2
    )
