"""The accumulation strategy equals ``pairscan_rmr.walk_forward_backtest`` bit for bit.

Leg A is the reference run on (A, B), leg B the run on (B, A), both on the last ``L + bt``
closes with ``lookback_days=L`` (docs/methodology.md, short-history rules included). Checked on
one-row panels and on multi-row panels, for bt in 90/180/360; buy-and-hold is checked by
direct computation. The exact rolling percentiles the strategy relies on are checked
against ``np.percentile`` on adversarial windows (heavy ties) with hypothesis.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pairscan_rmr as rmr
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairscreen import BacktestBatch, Leg, PairPanel, Strategy
from tests.series_factory import PairSeries, all_series, by_length, panel

from pairscreen_plugins.strategies import accumulation  # isort: skip
from pairscreen_plugins.strategies._rolling import rolling_percentiles  # isort: skip

BT_DAYS = (90, 180, 360)
WINDOW = 540
FEE = 0.001
CORPUS = all_series()
# A cross-section of the corpus: every kind, long and short (the reference is slow).
LONG_KINDS = {"mean_reverting", "random_walk", "trending"}
SAMPLE = [s for i, s in enumerate(CORPUS) if i % 5 == 0 or s.name.split("[")[0] not in LONG_KINDS]
BY_NAME = {s.name: s for s in SAMPLE}


def strategy() -> Strategy:
    (found,) = accumulation.pairscreen_register_strategies()
    return found


def lookback(n_days: int, bt: int) -> int:
    if n_days >= WINDOW + bt:
        return WINDOW
    return max(n_days - bt, 200)


@functools.cache
def reference(name: str, bt: int, leg: Leg) -> rmr.BacktestResult | None:
    s = BY_NAME[name]
    own, other = (s.close_a, s.close_b) if leg == "A" else (s.close_b, s.close_a)
    lb = lookback(s.n_days, bt)
    span = min(s.n_days, lb + bt)
    if s.n_days <= lb:
        return None  # nothing to simulate
    return rmr.walk_forward_backtest(own[-span:], other[-span:], lookback_days=lb)


def expected_buy_hold(s: PairSeries, bt: int, leg: Leg) -> float:
    if s.n_days < 200 + bt:
        return float("nan")
    own, other = (s.close_a, s.close_b) if leg == "A" else (s.close_b, s.close_a)
    first = s.n_days - bt
    other_coins = 100.0 * own[first] / other[first] * (1 - FEE)
    final_own = other_coins * other[-1] / own[-1]
    return 100.0 * (final_own / 100.0 - 1.0)


def check_row(s: PairSeries, p: PairPanel, batch: BacktestBatch, row: int, bt: int) -> None:
    leg = batch.start_leg
    ref = reference(s.name, bt, leg)
    simulated = s.n_days - lookback(s.n_days, bt) if s.n_days < WINDOW + bt else bt
    assert batch.history_days[row] == max(simulated, 0), s.name
    if ref is None:
        assert batch.growth_pct[row] == 0 and batch.n_trades[row] == 0, s.name
        assert batch.max_drawdown_pct[row] == 0, s.name
        assert np.isnan(batch.buy_hold_growth_pct[row]), s.name
        assert batch.trades is not None and batch.trades[row] == ()
        return
    where = (s.name, bt, leg)
    assert batch.growth_pct[row] == 100 * (ref.final_value_in_a / 100 - 1), where
    assert batch.max_drawdown_pct[row] == 100 * ref.max_drawdown, where
    assert batch.n_trades[row] == ref.n_trades, where
    offset = s.n_days - ref.a_qty_over_time.size - lookback(s.n_days, bt)
    assert batch.trades is not None
    got = batch.trades[row]
    assert len(got) == ref.n_trades, where
    other: Leg = "B" if leg == "A" else "A"
    for mine, theirs in zip(got, ref.trades, strict=True):
        assert mine.day_index == offset + theirs.day_index, where
        assert mine.bought == (leg if theirs.direction == "B_to_A" else other), where
        assert mine.log_ratio == theirs.log_ratio, where
        assert mine.day == p.dates[row, mine.day_index].astype(object), where
    want = expected_buy_hold(s, bt, leg)
    if np.isnan(want):
        assert np.isnan(batch.buy_hold_growth_pct[row]), where
    else:
        assert batch.buy_hold_growth_pct[row] == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("bt", BT_DAYS)
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_single_row_matches_walk_forward(name: str, bt: int) -> None:
    s = BY_NAME[name]
    p = panel([s])
    for leg in ("A", "B"):
        batch = strategy().run(p, bt_days=bt, start_leg=leg, with_trades=True)
        check_row(s, p, batch, 0, bt)


@pytest.mark.parametrize("bt", BT_DAYS)
def test_multi_row_panels_match_walk_forward(bt: int) -> None:
    for group in by_length(SAMPLE).values():
        p = panel(group)
        for leg in ("A", "B"):
            batch = strategy().run(p, bt_days=bt, start_leg=leg, with_trades=True)
            assert batch.start_leg == leg and batch.growth_pct.shape == (len(group),)
            for row, s in enumerate(group):
                check_row(s, p, batch, row, bt)


def test_sample_spans_long_short_and_degenerate() -> None:
    lengths = {s.n_days for s in SAMPLE}
    assert {200, 290, 450, 629, 720, 900} <= lengths  # every short-history rule, and full
    assert any(s.name.startswith("constant_ratio") for s in SAMPLE)
    assert len(by_length(SAMPLE)[900]) >= 30


def test_trades_are_reported_only_when_asked() -> None:
    p = panel(by_length(SAMPLE)[900][:5])
    assert strategy().run(p, bt_days=360, start_leg="A").trades is None


def test_legs_share_one_band_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both legs come from one pass over the panel (the mirror is read off the same order),
    and no band is left behind in the panel's cache once both legs ran: only the legs'
    per-pair results stay (so a metric needing the same backtest reuses them)."""
    calls: list[int] = []
    real = accumulation.rolling_percentiles
    monkeypatch.setattr(
        accumulation,
        "rolling_percentiles",
        lambda *args, **kw: calls.append(1) or real(*args, **kw),
    )
    p = panel(by_length(SAMPLE)[900][:5])
    strategy().run(p, bt_days=180, start_leg="A")
    assert len(calls) == 1
    strategy().run(p, bt_days=180, start_leg="B")
    assert len(calls) == 1
    assert not [k for k in p._shared if k.startswith("accumulation")]  # the bands are gone
    again = strategy().run(p, bt_days=180, start_leg="B")  # a leg run again: its result
    assert len(calls) == 1 and again is p._shared["backtest:accumulation:0.001:180:B:False"]
    strategy().run(replace(p), bt_days=180, start_leg="B")  # a new panel computes
    assert len(calls) == 2


def _percentile_cases() -> st.SearchStrategy[tuple[np.ndarray, int]]:
    """Rows of few distinct values (heavy ties), windows from 2 to the row length."""
    return st.integers(min_value=10, max_value=80).flatmap(
        lambda m: st.tuples(
            st.lists(
                st.lists(
                    st.sampled_from([-1.5, -0.25, 0.0, 0.1, 0.1 + 1e-15, 3.0]),
                    min_size=m,
                    max_size=m,
                ),
                min_size=1,
                max_size=4,
            ).map(np.array),
            st.integers(min_value=2, max_value=m),
        )
    )


@settings(max_examples=100, deadline=None)
@given(case=_percentile_cases(), pct=st.sampled_from([0.0, 5.0, 37.5, 50.0, 95.0, 100.0]))
def test_rolling_percentiles_equal_numpy(case: tuple[np.ndarray, int], pct: float) -> None:
    values, window = case
    (got,), (mirrored,) = rolling_percentiles(values, window, [pct], -values)
    for row in range(values.shape[0]):
        for start in range(values.shape[1] - window + 1):
            w = values[row, start : start + window]
            assert got[row, start] == np.percentile(w, pct)
            assert mirrored[row, start] == np.percentile(-w, pct)


def test_rolling_percentiles_handle_an_inconsistent_mirror() -> None:
    """A "mirror" that is not ordered opposite to the values gets its own pass."""
    rng = np.random.default_rng(7)
    values = rng.normal(size=(3, 60))
    mirror = rng.normal(size=(3, 60))
    (got,), (mirrored,) = rolling_percentiles(values, 25, [5.0], mirror)
    for start in range(36):
        assert mirrored[1, start] == np.percentile(mirror[1, start : start + 25], 5.0)
        assert got[2, start] == np.percentile(values[2, start : start + 25], 5.0)


@pytest.mark.parametrize("seed", range(20))
def test_few_rows_partition_path_equals_pointer_walk(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot's one-row panel takes the partition path; it must equal the pointer walk
    bit for bit, also with ties and with a mirror computed apart (not an exact negation)."""
    from pairscreen_plugins.strategies import _rolling

    rng = np.random.default_rng(seed)
    m = int(rng.integers(300, 950))
    window = int(rng.integers(20, m - 10))
    values = np.cumsum(rng.normal(size=(1, m)), axis=1)
    if seed % 4 == 0:
        values = np.round(values, 1)  # ties
    mirror = np.log(1.0 / np.exp(values)) if seed % 2 else -values
    pcts = [5.0, 15.0, 85.0, 95.0]
    fast, fast_mirror = rolling_percentiles(values, window, pcts, mirror)
    monkeypatch.setattr(_rolling, "_FEW_ROWS", 0)
    walk, walk_mirror = rolling_percentiles(values, window, pcts, mirror)
    assert np.array_equal(fast, walk)
    assert np.array_equal(fast_mirror, walk_mirror)
