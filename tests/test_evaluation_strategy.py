"""``evaluate --outcome strategy``: the accumulation strategy traded from each as-of day.

* On real pairs (tests/fixtures/ou/realdata: Binance daily closes), every in-zone pair's
  ``strategy_return``, ``hold_both`` and ``excess`` equal a hand-written day-by-day replay of
  the strategy: p5/p95 band of the log-ratios strictly before each day, hysteresis at 0.2 /
  0.8, swaps at that day's close paying fee and slippage, value in the quote currency.
* ``[costs]`` lowers a strategy outcome by ``ln((1-fee-s)/(1-fee))`` per swap and the holding
  values by that for two swaps, and leaves ``hold_both`` alone.
* Closes after ``t + h`` never change an outcome (garbage after the horizon).
* The default outcome's JSON keeps its keys, and the strategy run leaves the reversion
  numbers as they were.
* The CLI prints the strategy outcome (table and JSON) and refuses to publish it, in one line.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import date, timedelta

import numpy as np
import pytest

from pairscreen.contracts import Asset, Candles
from pairscreen.evaluation.dates import as_of_dates
from pairscreen.evaluation.outcomes import outcomes_at
from pairscreen.evaluation.report import as_json
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import evaluate
from pairscreen.evaluation.strategy_outcomes import strategy_outcomes_at
from pairscreen.evaluation.verdicts import Market, verdicts_at
from pairscreen.universe import SwapCosts, Universe
from tests.test_ou import real_candles

from pairscreen_plugins.strategies.accumulation import AccumulationStrategy  # isort: skip

CRYPTO = ("BTC", "ETH", "LTC", "SOL", "LINK", "DOGE")
WINDOW = 300  # band window: the 800 fixture days leave room for as-of days and horizons
FEE = 0.001
STRATEGY = AccumulationStrategy()


def no_depegs(_at: object) -> dict:
    return {}


def market(candles: dict[str, Candles] | None = None, scorer: str | None = None) -> Market:
    assets = tuple(Asset(t, sector="majors") for t in CRYPTO)
    universe = Universe(assets, market_source="csv")
    return Market.of(
        universe,
        candles or {t: real_candles(t) for t in CRYPTO},
        window_days=WINDOW,
        min_history_days=200,
        scorer=scorer,
    )


def hand_replay(
    a: np.ndarray, b: np.ndarray, t: int, k: int, start: str, fee: float, slip: float
) -> tuple[float, int]:
    """The accumulation strategy over closes ``t+1 .. k`` (one a day), started with 100
    coins of ``start`` at ``t``'s close: its log return in the quote currency and its swaps."""
    own, other = (a, b) if start == "A" else (b, a)
    ratio = np.log(own / other)
    holding_own, coins, swaps = True, 100.0, 0
    for j in range(t + 1, k + 1):
        band = ratio[j - WINDOW : j]
        low, high = np.percentile(band, 5.0), np.percentile(band, 95.0)
        position = 0.5 if high == low else (ratio[j - 1] - low) / (high - low)
        if holding_own and position >= 0.8:
            coins, holding_own, swaps = (
                coins * own[j] / other[j] * ((1 - fee) - slip),
                False,
                swaps + 1,
            )
        elif not holding_own and position <= 0.2:
            coins, holding_own, swaps = (
                coins * other[j] / own[j] * ((1 - fee) - slip),
                True,
                swaps + 1,
            )
    value = coins * (own[k] if holding_own else other[k])
    return math.log(value / (100.0 * own[t])), swaps


def as_of_days(m: Market, horizon: int) -> list[date]:
    first = m.aligned[0].dates[0].astype("datetime64[D]").item()  # type: ignore[union-attr]
    last = m.aligned[0].dates[-1].astype("datetime64[D]").item()  # type: ignore[union-attr]
    return as_of_dates(first + timedelta(days=WINDOW + 5), last - timedelta(days=horizon), 7)


@pytest.mark.parametrize("horizon", [10, 30, 90])
def test_strategy_outcomes_equal_a_hand_replay_on_real_pairs(empty_runtime, horizon):
    m = market()
    sets = rule_sets(empty_runtime.plugins, m.universe, [])[:1]
    checked: set[str] = set()
    swaps = 0
    for day in as_of_days(m, horizon):
        v = verdicts_at(empty_runtime.plugins, m, sets, day, no_depegs)
        o = strategy_outcomes_at(STRATEGY, m, v, horizon, FEE, SwapCosts())
        for i, pair in enumerate(m.aligned):
            assert pair is not None
            zone = str(v.zone[i])
            if zone not in ("bottom", "top"):
                assert math.isnan(o.strategy_return[i])
                continue
            t = int(np.searchsorted(pair.dates, np.datetime64(day, "D"), side="right")) - 1
            k = t + horizon  # a close every day
            start = "A" if zone == "bottom" else "B"
            expected, n = hand_replay(pair.close_a, pair.close_b, t, k, start, FEE, 0.0)
            a, b = pair.close_a, pair.close_b
            both = math.log(0.5 * a[k] / a[t] + 0.5 * b[k] / b[t])
            assert o.strategy_return[i] == pytest.approx(expected, abs=1e-12), (day, i)
            assert o.hold_both[i] == pytest.approx(both, abs=1e-12)
            assert o.excess[i] == pytest.approx(expected - both, abs=1e-12)
            assert o.swaps[i] == n
            swaps += n
            checked.add(f"{pair.a}/{pair.b}")
    assert len(checked) >= 3, checked  # 15 pairs at each horizon on these fixtures
    assert swaps > 0  # the replay exercised swaps (4, 9 and 49 at 10, 30 and 90 days)


def test_costs_lower_outcomes_by_the_price_of_each_swap(empty_runtime):
    m = market()
    sets = rule_sets(empty_runtime.plugins, m.universe, [])[:1]
    costs = SwapCosts(slippage_bps=20.0)  # each leg: a swap pays 0.4 %
    slip = 0.004
    per_swap = math.log((1 - FEE) - slip) - math.log1p(-FEE)
    seen_swaps = 0
    for day in as_of_days(m, 30)[::3]:
        v = verdicts_at(empty_runtime.plugins, m, sets, day, no_depegs)
        free = strategy_outcomes_at(STRATEGY, m, v, 30, FEE, SwapCosts())
        paid = strategy_outcomes_at(STRATEGY, m, v, 30, FEE, costs)
        on = np.isfinite(free.strategy_return)
        assert np.array_equal(on, np.isfinite(paid.strategy_return))
        np.testing.assert_allclose(
            paid.strategy_return[on] - free.strategy_return[on],
            free.swaps[on] * per_swap,
            rtol=0,
            atol=1e-12,
        )
        np.testing.assert_array_equal(paid.hold_both[on], free.hold_both[on])
        np.testing.assert_allclose(
            paid.costs_paid[on], free.swaps[on] * -math.log((1 - FEE) - slip)
        )
        seen_swaps += int(free.swaps[on].sum())
        held_free = outcomes_at(m, v, 30, FEE)
        held_paid = outcomes_at(m, v, 30, FEE, costs)
        np.testing.assert_allclose(
            held_paid.hold_value[on] - held_free.hold_value[on], 2 * per_swap, atol=1e-12
        )
        np.testing.assert_allclose(
            held_paid.hold_other_leg[on] - held_free.hold_other_leg[on], 2 * per_swap, atol=1e-12
        )
        np.testing.assert_array_equal(held_paid.reversion, held_free.reversion)
    assert seen_swaps > 0


def test_closes_after_the_horizon_never_change_an_outcome(empty_runtime):
    m = market()
    sets = rule_sets(empty_runtime.plugins, m.universe, [])[:1]
    day = as_of_days(m, 30)[10]
    end = np.datetime64(day + timedelta(days=30), "D")
    rng = np.random.default_rng(7)
    spoiled = {}
    for ticker, c in m.candles.items():
        later = c.dates > end
        close = np.where(later, c.close * rng.uniform(0.2, 5.0, c.close.size), c.close)
        spoiled[ticker] = replace(c, close=close)
    v = verdicts_at(empty_runtime.plugins, m, sets, day, no_depegs)
    assert np.isin(v.zone, ("bottom", "top")).any()
    clean = strategy_outcomes_at(STRATEGY, m, v, 30, FEE, SwapCosts())
    garbage = strategy_outcomes_at(STRATEGY, market(spoiled), v, 30, FEE, SwapCosts())
    np.testing.assert_array_equal(clean.strategy_return, garbage.strategy_return)
    np.testing.assert_array_equal(clean.hold_both, garbage.hold_both)


def test_default_outcome_keeps_its_json_and_the_strategy_run_its_reversion_numbers(
    empty_runtime,
):
    m = market()
    sets = rule_sets(empty_runtime.plugins, m.universe, [])
    days = as_of_days(m, 30)
    common = {"every_days": 7, "fee": FEE, "depegs_at": no_depegs}
    default = evaluate(empty_runtime.plugins, m, sets, days, [10, 30], **common)
    traded = evaluate(
        empty_runtime.plugins,
        m,
        sets,
        days,
        [10, 30],
        **common,  # type: ignore[arg-type]
        outcome="strategy",
        strategy=STRATEGY,
        costs=SwapCosts(),
    )
    plain = as_json(default)
    assert set(plain) == {
        "from", "to", "every_days", "horizons", "fee", "pairs_screened", "pairs_in_universe",
        "sampled", "persistence_screens", "comparisons", "families", "warnings", "rule_sets",
        "data_through", "calibration",
    }  # fmt: skip
    horizon = plain["rule_sets"][0]["horizons"][0]  # type: ignore[index]
    assert set(horizon) == {
        "horizon_days", "reversion", "hold_value", "hold_other_leg", "per_date_difference",
        "warnings",
    }  # fmt: skip
    printed = as_json(traded)
    assert printed["outcome"] == "strategy" and printed["strategy"] == "accumulation"
    for old, new in zip(plain["rule_sets"], printed["rule_sets"], strict=True):  # type: ignore[call-overload]
        for h_old, h_new in zip(old["horizons"], new["horizons"], strict=True):
            for measure in ("reversion", "hold_value", "hold_other_leg"):
                assert h_new[measure] == h_old[measure]
            for measure in ("strategy_return", "hold_both", "excess"):
                assert set(h_new[measure]) == {"survivors", "rest", "difference"}
            assert h_new["per_date_difference"] != h_old["per_date_difference"] or all(
                d is None for d in h_old["per_date_difference"]
            )
    screen = traded.results[0].horizons[0]
    assert screen.primary == "excess" and screen.difference is screen.measures["excess"].difference


def test_the_cli_prints_the_strategy_outcome_and_refuses_to_publish_it(cli):
    code, out, err = cli(
        "evaluate", "--every", "45", "--sample", "40", "--outcome", "strategy", "--json",
        "--quiet",
    )  # fmt: skip
    assert code == 0, err
    printed = json.loads(out)
    assert printed["outcome"] == "strategy" and printed["strategy"] == "accumulation"
    assert printed["costs_set"] is False
    for horizon in printed["rule_sets"][0]["horizons"]:
        for measure in ("reversion", "strategy_return", "hold_both", "excess"):
            assert set(horizon[measure]) == {"survivors", "rest", "difference"}
    code, out, err = cli("evaluate", "--every", "45", "--sample", "40", "--outcome", "strategy")
    assert code == 0, err
    assert "outcome: the accumulation strategy's log return over holding both legs" in out
    assert "trading the strategy for the horizon" in out
    code, _out, err = cli("evaluate", "--publish", "--outcome", "strategy", "--quiet")
    assert code != 0 and len(err.strip().splitlines()) == 1 and "--publish" in err
