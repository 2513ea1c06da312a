"""Swap costs, break-even fees and the ``ou_optimal`` strategy.

* ``breakeven_fee`` used as the fee gives a leg whose closed swaps end where it started, the
  open position apart (``open_position_pct``) (accumulation, its trades do not depend on the
  fee; ``ou_optimal``, re-simulating the same swaps), with and without slippage that varies
  by day; below 3 closed swaps it is NaN.
* A zero slippage array gives the fee-only backtest to the bit.
* ``ou_optimal`` trades at the levels fitted on the window strictly before each day, and no
  price after day ``k`` changes a trade up to ``k`` (the garbage test of test_no_lookahead).
* The universe's ``[costs]`` reach the snapshot over HTTP: ``ou_cost`` and lower growth, and
  the responses validate against openapi.yaml.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pairscreen import BacktestBatch, PairPanel, clock
from pairscreen.bootstrap import build_runtime
from pairscreen.db.connection import database
from pairscreen.engine.costs import with_costs
from pairscreen.engine.panels import align, panel_of
from pairscreen.runtime import Runtime
from pairscreen.screening import screen as screening
from pairscreen.universe import SwapCosts, UniverseError, load_universe_file
from tests.conftest import make_client
from tests.series_factory import by_length, mean_reverting, panel, random_walk, short_history
from tests.test_no_lookahead import fingerprint, the_panel, with_garbage_after
from tests.test_ou import real_candles

from pairscreen_plugins.metrics._ou import bertram_bands, fit_ou, round_trip_cost  # isort: skip
from pairscreen_plugins.strategies import accumulation, ou_optimal  # isort: skip
from pairscreen.engine.batch_panel import select_rows

OU = ou_optimal.OUOptimalStrategy()
ACC = accumulation.AccumulationStrategy()


def corpus() -> PairPanel:
    return panel(
        [mean_reverting(500 + i) for i in range(10)] + [random_walk(600 + i) for i in range(4)]
    )


def varying_slippage(p: PairPanel, seed: int) -> PairPanel:
    rng = np.random.default_rng(seed)
    return replace(p, slippage=rng.uniform(0.0, 0.004, p.close_a.shape))


def assert_flat_at_breakeven(
    base: BacktestBatch, again: BacktestBatch, p: PairPanel, i: int
) -> None:
    """``again`` (row ``i`` re-run at its break-even fee, the same swaps): the closed swaps end
    at the start's 100, so the leg ends at 100 when it holds its start coin, else at 100 times
    the open position's move, less the fee and slippage of the swap that opened it."""
    assert base.breakeven_swaps is not None and base.open_position_pct is not None
    assert again.n_trades[0] == base.n_trades[i]  # the same swaps
    opened = float(base.open_position_pct[i])
    closed = int(base.breakeven_swaps[i])
    assert closed >= 3
    if np.isnan(opened):
        assert closed == base.n_trades[i]
        assert again.growth_pct[0] == pytest.approx(0.0, abs=1e-9)
        return
    assert closed == base.n_trades[i] - 1
    assert again.trades is not None
    day = again.trades[0][-1].day_index
    slip = 0.0 if p.slippage is None else float(p.slippage[i, day])
    keep = 1.0 - float(base.breakeven_fee[i]) - slip  # type: ignore[index]
    expected = 100.0 * ((1.0 + opened / 100.0) * keep - 1.0)
    assert again.growth_pct[0] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("slipped", [False, True])
@pytest.mark.parametrize("leg", ["A", "B"])
def test_accumulation_at_its_breakeven_fee_ends_where_it_started(leg: str, slipped: bool) -> None:
    p = corpus()
    if slipped:
        p = varying_slippage(p, 3)
    base = ACC.run(p, bt_days=360, start_leg=leg)  # type: ignore[arg-type]
    assert base.breakeven_fee is not None and base.breakeven_swaps is not None
    few = base.breakeven_swaps < 3
    assert np.isnan(base.breakeven_fee[few]).all()
    assert np.isfinite(base.breakeven_fee[~few]).all()
    priced = np.flatnonzero(~few)
    assert priced.size >= 8
    for i in priced:
        fee = float(base.breakeven_fee[i])
        again = replace(ACC, fee=fee).run(
            select_rows(p, [i]), bt_days=360, start_leg=leg, with_trades=True
        )
        assert_flat_at_breakeven(base, again, p, i)


@pytest.mark.parametrize("leg", ["A", "B"])
def test_ou_optimal_swaps_at_its_breakeven_fee_end_where_they_started(leg: str) -> None:
    p = varying_slippage(corpus(), 5)
    base = OU.run(p, bt_days=360, start_leg=leg)  # type: ignore[arg-type]
    assert base.breakeven_fee is not None and base.breakeven_swaps is not None
    priced = np.flatnonzero(base.breakeven_swaps >= 3)
    assert priced.size >= 5
    assert np.isnan(base.breakeven_fee[base.breakeven_swaps < 3]).all()
    for i in priced:
        one = select_rows(p, [i])
        plan = accumulation.plan(accumulation.history_of(one), one.window_days, 360)
        cols = accumulation.columns(one, plan)

        def same_swaps(
            rows: slice,
            decided_on: np.ndarray,
            one: PairPanel = one,
            cols: accumulation.Columns = cols,
        ) -> np.ndarray:
            levels = ou_optimal._levels(one, cols, rows, leg, accumulation.FEE)  # type: ignore[arg-type]
            with np.errstate(invalid="ignore"):
                return accumulation.hold_sequence(
                    decided_on <= levels.entry, decided_on >= levels.exit
                )

        again = accumulation.walk_forward(
            one,
            plan,
            cols,
            leg,
            same_swaps,
            fee=float(base.breakeven_fee[i]),  # type: ignore[arg-type]
            with_trades=True,
        )
        assert_flat_at_breakeven(base, again, p, i)


def test_zero_slippage_is_the_fee_only_backtest_to_the_bit() -> None:
    p = corpus()
    zero = replace(p, slippage=np.zeros(p.close_a.shape))
    for strategy in (ACC, OU):
        for leg in ("A", "B"):
            a = strategy.run(p, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
            b = strategy.run(zero, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
            for name in ("growth_pct", "max_drawdown_pct", "buy_hold_growth_pct", "n_trades"):
                assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
            assert a.trades == b.trades
    assert with_costs(p, SwapCosts(), np.zeros(p.n_pairs), np.zeros(p.n_pairs)) is p


def test_slippage_costs_what_it_says() -> None:
    """A constant slippage s per swap: growth as with a fee of fee + s (same swaps)."""
    p = corpus()
    slipped = replace(p, slippage=np.full(p.close_a.shape, 0.002))
    with_slip = ACC.run(slipped, bt_days=360, start_leg="A")
    as_fee = replace(ACC, fee=accumulation.FEE + 0.002).run(p, bt_days=360, start_leg="A")
    np.testing.assert_allclose(with_slip.growth_pct, as_fee.growth_pct, rtol=1e-12, atol=1e-10)
    assert with_slip.breakeven_fee is not None and as_fee.breakeven_fee is not None
    # The break-even fee does not depend on the fee paid, and slippage comes off it.
    np.testing.assert_allclose(with_slip.breakeven_fee + 0.002, as_fee.breakeven_fee, rtol=1e-9)


def check_levels_fitted_before_each_day(p: PairPanel, days: tuple[int, ...]) -> None:
    """``ou_optimal``'s levels of day ``t`` are the OU fit of the closes of its band window
    (the calendar days before ``t``), and every swap crossed that day's level."""
    plan = accumulation.plan(accumulation.history_of(p), p.window_days, 360)
    cols = accumulation.columns(p, plan)
    levels = ou_optimal._levels(p, cols, slice(None), "A", accumulation.FEE)
    for j in days:
        t = cols.first + j
        window = slice(int(cols.lo[j]), t)
        fit = fit_ou(p.log_ratio[:, window], p.dates[:, window])
        cost = round_trip_cost(accumulation.FEE + p.swap_slippage[:, t])
        direct = bertram_bands(fit.mean, fit.speed, fit.sigma, cost)
        np.testing.assert_allclose(levels.entry[:, j], direct.entry, rtol=0, atol=1e-10)
        np.testing.assert_allclose(levels.exit[:, j], direct.exit, rtol=0, atol=1e-10)
    result = OU.run(p, bt_days=360, start_leg="A", with_trades=True)
    assert result.trades is not None
    for row, trades in enumerate(result.trades):
        for trade in trades:
            j = trade.day_index - cols.first
            if trade.bought == "B":  # swapped out of A: r(t-1) reached the exit level
                assert trade.log_ratio >= levels.exit[row, j]
            else:
                assert trade.log_ratio <= levels.entry[row, j]


def test_ou_optimal_uses_the_levels_fitted_before_each_day() -> None:
    check_levels_fitted_before_each_day(varying_slippage(corpus(), 9), (0, 1, 77, 200, 359))


def test_ou_optimal_fits_each_day_on_its_own_calendar_window_for_mixed_calendars() -> None:
    """BTC/GLD: each simulated day's band holds the common closes of the 540 calendar days
    before it, a number that varies from day to day; the running-sum fit reads each one."""
    pair = align(real_candles("BTC"), real_candles("GLD"))
    p = panel_of([pair], pair.n_days, 540)
    plan = accumulation.plan(accumulation.history_of(p), p.window_days, 360)
    cols = accumulation.columns(p, plan)
    lengths = cols.first + np.arange(cols.lo.size) - cols.lo
    assert np.unique(lengths).size > 1  # the windows do vary in length
    check_levels_fitted_before_each_day(p, tuple(range(0, cols.lo.size, 17)))


@pytest.mark.parametrize("bt", [90, 180, 360])
@pytest.mark.parametrize("n_days", [900, 720, 450])
@pytest.mark.parametrize("leg", ["A", "B"])
def test_ou_optimal_garbage_after_k_leaves_earlier_trades_identical(
    n_days: int, bt: int, leg: str
) -> None:
    clean = the_panel(n_days)
    first_day = n_days - min(bt, n_days - 200)
    baseline = OU.run(clean, bt_days=bt, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
    assert baseline.trades is not None
    assert sum(len(t) for t in baseline.trades) > 0, "a test without trades proves nothing"
    every_row = np.arange(clean.n_pairs)
    for k in np.linspace(first_day, n_days - 2, 6).astype(int):
        dirty = with_garbage_after(clean, int(k), every_row, seed=int(k))
        result = OU.run(dirty, bt_days=bt, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        assert result.trades is not None
        for row in range(clean.n_pairs):
            assert fingerprint(result.trades[row], k) == fingerprint(baseline.trades[row], k)


def test_ou_optimal_rows_are_independent_and_short_histories_run() -> None:
    clean = panel(by_length([mean_reverting(30 + i) for i in range(5)])[900])
    baseline = OU.run(clean, bt_days=360, start_leg="A", with_trades=True)
    dirty = with_garbage_after(clean, 540, np.array([2]), seed=1)
    result = OU.run(dirty, bt_days=360, start_leg="A", with_trades=True)
    assert baseline.trades is not None and result.trades is not None
    for row in (0, 1, 3, 4):
        assert fingerprint(result.trades[row], 10**6) == fingerprint(baseline.trades[row], 10**6)
        assert result.growth_pct[row] == baseline.growth_pct[row]
    for group in by_length([short_history(70 + i, n) for i, n in enumerate((210, 300))]).values():
        short = OU.run(panel(group), bt_days=360, start_leg="B")
        assert np.isfinite(short.growth_pct).all()


# --- the universe's [costs] ------------------------------------------------------------


def universe_with(tmp_path: Path, table: str) -> Path:
    demo = Path(screening.__file__).resolve().parents[1] / "demo_universe.toml"
    path = tmp_path / "universe.toml"
    path.write_text(demo.read_text() + "\n" + table)
    return path


def test_costs_table_parses_per_class_and_per_asset(tmp_path: Path) -> None:
    path = universe_with(
        tmp_path,
        "[costs]\nslippage_bps = 5\n[costs.asset_class]\ntokenized_metal = 12\n"
        "[costs.asset]\nBTC = 1.5\n[costs.impact]\ntrade_size = 10000\ncoefficient = 0.1\n",
    )
    u = load_universe_file(path)
    metal = next(a for a in u.assets if a.asset_class == "tokenized_metal")
    assert u.costs.slippage(u.asset("BTC")) == pytest.approx(0.00015)
    assert u.costs.slippage(metal) == pytest.approx(0.0012)
    assert u.costs.slippage(u.asset("ETH")) == pytest.approx(0.0005)
    assert u.costs.has_impact and not u.costs.is_zero


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("[costs]\nslippage_bps = -1\n", "slippage_bps must be a number of at least 0"),
        ("[costs.asset]\nNOPE = 3\n", "asset.NOPE: not a ticker of the universe"),
        ("[costs.asset_class]\nstocks = 3\n", "asset_class.stocks: not a asset class"),
        ("[costs]\nfee = 3\n", "unknown key fee"),
    ],
)
def test_a_bad_costs_table_is_one_clear_error(tmp_path: Path, table: str, says: str) -> None:
    with pytest.raises(UniverseError, match=says):
        load_universe_file(universe_with(tmp_path, table))


def test_impact_is_the_coefficient_times_size_over_the_days_volume() -> None:
    p = panel([mean_reverting(1), mean_reverting(2)])
    costs = SwapCosts(slippage_bps=0, impact_trade_size=1000.0, impact_coefficient=0.5)
    got = with_costs(p, costs, np.zeros(2), np.array([0.001, 0.0]))
    expected = np.array([[0.001], [0.0]]) + 500.0 / p.volume_a + 500.0 / p.volume_b
    np.testing.assert_allclose(got.slippage, np.minimum(expected, 0.5), rtol=1e-14)


def test_costs_reach_the_snapshot_over_http(runtime: Runtime, keys, tmp_path: Path) -> None:
    """Slippage of 20 bps on one leg and 30 on the other: the pair's ou_cost is two swaps at
    the fee plus 50 bps, its legs make the same swaps and gain less, their break-even fees
    are 50 bps lower, the series draws the snapshot's OU levels, and every response
    validates against openapi.yaml."""
    with database.connection_context():
        screen = screening.compute_screen(runtime, clock.now())
    fitted = [s for s in screen["survivors"] if s["metrics"]["ou_entry"] is not None]
    assert fitted, "the demo's survivors mean-revert"
    a, b = fitted[0]["pair"]
    plain = make_client(runtime)
    with plain.client:
        before = plain.get(f"/api/v1/pair/{a}/{b}", keys.personal).json()
    settings = replace(
        runtime.settings,
        universe_path=universe_with(tmp_path, f"[costs.asset]\n{a} = 20\n{b} = 30\n"),
    )
    costly = make_client(build_runtime(settings, migrate=False))
    with costly.client:
        after = costly.get(f"/api/v1/pair/{a}/{b}", keys.personal).json()
        series = costly.get(f"/api/v1/pair/{a}/{b}/series", keys.personal).json()
    assert before["metrics"]["ou_cost"] == pytest.approx(-2 * math.log(1 - 0.001))
    assert after["metrics"]["ou_cost"] == pytest.approx(-2 * math.log(1 - 0.001 - 0.005))
    for leg in ("A", "B"):
        was, now = before["backtest"][leg], after["backtest"][leg]
        assert now["n_trades"] == was["n_trades"] > 0
        assert now["growth_pct"] < was["growth_pct"]
        assert now["breakeven_swaps"] == was["breakeven_swaps"]
        if was["breakeven_fee"] is None:
            assert now["breakeven_fee"] is None and now["breakeven_fee_reason"]
        else:
            assert now["breakeven_fee"] == pytest.approx(was["breakeven_fee"] - 0.005, abs=1e-12)
    m = after["metrics"]
    assert m["ou_entry"] < m["ou_mean"] < m["ou_exit"]
    assert m["ou_entry"] > before["metrics"]["ou_entry"] - 1  # moved, not lost
    assert (
        m["ou_exit"] - m["ou_entry"] > before["metrics"]["ou_exit"] - before["metrics"]["ou_entry"]
    )
    assert series["ou_levels"] == {"entry": m["ou_entry"], "exit": m["ou_exit"]}
    database.close()
