"""The ``kalman`` metric equals the reference recursion, pair by pair.

The reference is ArbitrageLab's ``KalmanFilterStrategy.update`` (after Chan): replayed here one
pair at a time with 2x2 numpy matrices, written independently of the plugin's per-entry
columns, and checked again against ``pykalman.KalmanFilter.filter`` with the same matrices.
Both on real pairs (``tests/fixtures/realdata``: ten Binance coins to 2023-12-31, every pair
of them; and each of them against AAPL and GLD of ``tests/fixtures/calendar_days``, a mixed
calendar) and on the 200+ simulated pairs of ``tests/series_factory``. A pair whose true hedge
ratio changes halfway shows what the filter is for: it ends near the new ratio, the window's
OLS slope does not.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pykalman import KalmanFilter

from pairscreen import clock
from pairscreen.config import load_settings
from pairscreen.contracts import Candles, PairPanel
from pairscreen.engine.panels import AlignedPair, align, group_by_history
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.registry import PluginError, Plugins
from tests.series_factory import LAST_DAY, PairSeries, all_series, by_length, panel
from tests.support.cli import newcomer_env, run_cli

from pairscreen_plugins.metrics.cointegration import CointegrationMetric  # isort: skip
from pairscreen_plugins.metrics.kalman import (  # isort: skip
    BURN_IN,
    CONSTANT_B,
    DEFAULT_Q,
    DEFAULT_R,
    MIN_CLOSES,
    KalmanMetric,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
COINS = ("ADA", "BCH", "BTC", "DOGE", "ETH", "LTC", "PAXG", "TRX", "XLM", "XRP")
EQUITIES = ("AAPL", "GLD")
WINDOW = 540
NUMBERS = (
    "kalman_hedge_ratio",
    "kalman_intercept",
    "kalman_spread",
    "kalman_spread_std",
    "kalman_z",
    "kalman_hedge_drift",
)
PLUGIN = "kalman"
DEMO_UNIVERSE = (Path(clock.__file__).resolve().parent / "demo_universe.toml").read_text()


def reference(x: np.ndarray, y: np.ndarray, q: float, r: float) -> dict[str, float]:
    """ArbitrageLab's update, close by close, as 2x2 matrices; the published fields."""
    state = np.zeros(2)
    covariance: np.ndarray | None = None  # no P before the first close
    burn = np.nan
    e = spread_std = np.nan
    for t, (xt, yt) in enumerate(zip(x, y, strict=True)):
        f = np.array([[xt, 1.0]])
        prior = np.zeros((2, 2)) if covariance is None else covariance + q * np.eye(2)
        e = yt - (f @ state)[0]
        spread_std = np.sqrt((f @ prior @ f.T)[0, 0] + r)
        gain = prior @ f.T / spread_std**2
        covariance = prior - gain @ f @ prior
        state = state + gain[:, 0] * e
        if t == BURN_IN - 1:
            burn = state[0]
    return {
        "kalman_hedge_ratio": state[0],
        "kalman_intercept": state[1],
        "kalman_spread": e,
        "kalman_spread_std": spread_std,
        "kalman_z": e / spread_std,
        "kalman_hedge_drift": (state[0] - burn) / abs(state[0]),
    }


def by_pykalman(x: np.ndarray, y: np.ndarray, q: float, r: float) -> dict[str, float]:
    """The same model through pykalman. Its first step applies no transition (the predicted
    covariance is the initial one, 0), as the reference's first close has R = 0; so its
    filtered means are the reference's states close for close, and the last forecast error
    and its variance come from the state and covariance after the close before."""
    kf = KalmanFilter(
        transition_matrices=np.eye(2),
        observation_matrices=np.stack([x, np.ones_like(x)], axis=1)[:, None, :],
        transition_covariance=q * np.eye(2),
        observation_covariance=np.array([[r]]),
        initial_state_mean=np.zeros(2),
        initial_state_covariance=np.zeros((2, 2)),
    )
    means, covariances = kf.filter(y[:, None])
    f = np.array([x[-1], 1.0])
    e = y[-1] - f @ means[-2]
    spread_std = np.sqrt(f @ (covariances[-2] + q * np.eye(2)) @ f + r)
    beta = means[-1, 0]
    return {
        "kalman_hedge_ratio": beta,
        "kalman_intercept": means[-1, 1],
        "kalman_spread": e,
        "kalman_spread_std": spread_std,
        "kalman_z": e / spread_std,
        "kalman_hedge_drift": (beta - means[BURN_IN - 1, 0]) / abs(beta),
    }


def assert_equal_fields(got: dict[str, np.ndarray], row: int, want: dict[str, float]) -> None:
    for name in NUMBERS:
        value = float(got[name][row])
        # 1e-12 relative, or absolute for a small difference of log closes near 10 (e, z)
        assert value == pytest.approx(want[name], rel=1e-12, abs=1e-12), (row, name)
    assert got["kalman_reason"][row] == ""


def load(folder: str, ticker: str) -> Candles:
    with (FIXTURES / folder / f"{ticker}.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    n = len(rows)
    return Candles(
        ticker,
        np.array([r["date"] for r in rows], dtype="datetime64[D]"),
        np.array([float(r["close"]) for r in rows]),
        np.full(n, np.nan),
    )


def real_pairs() -> list[AlignedPair]:
    candles = {t: load("realdata", t) for t in COINS}
    candles |= {t: load("calendar_days", t) for t in EQUITIES}
    crypto = [align(candles[a], candles[b]) for a, b in itertools.combinations(COINS, 2)]
    mixed = [align(candles[a], candles[b]) for a in COINS for b in EQUITIES]
    return crypto + mixed


def window_of(pair: AlignedPair) -> np.ndarray:
    """The common closes of the 540 calendar days ending at the pair's last one."""
    return pair.dates > pair.dates[-1] - np.timedelta64(WINDOW, "D")


def real_panels() -> Iterator[tuple[list[AlignedPair], PairPanel]]:
    pairs = real_pairs()
    for rows, p in group_by_history(pairs, WINDOW + 30, WINDOW):
        yield [pairs[i] for i in rows], p


def test_real_pairs_equal_the_reference_and_pykalman() -> None:
    metric = KalmanMetric()
    seen = {"crypto": 0, "mixed": 0}
    for members, p in real_panels():
        got = metric.compute(p)
        for row, pair in enumerate(members):
            inside = window_of(pair)
            assert p.metric_window.observations == inside.sum()
            x, y = np.log(pair.close_b[inside]), np.log(pair.close_a[inside])
            assert_equal_fields(got, row, reference(x, y, DEFAULT_Q, DEFAULT_R))
            assert_equal_fields(got, row, by_pykalman(x, y, DEFAULT_Q, DEFAULT_R))
            seen["mixed" if pair.b in EQUITIES else "crypto"] += 1
    assert seen == {"crypto": 45, "mixed": 20}


def test_simulated_pairs_equal_the_reference_and_pykalman() -> None:
    metric = KalmanMetric(q=3e-5, r=2e-3)  # not the defaults: the options reach the recursion
    compared = 0
    for group in by_length(all_series()).values():
        p = panel(group, window_days=WINDOW)
        got = metric.compute(p)
        closes = p.metric_window.observations
        for row, s in enumerate(group):
            x, y = np.log(s.close_b[-closes:]), np.log(s.close_a[-closes:])
            assert_equal_fields(got, row, reference(x, y, 3e-5, 2e-3))
            if row % 4 == 0:  # pykalman is slow: every fourth pair of each length
                assert_equal_fields(got, row, by_pykalman(x, y, 3e-5, 2e-3))
            compared += 1
    assert compared >= 200


def switching_pair(seed: int, days: int = 900) -> tuple[PairSeries, float, float]:
    """ln A = β ln B + alpha + noise, β stepping from one value to another halfway through W."""
    rng = np.random.default_rng(seed)
    log_b = 3.0 + np.cumsum(rng.normal(0.0, 0.04, days))
    before, after = rng.uniform(0.6, 0.9), rng.uniform(1.4, 1.8)
    beta = np.where(np.arange(days) < days - WINDOW // 2, before, after)
    log_a = beta * log_b + 0.5 + rng.normal(0.0, 0.02, days)
    volume = np.full(days, 1e6)
    series = PairSeries(f"switch[{seed}]", np.exp(log_a), np.exp(log_b), volume, volume)
    return series, before, after


def test_the_filter_follows_a_hedge_ratio_that_changes_and_ols_does_not() -> None:
    cases = [switching_pair(seed) for seed in range(8)]
    p = panel([s for s, _, _ in cases], window_days=WINDOW)
    got = KalmanMetric().compute(p)
    ols = CointegrationMetric().compute(p)["hedge_ratio"]
    for row, (s, before, after) in enumerate(cases):
        kalman = float(got["kalman_hedge_ratio"][row])
        assert abs(kalman - after) < 0.1 * after, (s.name, kalman, after)
        assert abs(float(ols[row]) - after) > 0.2 * after, (s.name, ols[row], after)
        # the ratio moved up over the window: the drift says so, and by how much
        assert float(got["kalman_hedge_drift"][row]) > 0.2
        x = np.log(s.close_b[-WINDOW:])
        y = np.log(s.close_a[-WINDOW:])
        assert_equal_fields(got, row, reference(x, y, DEFAULT_Q, DEFAULT_R))
        assert before < after


def test_a_window_of_too_few_closes_is_null_with_its_reason() -> None:
    group = by_length(all_series())[900][:3]
    p = panel(group, window_days=MIN_CLOSES - 1)
    got = KalmanMetric().compute(p)
    for name in NUMBERS:
        assert np.isnan(got[name]).all(), name
    assert (
        list(got["kalman_reason"]) == ["W holds 30 closes, the Kalman filter needs at least 31"] * 3
    )
    enough = KalmanMetric().compute(panel(group, window_days=MIN_CLOSES))
    assert np.isfinite(enough["kalman_hedge_ratio"]).all()
    assert list(enough["kalman_reason"]) == [""] * 3


def test_a_constant_leg_b_is_null_with_its_reason() -> None:
    """ln B constant over W (at 1, or any other price) leaves β and the intercept not
    identified: every number null and the reason says why; the pair beside it is untouched."""
    s = by_length(all_series())[900][0]
    flat_b = PairSeries("b_at_one", s.close_a, np.ones(s.n_days), s.volume_a, s.volume_b)
    at_two = PairSeries("b_at_two", s.close_a, np.full(s.n_days, 2.0), s.volume_a, s.volume_b)
    got = KalmanMetric().compute(panel([flat_b, at_two, s], window_days=WINDOW))
    for name in NUMBERS:
        assert np.isnan(got[name][:2]).all(), name
        assert np.isfinite(got[name][2]), name
    assert list(got["kalman_reason"]) == [CONSTANT_B, CONSTANT_B, ""]


def test_no_noise_at_all_is_no_filter() -> None:
    """q = r = 0 makes Q = 0 and K = 0/0: every number null, and the reason says why."""
    group = by_length(all_series())[900][:2]
    got = KalmanMetric(q=0.0, r=0.0).compute(panel(group, window_days=WINDOW))
    for name in NUMBERS:
        assert np.isnan(got[name]).all(), name
    assert all(
        reason.startswith("the forecast-error variance Q = ") for reason in got["kalman_reason"]
    )


def test_rows_do_not_depend_on_the_panel() -> None:
    group = by_length(all_series())[900]
    whole = KalmanMetric().compute(panel(group, window_days=WINDOW))
    alone = KalmanMetric().compute(panel(group[7:8], window_days=WINDOW))
    for name in NUMBERS:
        assert whole[name][7] == alone[name][0], name


def _plugins(table: dict[str, object]) -> Plugins:
    settings = load_settings()
    return Plugins(load_plugins(settings), settings, tables={PLUGIN: table})


def test_q_and_r_are_options_of_the_plugin() -> None:
    plugins = _plugins({"q": 1e-5})
    assert plugins.options[PLUGIN] == {"q": 1e-5, "r": DEFAULT_R, "fit": "fixed"}
    metric = plugins.metrics.get("kalman")
    assert isinstance(metric, KalmanMetric) and (metric.q, metric.r) == (1e-5, DEFAULT_R)
    defaults = _plugins({}).metrics.get("kalman")
    assert isinstance(defaults, KalmanMetric)
    assert (defaults.q, defaults.r, defaults.fit) == (1e-4, 1e-3, "fixed")
    fitted = _plugins({"fit": "mle"}).metrics.get("kalman")
    assert isinstance(fitted, KalmanMetric) and fitted.fit == "mle"


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({"r": 0.0}, "r = 0.0 must be a finite number > 0"),
        ({"q": -1e-4}, "q = -0.0001 must be a finite number > 0"),
        ({"q": 0.0}, "q = 0.0 must be a finite number > 0"),
        ({"q": float("inf")}, "q = inf must be"),
        ({"r": float("nan")}, "r = nan must be"),
        ({"fit": "ml"}, 'fit = \'ml\' must be "fixed" or "mle"'),
        ({"fit": 1}, "fit must be a string"),
    ],
)
def test_a_variance_that_is_no_variance_is_refused(table: dict[str, object], says: str) -> None:
    with pytest.raises(PluginError, match=says):
        _ = _plugins(table).metrics


def test_dates_of_the_simulated_corpus_end_on_its_last_day() -> None:
    """The simulated panels' W is the last 540 of their daily closes (what the replay reads)."""
    group = by_length(all_series())[900]
    p = panel(group, window_days=WINDOW)
    assert p.metric_window.observations == WINDOW
    assert (p.dates[:, -1] == LAST_DAY).all()


def test_a_bad_kalman_option_stops_start_up_in_one_line(tmp_path: Path) -> None:
    """The options are checked before anything runs: ``screen run`` with ``fit = "ml"`` says
    so in one line of stderr and exits non-zero, with no traceback."""
    env = newcomer_env(tmp_path)
    universe = tmp_path / "universe.toml"
    universe.write_text(DEMO_UNIVERSE + f'\n[plugins."{PLUGIN}"]\nfit = "ml"\n')
    folder = str(tmp_path / "data")
    assert run_cli("--data-dir", folder, "db", "upgrade", env=env).returncode == 0
    done = run_cli("--data-dir", folder, "--universe", str(universe), "screen", "run", env=env)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert 'fit = \'ml\' must be "fixed" or "mle"' in done.stderr, done.stderr
