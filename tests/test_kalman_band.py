"""The ``kalman_band`` strategy: swaps on the Kalman spread's z, walk-forward, in coins.

* A hand-written loop (2x2 matrices, one pair, one close at a time, written from the
  definition in docs/methodology.md) gives the vectorised strategy's trades, growth,
  drawdown and trade count on real pairs (``tests/fixtures/ou/realdata``: seven Binance coins
  and AAPL/GLD to 2023-12-31, a mixed calendar included), both legs.
* No lookahead: garbage after day ``k`` leaves every trade up to ``k`` byte-identical, and a
  panel truncated by ``k`` days (its backtest shortened by ``k`` so it starts on the same day)
  makes the same swaps on the days it still has.
* Fees and ``[costs]``: the same swaps, less growth; its break-even fee ends where it started.
* Short and constant series run (no NaN, no swaps on a constant pair).
* ``/pair`` over HTTP with ``PAIRSCREEN_STRATEGY=kalman_band``, the chart's extra panel in a
  real PNG, and bad ``entry``/``exit`` stopping start-up with one line.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen import PairPanel, clock
from pairscreen.bootstrap import build_runtime
from pairscreen.db.connection import database
from pairscreen.engine.panels import group_by_history
from pairscreen.plugin_system.registry import PluginError
from pairscreen.runtime import Runtime
from pairscreen.screening import screen as screening
from pairscreen.screening.chart import SIZES, chart_data
from tests.conftest import make_client
from tests.series_factory import mean_reverting, panel, random_walk, short_history
from tests.test_chart import decode, mask
from tests.test_costs_and_ou_strategy import assert_flat_at_breakeven
from tests.test_no_lookahead import fingerprint, with_garbage_after
from tests.test_ou import real_pairs

from pairscreen_plugins.charts import matplotlib_renderer as mpl  # isort: skip
from pairscreen_plugins.strategies.accumulation import FEE  # isort: skip
from pairscreen_plugins.strategies.kalman_band import KalmanBandStrategy  # isort: skip
from pairscreen.engine.batch_panel import select_rows

STRATEGY = KalmanBandStrategy()
WINDOW = 540
BASE = "/api/v1"
TABLE = "[plugins.kalman_band]"


def real_panels() -> list[PairPanel]:
    """Every pair of the real fixture closes, one panel per calendar (800 days: 21 coin
    pairs; coins x AAPL/GLD on the exchange's days)."""
    return [p for _, p in group_by_history(real_pairs(), 900, WINDOW)]


def replay(
    dates: np.ndarray,
    own: np.ndarray,
    other: np.ndarray,
    bt: int,
    *,
    entry: float = 1.0,
    exit_: float = 0.0,
    q: float = 1e-4,
    r: float = 1e-3,
    fee: float = FEE,
    slippage: np.ndarray | None = None,
) -> tuple[list[tuple[int, str]], float, float]:
    """One pair, one close at a time: the swaps (day index, coin bought), growth % and
    max drawdown %, from the definition.

    Simulated: the closes of the last ``bt`` calendar days (those after the first 200 when
    the history is shorter than 200 + bt). The filter starts at the first close of the
    ``L`` calendar days before the first simulated one (``L`` = 540, or what the history
    leaves), from β = alpha = 0 with no covariance; a day is decided at its close on
    z = e / √Q and a swap trades at that close.
    """
    day = dates.astype("datetime64[D]").astype(np.int64)
    history = int(day[-1] - day[0]) + 1
    if history >= WINDOW + bt:
        lookback, simulated = WINDOW, bt
    elif history - bt >= 200:
        lookback, simulated = history - bt, bt
    else:
        lookback, simulated = 200, max(history - 200, 0)
    first = int(np.argmax(day > day[-1] - simulated))
    start = int(np.argmax(day >= day[first] - lookback))
    y, x = np.log(own), np.log(other)
    state, cov = np.zeros(2), None
    holding_own, coins = True, 100.0
    swaps: list[tuple[int, str]] = []
    values = []
    for t in range(start, len(own)):
        f = np.array([x[t], 1.0])
        prior = np.zeros((2, 2)) if cov is None else cov + q * np.eye(2)
        e = y[t] - f @ state
        big_q = f @ prior @ f + r
        gain = prior @ f / big_q
        state = state + gain * e
        cov = prior - np.outer(gain, f @ prior)
        if t < first:
            continue
        z = e / math.sqrt(big_q) if t - start + 1 >= 31 else math.nan
        keep = 1.0 - fee - (0.0 if slippage is None else float(slippage[t]))
        if holding_own and z > entry:
            coins, holding_own = coins * (own[t] / other[t]) * keep, False
            swaps.append((t, "other"))
        elif not holding_own and z < exit_:
            coins, holding_own = coins * (other[t] / own[t]) * keep, True
            swaps.append((t, "own"))
        values.append(coins if holding_own else coins * other[t] / own[t])
    peak = np.maximum.accumulate(values)
    drawdown = float(((peak - values) / peak).max()) * 100.0
    return swaps, 100.0 * (values[-1] / 100.0 - 1.0), drawdown


@pytest.mark.parametrize("bt", [90, 360])
@pytest.mark.parametrize("leg", ["A", "B"])
def test_equals_a_hand_written_loop_on_real_pairs(leg: str, bt: int) -> None:
    checked = traded = 0
    for p in real_panels():
        batch = STRATEGY.run(p, bt_days=bt, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        assert batch.trades is not None
        own, other = (p.close_a, p.close_b) if leg == "A" else (p.close_b, p.close_a)
        for i in range(p.n_pairs):
            swaps, growth, drawdown = replay(p.dates[i], own[i], other[i], bt)
            got = [(t.day_index, "own" if t.bought == leg else "other") for t in batch.trades[i]]
            assert got == swaps, (p.a[i], p.b[i])
            assert batch.n_trades[i] == len(swaps)
            assert batch.growth_pct[i] == pytest.approx(growth, rel=1e-9, abs=1e-9)
            assert batch.max_drawdown_pct[i] == pytest.approx(drawdown, rel=1e-9, abs=1e-9)
            checked += 1
            traded += bool(swaps)
    assert checked >= 30 and traded >= 15, (checked, traded)


def test_a_trade_carries_the_log_ratio_of_its_own_close() -> None:
    p = real_panels()[0]
    batch = STRATEGY.run(p, bt_days=360, start_leg="A", with_trades=True)
    assert batch.trades is not None
    trades = [(i, t) for i, row in enumerate(batch.trades) for t in row]
    assert trades
    for i, t in trades:
        assert t.log_ratio == p.log_ratio[i, t.day_index]
        assert t.day == p.dates[i, t.day_index].astype("datetime64[D]").astype(date)


@pytest.mark.parametrize("leg", ["A", "B"])
def test_garbage_after_k_leaves_earlier_trades_identical(leg: str) -> None:
    clean = real_panels()[0]
    n = clean.n_days
    baseline = STRATEGY.run(clean, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
    assert baseline.trades is not None
    every_row = np.arange(clean.n_pairs)
    for k in np.linspace(n - 360, n - 2, 5).astype(int):
        dirty = with_garbage_after(clean, int(k), every_row, seed=int(k))
        result = STRATEGY.run(dirty, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        assert result.trades is not None
        before = [fingerprint(result.trades[i], k) for i in every_row]
        assert before == [fingerprint(baseline.trades[i], k) for i in every_row]
        later = [fingerprint(result.trades[i], 10**6) for i in every_row]
        assert later != [fingerprint(baseline.trades[i], 10**6) for i in every_row]


def truncated(p: PairPanel, k: int) -> PairPanel:
    """The panel without its last ``k`` days."""
    cut = slice(0, p.n_days - k)
    return replace(
        p,
        dates=p.dates[:, cut],
        close_a=p.close_a[:, cut],
        close_b=p.close_b[:, cut],
        volume_a=p.volume_a[:, cut],
        volume_b=p.volume_b[:, cut],
    )


@pytest.mark.parametrize("k", [1, 45, 200])
def test_truncating_the_future_leaves_past_decisions_unchanged(k: int) -> None:
    """The last ``k`` days removed and the backtest ``k`` days shorter start on the same day
    with the same filter: every swap before the cut is the same, to the bit."""
    full = panel([mean_reverting(41), random_walk(42), mean_reverting(43)])  # 900 days
    for leg in ("A", "B"):
        whole = STRATEGY.run(full, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        cut = STRATEGY.run(truncated(full, k), bt_days=360 - k, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        assert whole.trades is not None and cut.trades is not None
        last = full.n_days - k - 1
        assert sum(len(t) for t in whole.trades) > 0
        for i in range(full.n_pairs):
            assert fingerprint(cut.trades[i], last) == fingerprint(whole.trades[i], last)


def test_fees_and_costs_lower_growth_and_leave_the_swaps() -> None:
    p = real_panels()[0]
    rng = np.random.default_rng(7)
    slip = rng.uniform(0.0, 0.003, p.close_a.shape)
    costly = replace(p, slippage=slip)
    for leg in ("A", "B"):
        base = STRATEGY.run(p, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        free = replace(STRATEGY, fee=0.0).run(p, bt_days=360, start_leg=leg)  # type: ignore[arg-type]
        paid = STRATEGY.run(costly, bt_days=360, start_leg=leg, with_trades=True)  # type: ignore[arg-type]
        assert base.trades == paid.trades
        traded = base.n_trades > 0
        assert traded.sum() >= 10
        assert (free.growth_pct[traded] > base.growth_pct[traded]).all()
        assert (paid.growth_pct[traded] < base.growth_pct[traded]).all()
        assert (paid.growth_pct[~traded] == base.growth_pct[~traded]).all()
        own, other = (p.close_a, p.close_b) if leg == "A" else (p.close_b, p.close_a)
        for i in np.flatnonzero(traded)[:5]:
            _, growth, _ = replay(p.dates[i], own[i], other[i], 360, slippage=slip[i])
            assert paid.growth_pct[i] == pytest.approx(growth, rel=1e-9)
        assert base.breakeven_fee is not None and base.breakeven_swaps is not None
        priced = np.flatnonzero(base.breakeven_swaps >= 3)
        assert np.isnan(base.breakeven_fee[base.breakeven_swaps < 3]).all()
        assert priced.size >= 3
        for i in priced[:5]:
            at = replace(STRATEGY, fee=float(base.breakeven_fee[i]))
            again = at.run(select_rows(p, [i]), bt_days=360, start_leg=leg, with_trades=True)
            assert_flat_at_breakeven(base, again, p, i)


def test_short_and_constant_series_run_without_nan() -> None:
    for n_days in (210, 300, 450):
        short = panel([short_history(70 + i, n_days) for i in range(2)])
        for leg in ("A", "B"):
            batch = STRATEGY.run(short, bt_days=360, start_leg=leg)  # type: ignore[arg-type]
            assert np.isfinite(batch.growth_pct).all()
            assert (batch.history_days == min(360, n_days - 200)).all()
    base = panel([mean_reverting(5)])
    constant = replace(base, close_a=np.full(base.close_a.shape, 3.0))
    constant = replace(constant, close_b=np.full(base.close_b.shape, 2.0))
    for leg in ("A", "B"):
        flat = STRATEGY.run(constant, bt_days=360, start_leg=leg)  # type: ignore[arg-type]
        assert flat.n_trades.tolist() == [0] and flat.growth_pct.tolist() == [0.0]


def test_a_higher_entry_swaps_less_often() -> None:
    p = real_panels()[0]
    wide = KalmanBandStrategy(entry=2.0, exit=-0.5)
    for leg in ("A", "B"):
        a = STRATEGY.run(p, bt_days=360, start_leg=leg).n_trades.sum()  # type: ignore[arg-type]
        b = wide.run(p, bt_days=360, start_leg=leg).n_trades.sum()  # type: ignore[arg-type]
        assert b < a


# --- the service ----------------------------------------------------------------------


def with_table(tmp_path: Path, table: str) -> Path:
    demo = Path(screening.__file__).resolve().parents[1] / "demo_universe.toml"
    path = tmp_path / "universe.toml"
    path.write_text(demo.read_text() + "\n" + table)
    return path


def test_pair_backtests_with_kalman_band_over_http(runtime: Runtime, keys) -> None:  # type: ignore[no-untyped-def]
    """The snapshot's legs are the strategy's on the snapshot's panel, and differ from the
    accumulation strategy's; the series carries the spread panel; every response validates
    against openapi.yaml."""
    rt = build_runtime(replace(runtime.settings, strategy="kalman_band"), migrate=False)
    client = make_client(rt)
    with client.client:
        snap = client.get(f"{BASE}/pair/SOL/ETH", keys.personal, params={"bt": 360}).json()
        series = client.get(f"{BASE}/pair/SOL/ETH/series", keys.personal).json()
        png = client.get(f"{BASE}/pair/SOL/ETH/chart.png", keys.personal)
    plain = make_client(runtime)
    with plain.client:
        accumulated = plain.get(f"{BASE}/pair/SOL/ETH", keys.personal).json()
    with database.connection_context():
        chart = chart_data(rt, *rt.universe.pair("SOL", "ETH"), 360)
    for leg in ("A", "B"):
        got = snap["backtest"][leg]
        assert got["n_trades"] == len(chart.trades[leg]) > 0
        assert got != accumulated["backtest"][leg]
    lines = series["spread_lines"]
    assert set(lines) == {"spread", "upper", "lower", "exit"}
    assert len(lines["spread"]) == len(series["dates"])
    drawn = [i for i, v in enumerate(lines["spread"]) if v is not None]
    assert drawn and series["dates"][drawn[0]] == series["backtest_start"]
    assert all(lines["upper"][i] == -lines["lower"][i] > 0 for i in drawn)
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    database.close()


def test_chart_draws_the_spread_panel_under_the_ratio(runtime: Runtime) -> None:
    rt = build_runtime(replace(runtime.settings, strategy="kalman_band"), migrate=False)
    with database.connection_context():
        chart = chart_data(rt, *rt.universe.pair("SOL", "ETH"), 360)
    width, height = SIZES["desktop"]
    with_panel = decode(mpl.RENDERER.render(chart, width_px=width, height_px=height))
    without = decode(
        mpl.RENDERER.render(replace(chart, spread_lines={}), width_px=width, height_px=height)
    )
    purple = mask(with_panel, mpl.SPREAD_LINE)
    rows = np.flatnonzero(purple.any(axis=1))
    assert rows.size > 20, "the spread is drawn"
    assert not mask(without, mpl.SPREAD_LINE).any()
    ink = np.flatnonzero(mask(with_panel, mpl.INK).any(axis=1))
    # The spread's panel lies under the ratio's: its lowest rows are below the ratio line's.
    assert rows.max() > np.percentile(ink, 90)
    spread_cols = np.flatnonzero(purple.any(axis=0))
    ratio_cols = np.flatnonzero(mask(without, mpl.INK).any(axis=0))
    assert spread_cols.min() > ratio_cols.min()  # over the backtest window only
    empty = {name: np.full(len(line), np.nan) for name, line in chart.spread_lines.items()}
    nothing = mpl.RENDERER.render(
        replace(chart, spread_lines=empty), width_px=width, height_px=height
    )
    assert (decode(nothing) == without).all()  # no finite spread: no panel, no legend entry
    database.close()


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("entry = -0.5", "entry = -0.5 must be above 0 standard deviations"),
        ("entry = 1.0\nexit = 1.5", "exit = 1.5 must be below entry = 1.0"),
        ('entry = "one"', "entry must be a number"),
        ("r = 0.0", "r = 0.0 must be a finite number > 0"),
    ],
)
def test_bad_options_stop_start_up_with_one_line(
    runtime: Runtime, tmp_path: Path, table: str, says: str
) -> None:
    settings = replace(runtime.settings, universe_path=with_table(tmp_path, f"{TABLE}\n{table}\n"))
    with pytest.raises(PluginError) as caught:
        build_runtime(settings, migrate=False)
    message = str(caught.value)
    assert says in message and "\n" not in message


def test_bad_options_exit_the_cli_with_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    universe = with_table(tmp_path, f"{TABLE}\nexit = 2.0\n")
    code, out, err = cli("--universe", str(universe), "plugins")
    assert code != 0 and out == ""
    assert err.strip().count("\n") == 0
    assert "exit = 2.0 must be below entry = 1.0" in err


def test_options_reach_the_strategy(runtime: Runtime, tmp_path: Path) -> None:
    settings = replace(
        runtime.settings,
        strategy="kalman_band",
        universe_path=with_table(tmp_path, f"{TABLE}\nentry = 1.5\nexit = -0.25\nq = 2e-5\n"),
    )
    rt = build_runtime(settings, migrate=False)
    strategy = rt.plugins.strategies.get("kalman_band")
    assert isinstance(strategy, KalmanBandStrategy)
    assert (strategy.entry, strategy.exit, strategy.q, strategy.r) == (1.5, -0.25, 2e-5, 1e-3)


def test_a_screen_runs_kalman_band_and_its_breakeven_fee_is_the_legs(runtime: Runtime) -> None:
    """``PAIRSCREEN_STRATEGY=kalman_band``: the screen's legs are the strategy's (not the
    accumulation strategy's) and the ``breakeven_fee`` metric is the lower of its legs'."""
    rt = build_runtime(replace(runtime.settings, strategy="kalman_band"), migrate=False)
    with database.connection_context():
        body = screening.compute_screen(rt, clock.now())
        plain = screening.compute_screen(runtime, clock.now())
    assert body["n_survivors"] == plain["n_survivors"] > 0
    differ = 0
    for s, p in zip(body["survivors"], plain["survivors"], strict=True):
        legs = [s["backtest"][leg]["breakeven_fee"] for leg in "AB"]
        known = [f for f in legs if f is not None]
        assert s["metrics"]["breakeven_fee"] == (min(known) if known else None)
        differ += s["backtest"] != p["backtest"]
    assert differ > 0
    database.close()


def test_evaluate_runs_with_kalman_band(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """``pairscreen evaluate`` with ``PAIRSCREEN_STRATEGY=kalman_band`` prices holding a leg
    with the strategy's fee, as with the accumulation strategy."""
    monkeypatch.setenv("PAIRSCREEN_STRATEGY", "kalman_band")
    code, out, err = cli("evaluate", "--every", "90", "--horizon", "30", "--json")
    assert code == 0, err
    assert "declares no fee" not in err
    assert json.loads(out)["fee"] == FEE


def test_evaluate_strategy_outcomes_trade_kalman_band_as_its_definition(empty_runtime) -> None:  # type: ignore[no-untyped-def]
    """``evaluate --outcome strategy`` with kalman_band: each in-zone pair's forward return
    over (t, t+30] is the close-by-close replay's, started in the zone's cheap leg, in the
    quote currency, and ``excess`` is it less holding both legs half and half."""
    from pairscreen.contracts import Asset
    from pairscreen.evaluation.dates import as_of_dates
    from pairscreen.evaluation.rule_sets import rule_sets
    from pairscreen.evaluation.strategy_outcomes import strategy_outcomes_at
    from pairscreen.evaluation.verdicts import Market, verdicts_at
    from pairscreen.universe import SwapCosts, Universe
    from tests.test_ou import real_candles

    coins = ("BTC", "ETH", "LTC", "SOL", "LINK", "DOGE")
    universe = Universe(tuple(Asset(t, sector="majors") for t in coins), market_source="csv")
    m = Market.of(
        universe, {t: real_candles(t) for t in coins}, window_days=WINDOW, min_history_days=200
    )
    sets = rule_sets(empty_runtime.plugins, universe, [])[:1]
    first = m.aligned[0].dates[0].astype("datetime64[D]").item()  # type: ignore[union-attr]
    last = m.aligned[0].dates[-1].astype("datetime64[D]").item()  # type: ignore[union-attr]
    horizon, checked, swapped = 30, 0, 0
    for day in as_of_dates(first + timedelta(days=WINDOW + 5), last - timedelta(days=horizon), 14):
        v = verdicts_at(empty_runtime.plugins, m, sets, day, lambda _at: {})
        o = strategy_outcomes_at(STRATEGY, m, v, horizon, FEE, SwapCosts())
        for i, pair in enumerate(m.aligned):
            assert pair is not None
            zone = str(v.zone[i])
            if zone not in ("bottom", "top"):
                continue
            t = int(np.searchsorted(pair.dates, np.datetime64(day, "D"), side="right")) - 1
            k = t + horizon
            own, other = (
                (pair.close_a, pair.close_b) if zone == "bottom" else (pair.close_b, pair.close_a)
            )
            swaps, growth, _ = replay(pair.dates[: k + 1], own[: k + 1], other[: k + 1], horizon)
            expected = math.log1p(growth / 100.0) + math.log(own[k] / own[t])
            both = math.log(
                0.5 * pair.close_a[k] / pair.close_a[t] + 0.5 * pair.close_b[k] / pair.close_b[t]
            )
            assert o.strategy_return[i] == pytest.approx(expected, abs=1e-9), (day, i)
            assert o.excess[i] == pytest.approx(expected - both, abs=1e-9)
            assert o.swaps[i] == len(swaps)
            checked += 1
            swapped += len(swaps)
    assert checked >= 20 and swapped > 0, (checked, swapped)
