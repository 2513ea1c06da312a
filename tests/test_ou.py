"""The OU fit and Bertram's bands against direct, independent computations.

* The OU fields equal the exact conditional MLE computed pair by pair with statsmodels' OLS of
  ``r(t)`` on ``r(t-1)`` (mapped to θ, μ, sigma by the closed form), on real closes (crypto pairs
  and mixed crypto x exchange calendars) and on simulated series.
* On simulated OU paths with known θ, μ, sigma the fit recovers them within their sampling error.
* Bertram's thresholds equal ArbitrageLab's wherever its solver converged (recorded reference),
  the published example figures, and an independent implementation from the paper's formulas:
  the expected trade length as the mean first-passage time of the OU process (numerical
  quadrature of its integral representation, not eq. 9's erfi) and the maximum of eq. 5 found
  by a bounded scalar optimiser, not the first-order condition.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pairscreen.contracts import Candles, PairPanel
from pairscreen.engine.panels import AlignedPair, align, panel_of
from tests.series_factory import by_length, mean_reverting, panel, random_walk, short_history

from pairscreen_plugins.metrics import _ou  # isort: skip
from pairscreen_plugins.metrics.ou import OUBandsMetric, OUMetric, window_fit  # isort: skip

FIXTURES = Path(__file__).parent / "fixtures"
REAL = ("BTC", "ETH", "LTC", "SOL", "DOGE", "LINK", "PAXG", "GLD", "AAPL")


def real_candles(ticker: str) -> Candles:
    rows = (FIXTURES / "ou" / "realdata" / f"{ticker}.csv").read_text().splitlines()[1:]
    dates = np.array([r.split(",")[0] for r in rows], dtype="datetime64[D]")
    close = np.array([float(r.split(",")[1]) for r in rows])
    volume = np.array([float(r.split(",")[2] or "nan") for r in rows])
    return Candles(ticker, dates, close, volume)


def real_pairs() -> list[AlignedPair]:
    candles = {t: real_candles(t) for t in REAL}
    return [align(candles[a], candles[b]) for i, a in enumerate(REAL) for b in REAL[i + 1 :]]


def direct_fit(r: np.ndarray, dates: np.ndarray) -> tuple[float, float, float, float]:
    """θ, μ, sigma, b of one series: statsmodels OLS of r(t) on [1, r(t-1)], then the
    closed form."""
    import statsmodels.api as sm

    res = sm.OLS(r[1:], sm.add_constant(r[:-1])).fit()
    a, b = (float(v) for v in res.params)
    n = r.size - 1
    s2 = float(res.ssr) / n
    step = float((dates[-1] - dates[0]).astype("timedelta64[D]").astype(float)) / n
    if not 0 < b < 1:
        return math.nan, math.nan, math.nan, b
    mu = -math.log(b) / step
    return a / (1 - b), mu, math.sqrt(s2 * 2 * mu / (1 - b * b)), b


def check_against_direct(p: PairPanel) -> int:
    """Every row's OU fields equal the direct fit; returns how many rows had a fit."""
    got = OUMetric().compute(p)
    window = p.window
    dates = p.dates[:, -window.shape[1] :]
    fitted = 0
    for i in range(p.n_pairs):
        theta, mu, sigma, b = direct_fit(window[i], dates[i])
        if math.isnan(mu):
            assert math.isnan(got["ou_speed"][i]) and got["ou_reason"][i], (i, b)
            assert str(round(b, 4))[:4] in got["ou_reason"][i]
            continue
        fitted += 1
        assert got["ou_reason"][i] == ""
        assert got["ou_mean"][i] == pytest.approx(theta, rel=1e-9, abs=1e-12)
        assert got["ou_speed"][i] == pytest.approx(mu, rel=1e-7)
        assert got["ou_sigma"][i] == pytest.approx(sigma, rel=1e-9)
        assert got["ou_half_life_days"][i] == pytest.approx(math.log(2) / mu, rel=1e-7)
    return fitted


def test_ou_fields_equal_the_direct_fit_on_real_pairs() -> None:
    pairs = real_pairs()
    mixed = 0
    fitted = 0
    for pair in pairs:
        p = panel_of([pair], pair.n_days, 540)
        steps = np.diff(p.dates[0, -540:]).astype(int)
        mixed += int((steps > 1).any())
        fitted += check_against_direct(p)
    assert mixed >= 10, "the GLD and AAPL pairs must exercise calendar gaps"
    assert fitted >= 20, "a test where nothing mean-reverts proves little"


def test_mixed_calendar_step_is_the_calendar_span_over_transitions() -> None:
    pair = align(real_candles("BTC"), real_candles("GLD"))
    p = panel_of([pair], pair.n_days, 540)
    span = p.metric_window  # W: the common closes of the last 540 calendar days
    dates = p.dates[:, span.columns]
    fit = _ou.fit_ou(p.window, dates)
    days = float((dates[0, -1] - dates[0, 0]).astype(int))
    assert fit.step_days[0] == pytest.approx(days / (span.observations - 1))
    assert fit.step_days[0] == pytest.approx(p.spacing(span), rel=1e-15)
    assert 1.3 < fit.step_days[0] < 1.6  # exchange days: about 7/5 calendar days apart
    assert window_fit(p).step_days[0] == p.spacing(span)  # the metric's step is the panel's
    crypto = align(real_candles("BTC"), real_candles("ETH"))
    q = panel_of([crypto], crypto.n_days, 540)
    assert q.window.shape[1] == 540
    assert _ou.fit_ou(q.window, q.dates[:, -540:]).step_days[0] == 1.0
    assert window_fit(q).step_days[0] == 1.0  # daily pairs: Δ is 1 exactly


def test_ou_half_life_is_the_half_life_metric_in_calendar_days() -> None:
    """Both fit the same closes of W (b = 1 + β) and scale by the same spacing, so they agree
    on daily and mixed-calendar pairs alike."""
    from pairscreen_plugins.metrics.half_life import HalfLifeMetric

    compared = 0
    for pair in real_pairs():
        p = panel_of([pair], pair.n_days, 540)
        ou = float(OUMetric().compute(p)["ou_half_life_days"][0])
        half = float(HalfLifeMetric().compute(p)["half_life_days"][0])
        if math.isfinite(ou) and math.isfinite(half):
            assert ou == pytest.approx(half, rel=1e-9), (pair.a, pair.b)
            compared += 1
    assert compared >= 20


def test_ou_fields_equal_the_direct_fit_on_simulated_series() -> None:
    series = [mean_reverting(100 + i) for i in range(12)] + [random_walk(200 + i) for i in range(6)]
    assert check_against_direct(panel(series)) >= 12
    for group in by_length(
        [short_history(300 + i, n) for i, n in enumerate((250, 400, 700))]
    ).values():
        check_against_direct(panel(group))


def test_one_pair_gets_the_same_bits_in_any_panel() -> None:
    series = [mean_reverting(400 + i) for i in range(6)]
    whole = OUMetric().compute(panel(series))
    for i, s in enumerate(series):
        alone = OUMetric().compute(panel([s]))
        for name in ("ou_mean", "ou_speed", "ou_sigma"):
            assert alone[name][0] == whole[name][i]


def test_an_explosive_and_a_flat_ratio_have_no_fit_and_say_why() -> None:
    n = 600
    dates = np.datetime64("2024-01-01") + np.arange(n)
    trending = np.exp(0.01 * 1.005 ** np.arange(n))  # explosive: b = 1.005
    flat = np.full(n, 2.0)
    ones = np.ones(n)
    p = PairPanel(
        ("T", "F"),
        ("X", "Y"),
        np.stack([dates, dates]),
        np.stack([trending, flat]),
        np.stack([ones, ones]),
        np.stack([ones, ones]),
        np.stack([ones, ones]),
    )
    got = OUMetric().compute(p)
    assert np.isnan(got["ou_speed"]).all()
    assert got["ou_reason"][0].startswith("no mean reversion: AR(1) slope b = ")
    assert got["ou_reason"][1] == "the window's log-ratio does not move"
    bands = OUBandsMetric().compute(p)
    assert np.isnan(bands["ou_entry"]).all() and (bands["ou_cost"] > 0).all()


def simulate_ou(theta: float, mu: float, sigma: float, n: int, paths: int, seed: int) -> np.ndarray:
    """Exact OU transitions at Δ = 1 day, started from the stationary law."""
    rng = np.random.default_rng(seed)
    b = math.exp(-mu)
    sd = sigma * math.sqrt((1 - b * b) / (2 * mu))
    x = np.empty((paths, n))
    x[:, 0] = theta + rng.normal(0, sigma / math.sqrt(2 * mu), paths)
    for t in range(1, n):
        x[:, t] = theta + b * (x[:, t - 1] - theta) + rng.normal(0, sd, paths)
    return x


@pytest.mark.parametrize(("theta", "mu", "sigma"), [(0.3, 0.05, 0.04), (-1.2, 0.2, 0.02)])
def test_simulated_ou_paths_recover_mu_and_sigma_within_sampling_error(
    theta: float, mu: float, sigma: float
) -> None:
    n, paths = 2000, 400
    x = simulate_ou(theta, mu, sigma, n, paths, seed=7)
    dates = np.broadcast_to(np.datetime64("2020-01-01") + np.arange(n), x.shape)
    fit = _ou.fit_ou(x, dates)
    b = math.exp(-mu)
    # Asymptotic standard errors: sd(b) = √((1 - b²)/n) through μ = -ln b; sigma's relative
    # error is about 1/√(2n) plus what μ carries into it.
    sd_mu = math.sqrt((1 - b * b) / n) / b
    sd_sigma = sigma * math.sqrt(1 / (2 * n) + (sd_mu / (2 * mu)) ** 2)
    # Each path within 4.5 standard errors, and the mean over paths within 4 of its own.
    assert np.all(np.abs(fit.speed - mu) < 4.5 * sd_mu + 0.2 * mu / n)
    assert np.all(np.abs(fit.sigma - sigma) < 4.5 * sd_sigma)
    # The MLE of μ is biased upward by about (1 + 3b)/n per step on finite samples.
    bias = (1 + 3 * b) / n
    assert abs(fit.speed.mean() - bias - mu) < 4 * sd_mu / math.sqrt(paths)
    assert abs(fit.sigma.mean() - sigma) < 4 * sd_sigma / math.sqrt(paths) + sigma * bias
    assert np.abs(fit.mean - theta).max() < 5 * sigma / mu / math.sqrt(n * mu / 2) + 0.05


# --- Bertram -------------------------------------------------------------------------------


def reference_cases() -> list[dict[str, float]]:
    cases: list[dict[str, float]] = json.loads(
        (FIXTURES / "ou" / "arbitragelab_bertram.json").read_text()
    )
    return cases


def test_bertram_equals_arbitragelab_where_its_solver_converged() -> None:
    cases = reference_cases()
    col = {k: np.array([c[k] for c in cases]) for k in cases[0]}
    got = _ou.bertram_bands(col["theta"], col["mu"], col["sigma"], col["c"])
    converged = np.abs(col["residual"]) < 1e-9
    assert converged.sum() >= 150
    assert np.abs(got.entry - col["entry"])[converged].max() < 1e-6
    assert np.abs(got.exit - col["exit"])[converged].max() < 1e-6
    np.testing.assert_allclose(got.trade_days[converged], col["trade_length"][converged], rtol=1e-6)
    np.testing.assert_allclose(
        got.return_per_year[converged] / 365.0, col["expected_return"][converged], rtol=1e-6
    )
    # Where fsolve stopped early its entry is not optimal: ours earns at least as much.
    stuck = ~converged
    assert (got.return_per_year[stuck] / 365.0 >= col["expected_return"][stuck] - 1e-12).all()


def test_bertram_published_example() -> None:
    """Bertram's example process (θ = 0, μ = 180.967, sigma = 0.1538 a year) at c = 0.001, the
    figures ArbitrageLab's own tests check: trade length 0.017122, return 0.492358."""
    got = _ou.bertram_bands(
        np.array([0.0]), np.array([180.9670]), np.array([0.1538]), np.array([0.001])
    )
    assert got.trade_days[0] == pytest.approx(0.017122, abs=1e-6)
    assert got.return_per_year[0] / 365.0 == pytest.approx(0.492358, abs=1e-6)
    assert got.exit[0] == -got.entry[0]


def first_passage_days(a: float, m: float, theta: float, mu: float, sigma: float) -> float:
    """Expected time of one cycle a -> m -> a of the OU process, by quadrature of the mean
    first-passage time ``E τ(x0 -> m) = ∫_x0^m ψ(y) ∫_-∞^y 2 / (sigma² ψ(z)) dz dy``, ψ the scale
    density ``exp(μ (y - θ)² / sigma²)``, in the process's units (not Bertram's eq. 9)."""
    from scipy import integrate, special

    s = sigma / math.sqrt(mu)

    def up(v: float) -> float:  # inner integral done in closed form (Gaussian tail)
        return math.exp(v * v) * math.sqrt(math.pi) / 2 * special.erfc(-v)

    def down(v: float) -> float:  # mirror: from m down to a
        return math.exp(v * v) * math.sqrt(math.pi) / 2 * special.erfc(v)

    ua, um = (a - theta) / s, (m - theta) / s
    t_up = integrate.quad(up, ua, um, epsabs=0, epsrel=1e-13)[0]
    t_down = integrate.quad(down, ua, um, epsabs=0, epsrel=1e-13)[0]
    return 2.0 / mu * (t_up + t_down)


def independent_entry(theta: float, mu: float, sigma: float, c: float) -> tuple[float, float]:
    """argmax over a < θ of (m - a - c) / T(a, m), m = 2θ - a, T by quadrature."""
    from scipy import optimize

    s = sigma / math.sqrt(mu)

    def negative_rate(u: float) -> float:
        a, m = theta + u * s, theta - u * s
        return -(m - a - c) / first_passage_days(a, m, theta, mu, sigma)

    best = optimize.minimize_scalar(
        negative_rate,
        bounds=(-(c / s) - 4.0, -c / (2 * s)),
        method="bounded",
        options={"xatol": 1e-11},
    )
    u = float(best.x)
    return theta + u * s, -float(best.fun)


@pytest.mark.parametrize("case", range(0, 200, 13))
def test_bertram_equals_an_independent_quadrature_and_optimiser(case: int) -> None:
    c = reference_cases()[case]
    theta, mu, sigma, cost = c["theta"], c["mu"], c["sigma"], c["c"]
    got = _ou.bertram_bands(np.array([theta]), np.array([mu]), np.array([sigma]), np.array([cost]))
    entry, rate = independent_entry(theta, mu, sigma, cost)
    assert got.entry[0] == pytest.approx(entry, abs=1e-6)
    assert got.exit[0] == pytest.approx(2 * theta - entry, abs=1e-6)
    t = first_passage_days(got.entry[0], got.exit[0], theta, mu, sigma)
    assert got.trade_days[0] == pytest.approx(t, rel=1e-9)
    assert got.return_per_year[0] / 365.0 == pytest.approx(rate, rel=1e-8)


def test_dawson_root_solves_the_first_order_condition_everywhere() -> None:
    from scipy.special import dawsn

    k = np.geomspace(1e-9, 1e4, 2000)
    u = _ou.dawson_root(k)
    assert (u < 0).all()
    # D(u) - u through the series near 0 (where dawsn(u) - u cancels), checked against
    # dawsn where both are accurate.
    assert (np.abs(_ou.dawson_excess(u, dawsn(u)) - k) <= 1e-12 * k).all()
    x = -np.linspace(0.05, 0.2499, 200)  # dawsn(x) - x loses up to ~3 digits here itself
    np.testing.assert_allclose(_ou.dawson_excess(x, dawsn(x)), dawsn(x) - x, rtol=1e-11)
    assert np.isnan(_ou.dawson_root(np.array([0.0, -1.0, np.nan]))).all()
    assert _ou.dawson_root(np.array([[0.1, 0.2]])).shape == (1, 2)


def test_round_trip_cost_is_two_swaps_in_log_units() -> None:
    assert _ou.round_trip_cost(0.001) == pytest.approx(-2 * math.log(0.999), rel=1e-15)
    p = panel([mean_reverting(1)])
    assert OUBandsMetric().compute(p)["ou_cost"][0] == pytest.approx(-2 * math.log(0.999))
