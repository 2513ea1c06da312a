"""No lookahead: the future cannot change the past's trades.

Replacing every price after day ``k`` with garbage must leave every trade up to day ``k``
byte-identical (same days, same coin, same decision value to the last bit), for both legs,
whatever the other rows of the panel hold. The strategy sorts each row's whole history once
to get exact rolling bands, so this is the test that keeps that trick honest.
"""

from __future__ import annotations

import struct
from dataclasses import replace

import numpy as np
import pytest

from pairscreen import PairPanel, Trade
from tests.series_factory import by_length, mean_reverting, panel, random_walk, short_history

from pairscreen_plugins.strategies import accumulation  # isort: skip

STRATEGY = accumulation.AccumulationStrategy()


def with_garbage_after(p: PairPanel, k: int, rows: np.ndarray, seed: int) -> PairPanel:
    """The panel with every price of ``rows`` after day ``k`` replaced by random garbage."""
    rng = np.random.default_rng(seed)
    close_a, close_b = p.close_a.copy(), p.close_b.copy()
    shape = (rows.size, p.n_days - k - 1)
    # Wild but positive: tiny, huge and ordinary prices, so the future log-ratios land
    # below, inside and above the past band.
    close_a[rows, k + 1 :] = np.exp(rng.uniform(-30, 30, shape))
    close_b[rows, k + 1 :] = rng.choice([1e-9, 1.0, 3.7, 1e9], shape)
    return replace(p, close_a=close_a, close_b=close_b)


def fingerprint(trades: tuple[Trade, ...], k: int) -> list[tuple[int, str, str, bytes]]:
    return [
        (t.day_index, t.day.isoformat(), t.bought, struct.pack("<d", t.log_ratio))
        for t in trades
        if t.day_index <= k
    ]


def the_panel(n_days: int) -> PairPanel:
    if n_days == 900:
        return panel([mean_reverting(11), random_walk(12), mean_reverting(13), mean_reverting(14)])
    return panel([short_history(20 + i, n_days) for i in range(3)])


@pytest.mark.parametrize("bt", [90, 180, 360])
@pytest.mark.parametrize("n_days", [900, 720, 450])
@pytest.mark.parametrize("leg", ["A", "B"])
def test_garbage_after_k_leaves_earlier_trades_identical(n_days: int, bt: int, leg: str) -> None:
    clean = the_panel(n_days)
    first_day = n_days - min(bt, n_days - 200)
    baseline = STRATEGY.run(clean, bt_days=bt, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
    assert baseline.trades is not None
    assert sum(len(t) for t in baseline.trades) > 0, "a test without trades proves nothing"
    every_row = np.arange(clean.n_pairs)
    for k in np.linspace(first_day, n_days - 2, 6).astype(int):
        dirty = with_garbage_after(clean, int(k), every_row, seed=int(k))
        result = STRATEGY.run(dirty, bt_days=bt, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        assert result.trades is not None
        for row in range(clean.n_pairs):
            assert fingerprint(result.trades[row], k) == fingerprint(baseline.trades[row], k)


def test_garbage_in_one_row_does_not_touch_the_others() -> None:
    """Rows are independent: garbage in one pair's whole simulated period changes nothing
    in the other pairs of the panel (the batch shares arrays, never data)."""
    clean = panel(by_length([mean_reverting(30 + i) for i in range(5)])[900])
    baseline = STRATEGY.run(clean, bt_days=360, start_leg="A", with_trades=True)
    dirty = with_garbage_after(clean, 540, np.array([2]), seed=1)
    result = STRATEGY.run(dirty, bt_days=360, start_leg="A", with_trades=True)
    assert baseline.trades is not None and result.trades is not None
    for row in (0, 1, 3, 4):
        assert fingerprint(result.trades[row], 10**6) == fingerprint(baseline.trades[row], 10**6)
        assert result.growth_pct[row] == baseline.growth_pct[row]


def test_the_garbage_does_change_the_future() -> None:
    """Guard against a vacuous test: after k, the garbage does move the trades."""
    clean = the_panel(900)
    baseline = STRATEGY.run(clean, bt_days=360, start_leg="A", with_trades=True)
    dirty = with_garbage_after(clean, 700, np.arange(clean.n_pairs), seed=3)
    result = STRATEGY.run(dirty, bt_days=360, start_leg="A", with_trades=True)
    assert baseline.trades is not None and result.trades is not None
    assert [fingerprint(t, 10**6) for t in result.trades] != [
        fingerprint(t, 10**6) for t in baseline.trades
    ]
