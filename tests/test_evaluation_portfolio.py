"""``evaluate --portfolio N --max-per-asset K`` on real pairs (tests/fixtures/ou/realdata).

* Each day's picks are the best-scored survivors in the zones with no asset in more than K
  of them, at most N (K = 1 binds on 4 of the 14 days with picks); the portfolio's return
  is the equal-weight return of their strategy outcomes, recomputed here from them.
* The null is drawn from that day's in-zone pairs (survivors and the rest), under the same
  per-asset limit, and reaches every one of them.
* The universe line is every asset held equally, recomputed from the closes.
* The CLI refuses ``--max-per-asset`` without ``--portfolio`` in one line.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np

from pairscreen.evaluation.portfolio import PortfolioSpec, asset_legs, null_draws, pick
from pairscreen.evaluation.report import as_json, table
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import evaluate
from pairscreen.evaluation.strategy_outcomes import strategy_outcomes_at
from pairscreen.evaluation.verdicts import verdicts_at
from pairscreen.universe import SwapCosts
from tests.conftest import make_client
from tests.test_evaluation_strategy import FEE, STRATEGY, as_of_days, market, no_depegs

SIZE, LIMIT, HORIZON = 4, 1, 30
BASE = "/api/v1"


def test_picks_respect_the_limit_and_the_score_and_the_return_is_their_equal_weight(
    empty_runtime,
):
    plugins = empty_runtime.plugins
    m = market(scorer="score")
    sets = rule_sets(plugins, m.universe, [])[:1]
    days = as_of_days(m, HORIZON)
    result = evaluate(
        plugins,
        m,
        sets,
        days,
        [HORIZON],
        every_days=7,
        fee=FEE,
        depegs_at=no_depegs,
        strategy=STRATEGY,
        costs=SwapCosts(),
        portfolio=PortfolioSpec(SIZE, LIMIT, draws=50),
    )
    (portfolio,) = result.portfolio
    names = [f"{a.ticker}/{b.ticker}" for a, b in m.pairs]
    legs = asset_legs(m)
    returns = []
    bound = 0
    for day, picked, per_date in zip(
        days, portfolio.per_date, result.results[0].per_date, strict=True
    ):
        legs_held = Counter(leg for name in picked for leg in name.split("/"))
        assert all(count <= LIMIT for count in legs_held.values()), (day, picked)
        assert len(picked) <= SIZE
        survivors = set(per_date["survivor_pairs"])  # type: ignore[arg-type]
        assert set(picked) <= survivors
        v = verdicts_at(plugins, m, sets, day, no_depegs)
        o = strategy_outcomes_at(STRATEGY, m, v, HORIZON, FEE, SwapCosts())
        eligible = [
            i
            for i, name in enumerate(names)
            if name in survivors and math.isfinite(o.strategy_return[i])
        ]
        assert v.score is not None
        # independently: best score first, skip a pair that would put an asset over the limit
        best = sorted(eligible, key=lambda i: (-v.score[i], i))
        counts: Counter[int] = Counter()
        expected = []
        for i in best:
            if counts[legs[0][i]] < LIMIT and counts[legs[1][i]] < LIMIT and len(expected) < SIZE:
                expected.append(i)
                counts[legs[0][i]] += 1
                counts[legs[1][i]] += 1
        assert list(picked) == [names[i] for i in expected], day
        if expected:
            returns.append(math.log(np.mean(np.exp(o.strategy_return[expected]))))
        bound += len(expected) < min(SIZE, len(eligible))  # the limit left a survivor out
    assert len(returns) >= 10 and bound >= 2  # 14 and 4 on these fixtures: the limit matters
    assert portfolio.picks.mean is not None
    assert abs(portfolio.picks.mean - float(np.mean(returns))) < 1e-12
    assert portfolio.picks.days == len(returns)
    printed = as_json(result)
    assert printed["portfolio"][0]["size"] == SIZE  # type: ignore[index]
    assert printed["portfolio"][0]["max_per_asset"] == LIMIT  # type: ignore[index]
    assert "portfolio: the top 4 survivors" in table(result)


def test_a_limit_of_one_never_shares_an_asset() -> None:
    legs = (np.array([0, 0, 1, 2, 3]), np.array([1, 2, 2, 3, 4]))  # A/B A/C B/C C/D D/E
    assert pick(np.arange(5), legs, 5, 1) == [0, 3]
    assert pick(np.arange(5), legs, 5, 2) == [0, 1, 2, 4]  # C/D would give C a third pair
    assert pick(np.arange(5), legs, 2, 5) == [0, 1]


def test_the_null_is_drawn_from_the_days_in_zone_pairs_under_the_limit(empty_runtime):
    plugins = empty_runtime.plugins
    m = market()
    sets = rule_sets(plugins, m.universe, [])[:1]
    legs = asset_legs(m)
    rng = np.random.default_rng(1)
    reached: set[int] = set()
    pools: set[int] = set()
    for day in as_of_days(m, HORIZON)[::4]:
        v = verdicts_at(plugins, m, sets, day, no_depegs)
        o = strategy_outcomes_at(STRATEGY, m, v, HORIZON, FEE, SwapCosts())
        in_zone = np.isin(v.zone, ("bottom", "top")) & np.isfinite(o.strategy_return)
        pool = np.flatnonzero(in_zone)
        if pool.size < 3:
            continue
        for drawn in null_draws(rng, pool, legs, 2, PortfolioSpec(2, 1, draws=100)):
            assert set(drawn) <= set(pool.tolist())
            assert len(drawn) <= 2
            assets = [int(legs[0][i]) for i in drawn] + [int(legs[1][i]) for i in drawn]
            assert len(assets) == len(set(assets))  # limit 1: no shared asset
            reached.update(drawn)
        pools.update(pool.tolist())
    assert pools and reached == pools  # every in-zone pair can be drawn, nothing else is


def test_the_universe_line_holds_every_asset_equally(empty_runtime):
    plugins = empty_runtime.plugins
    m = market(scorer="score")
    sets = rule_sets(plugins, m.universe, [])[:1]
    days = as_of_days(m, HORIZON)[:12]
    result = evaluate(
        plugins, m, sets, days, [HORIZON], every_days=7, fee=FEE, depegs_at=no_depegs,
        strategy=STRATEGY, portfolio=PortfolioSpec(SIZE, None, draws=10),
    )  # fmt: skip
    expected = []
    for day in days:
        growth = []
        for candles in m.candles.values():
            dates = candles.dates.astype("datetime64[D]")
            t = int(np.flatnonzero(dates == np.datetime64(day, "D"))[0])
            growth.append(candles.close[t + HORIZON] / candles.close[t])
        expected.append(math.log(float(np.mean(growth))))
    universe = result.portfolio[0].universe
    assert universe.mean is not None
    assert abs(universe.mean - float(np.mean(expected))) < 1e-12


def test_max_per_asset_without_a_portfolio_is_one_line(cli):
    code, _out, err = cli("evaluate", "--max-per-asset", "2", "--quiet")
    assert code != 0
    assert len(err.strip().splitlines()) == 1 and "--portfolio" in err


def test_publish_with_a_portfolio_serves_its_line_on_evidence(cli, runtime, keys):
    code, out, err = cli(
        "evaluate", "--every", "45", "--horizon", "30,90", "--sample", "40", "--publish",
        "--portfolio", "5", "--max-per-asset", "2", "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    printed = json.loads(out)
    client = make_client(runtime)
    with client.client:
        r = client.get(f"{BASE}/evidence", keys.personal)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
        body = r.json()
    assert body["portfolio_strategy"] == printed["strategy"] == "accumulation"
    assert [p["horizon_days"] for p in body["portfolio"]] == [30, 90]
    for served, local in zip(body["portfolio"], printed["portfolio"], strict=True):
        assert "per_date_picks" not in served
        local.pop("per_date_picks")
        assert served == local
        assert served["size"] == 5 and served["max_per_asset"] == 2
        assert served["portfolio"]["as_of_days"] > 0 and served["random"]["draws"] == 200
    # the reversion track record itself is what it was: the keys a publication without a
    # portfolio has, and the same horizons
    code, _out, err = cli(
        "evaluate", "--every", "45", "--horizon", "30,90", "--sample", "40", "--publish",
        "--quiet",
    )  # fmt: skip
    assert code == 0, err
    with client.client:
        plain = client.get(f"{BASE}/evidence", keys.personal).json()
    assert "portfolio" not in plain and "portfolio_strategy" not in plain
    assert set(body) - {"portfolio", "portfolio_strategy"} == set(plain)
    assert body["horizons"] == plain["horizons"]


def test_a_portfolio_that_never_picked_has_no_drawdown_and_none_is_negative(cli):
    # One sampled pair that never survives: no picks, so no drawdown (not "-0%"); and a
    # drawdown is a fall, never -0.0 (the universe's path of the demo can only rise).
    code, out, err = cli(
        "evaluate", "--sample", "1", "--portfolio", "3", "--json", "--quiet"
    )  # fmt: skip
    assert code == 0, err
    for line in json.loads(out)["portfolio"]:
        if line["portfolio"]["as_of_days"] == 0:
            assert line["portfolio"]["max_drawdown"] is None, line
        for path in (line["portfolio"], line["universe"]):
            dd = path["max_drawdown"]
            assert dd is None or math.copysign(1.0, dd) > 0, line
    code, out, err = cli("evaluate", "--sample", "1", "--portfolio", "3", "--quiet")
    assert code == 0 and "-0%" not in out, out
