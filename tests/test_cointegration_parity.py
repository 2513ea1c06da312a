"""Both Engle-Granger orders and the Johansen trace test against statsmodels on real pairs.

Every pair of ten real assets (``tests/fixtures/realdata``: Binance daily closes to
2023-12-31, provenance in its README), over the metric's 540-day window and a 250-day one,
batched in one panel as the screen batches them, each row compared with statsmodels run on
that pair alone: ``coint`` both ways (trend "c", autolag "aic"), the OLS slopes, and
``coint_johansen(x, det_order=0, k_ar_diff=1)``'s ``lr1[0]`` and ``cvt[0, 1]``.
"""

from __future__ import annotations

import csv
import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from statsmodels.regression.linear_model import OLS
from statsmodels.tools import add_constant
from statsmodels.tsa.stattools import coint
from statsmodels.tsa.vector_ar.vecm import coint_johansen

from pairscreen_plugins.metrics.cointegration import engle_granger  # isort: skip
from pairscreen_plugins.metrics.johansen import johansen_trace  # isort: skip

REAL = Path(__file__).parent / "fixtures" / "realdata"
TICKERS = ("BTC", "ETH", "LTC", "BCH", "XRP", "XLM", "PAXG", "DOGE", "TRX", "ADA")


def closes(ticker: str) -> dict[str, float]:
    with (REAL / f"{ticker}.csv").open() as f:
        return {row["date"]: float(row["close"]) for row in csv.DictReader(f)}


def log_pairs(days: int) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """Every pair's log closes over its last ``days`` common days, as (pairs, days) arrays."""
    series = {t: closes(t) for t in TICKERS}
    names, rows_a, rows_b = [], [], []
    for a, b in itertools.combinations(TICKERS, 2):
        common = sorted(set(series[a]) & set(series[b]))[-days:]
        assert len(common) == days
        names.append((a, b))
        rows_a.append(np.log([series[a][d] for d in common]))
        rows_b.append(np.log([series[b][d] for d in common]))
    return names, np.array(rows_a), np.array(rows_b)


@pytest.mark.parametrize("days", [540, 250])
def test_both_orders_and_johansen_equal_statsmodels_on_real_pairs(days: int) -> None:
    names, log_a, log_b = log_pairs(days)
    p_ab, slope_ab = engle_granger(log_a, log_b)
    p_ba, slope_ba = engle_granger(log_b, log_a)
    trace, crit = johansen_trace(log_a, log_b)
    differs = 0
    for i, pair in enumerate(names):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want_ab = coint(log_a[i], log_b[i], trend="c", autolag="aic")[1]
            want_ba = coint(log_b[i], log_a[i], trend="c", autolag="aic")[1]
        assert abs(p_ab[i] - want_ab) <= 1e-9, pair
        assert abs(p_ba[i] - want_ba) <= 1e-9, pair
        assert slope_ab[i] == pytest.approx(OLS(log_a[i], add_constant(log_b[i])).fit().params[1])
        assert slope_ba[i] == pytest.approx(OLS(log_b[i], add_constant(log_a[i])).fit().params[1])
        johansen = coint_johansen(np.column_stack([log_a[i], log_b[i]]), 0, 1)
        assert abs(trace[i] - johansen.lr1[0]) <= 1e-9 * max(1.0, abs(johansen.lr1[0])), pair
        assert crit[i] == johansen.cvt[0, 1]
        differs += abs(want_ab - want_ba) > 0.05
    # The order matters on real pairs: that is why both are tested.
    assert differs >= 3


def test_simulated_panels_equal_statsmodels() -> None:
    """400 simulated pairs (cointegrated with various strengths, independent walks, trends)."""
    rng = np.random.default_rng(22)
    n_pairs, n = 400, 300
    walk = np.cumsum(rng.normal(0, 0.03, (n_pairs, n)), axis=1)
    strength = rng.uniform(0, 1, (n_pairs, 1))
    noise = rng.normal(0, 0.02, (n_pairs, n))
    own = np.cumsum(rng.normal(0, 0.02, (n_pairs, n)), axis=1)
    drift = rng.normal(0, 0.002, (n_pairs, 1)) * np.arange(n)
    log_a = walk + rng.normal(0, 2, (n_pairs, 1))
    log_b = rng.uniform(0.3, 2, (n_pairs, 1)) * walk + noise + (1 - strength) * own + drift
    p_ab, _ = engle_granger(log_a, log_b)
    p_ba, _ = engle_granger(log_b, log_a)
    trace, _ = johansen_trace(log_a, log_b)
    for i in range(n_pairs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert abs(p_ab[i] - coint(log_a[i], log_b[i])[1]) <= 1e-9
            assert abs(p_ba[i] - coint(log_b[i], log_a[i])[1]) <= 1e-9
        want = coint_johansen(np.column_stack([log_a[i], log_b[i]]), 0, 1).lr1[0]
        assert abs(trace[i] - want) <= 1e-9 * max(1.0, abs(want))


def test_the_critical_value_is_statsmodels_table() -> None:
    from pairscreen_plugins.metrics.johansen import TRACE_CRIT95
    from statsmodels.tsa.coint_tables import c_sjt

    assert float(c_sjt(2, 0)[1]) == TRACE_CRIT95
