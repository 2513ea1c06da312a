"""``evaluate`` on an hourly universe (issue 36, item 4): as-of points are bar closes, horizons
and steps count bars, outcomes read the last common bar at or before t+h.

The universe is tests/test_hourly_screen.py's (Binance BTC, ETH, SOL 1h closes of 2023-03-10
to 2023-04-01 with the real outage bar 2023-03-24T14:00Z missing, and the mean-reverting
ETHX built from ETH), its clock pinned after the last bar.
"""

from __future__ import annotations

import csv
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen.contracts.bars import bar_size
from pairscreen.db.connection import database
from pairscreen.evaluation.dates import after, as_of_points, stamp
from pairscreen.evaluation.outcomes import ZONE_SIGN, outcomes_at
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import evaluate
from pairscreen.evaluation.scale import (
    MAX_TRACK_RECORD_CLOSES,
    runtime_candles,
    runtime_market,
    track_record_every,
    track_record_steps,
)
from pairscreen.evaluation.verdicts import Market, verdicts_at
from pairscreen.market.cutoff import closes_until
from pairscreen.pegs.status import active_depegs
from pairscreen.screen_store.published import stored_payload
from pairscreen.screening.point_in_time import run_screen_as_of_close
from tests.support.cli import newcomer_env, run_cli
from tests.test_hourly_screen import hourly, pin, write_universe

__all__ = ["hourly"]  # the fixture, shared with the hourly screen's tests

# Closes at which some pairs sit in a band zone; the first one's t+24h is the outage bar.
CLOSES = (datetime(2023, 3, 23, 14, tzinfo=UTC), datetime(2023, 3, 27, 6, tzinfo=UTC))


def hourly_closes(folder: Path, ticker: str) -> dict[datetime, float]:
    with (folder / "prices" / f"{ticker}.csv").open(encoding="utf-8") as handle:
        return {
            datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00")): float(row["close"])
            for row in csv.DictReader(handle)
        }


def at_or_before(closes: dict[datetime, float], moment: datetime, other: dict) -> datetime:  # type: ignore[type-arg]
    """The last hour both legs have a close at or before ``moment``."""
    while moment not in closes or moment not in other:
        moment -= timedelta(hours=1)
    return moment


def test_outcomes_are_the_log_ratio_moves_to_the_last_common_bar(hourly, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rt, _key = hourly
    with database.connection_context():
        candles = runtime_candles(rt)
        market = runtime_market(rt, candles, sample=None, scorer=None)
        sets = rule_sets(rt.plugins, rt.universe, [])
        checked = 0
        for t in CLOSES:
            verdicts = verdicts_at(rt.plugins, market, sets, t, active_depegs)
            got = outcomes_at(market, verdicts, 24, fee=0.0)
            # bars after t+h change nothing: the same market cut at t+h gives the same numbers
            cut = closes_until(candles, after(t, 24, market.bar))
            short = runtime_market(rt, cut, sample=None, scorer=None)
            again = outcomes_at(
                short, verdicts_at(rt.plugins, short, sets, t, active_depegs), 24, fee=0.0
            )
            np.testing.assert_array_equal(got.reversion, again.reversion)
            for i, (a, b) in enumerate(market.pairs):
                zone = str(verdicts.zone[i])
                if zone not in ZONE_SIGN:
                    assert math.isnan(got.reversion[i])
                    continue
                closes_a = hourly_closes(tmp_path, a.ticker)
                closes_b = hourly_closes(tmp_path, b.ticker)
                later = at_or_before(closes_a, t + timedelta(hours=24), closes_b)
                ratio_t = math.log(closes_a[t] / closes_b[t])
                by_hand = ZONE_SIGN[zone] * (math.log(closes_a[later] / closes_b[later]) - ratio_t)
                assert got.reversion[i] == pytest.approx(by_hand, abs=1e-12)
                assert got.hold_value[i] == pytest.approx(by_hand, abs=1e-12)  # no fee
                checked += 1
    assert checked >= 2, "too few in-zone pairs to check"
    # the outage: t+24h of the first close is 2023-03-24T14:00Z, which no file holds
    assert CLOSES[0] + timedelta(hours=24) not in hourly_closes(tmp_path, "BTC")


def test_the_survivors_at_a_close_are_those_of_screen_run_as_of_that_close(hourly) -> None:  # type: ignore[no-untyped-def]
    rt, _key = hourly
    close = CLOSES[1]
    with database.connection_context():
        summary = run_screen_as_of_close(rt, close, processes=1)
        payload = json.loads(stored_payload(summary.screen_id))
        market = runtime_market(rt, runtime_candles(rt), sample=None, scorer=None)
        sets = rule_sets(rt.plugins, rt.universe, [])
        result = evaluate(
            rt.plugins, market, sets, [close], [24], every_days=6, fee=0.0,
            depegs_at=active_depegs,
        )  # fmt: skip
    expected = sorted(f"{s['pair'][0]}/{s['pair'][1]}" for s in payload["survivors"])
    assert expected, "a close without survivors proves little"
    got = result.results[0].per_date[0]
    assert got["as_of"] == "2023-03-27T06:00:00Z"
    assert sorted(got["survivor_pairs"]) == expected  # type: ignore[arg-type]


def cli_universe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bar: str = "1h"
) -> tuple[tuple[str, ...], dict]:  # type: ignore[type-arg]
    pin(monkeypatch)
    write_universe(tmp_path, bar)
    argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(tmp_path / "universe.toml"))
    env = newcomer_env(tmp_path)
    done = run_cli(*argv, "--quiet", "data", "sync", env=env)
    assert done.returncode == 0, done.stderr
    return argv, env


def test_evaluate_an_hourly_universe_on_the_command_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    argv, env = cli_universe(tmp_path, monkeypatch)
    done = run_cli(
        *argv, "--quiet", "evaluate", "--horizon", "24h", "--every", "6h",
        "--from", "2023-03-25T00:00Z", "--json", env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["bar"] == "1h"
    assert (body["every_bars"], body["every_hours"], body["every_days"]) == (6, 6.0, 0.25)
    assert body["horizons_bars"] == [24] and body["horizons_hours"] == [24.0]
    assert body["horizons"] == [1.0]  # days, as on a daily universe
    # from the close asked for to the last one 24 h before the newest bar (04-01T00:00Z)
    assert body["from_close"] == "2023-03-25T00:00:00Z"
    assert body["to_close"] == "2023-03-31T00:00:00Z"
    assert (body["from"], body["to"]) == ("2023-03-24", "2023-03-30")  # the bars' days
    assert body["data_through_close"] == "2023-04-01T00:00:00Z"
    per_date = body["rule_sets"][0]["per_date"]
    start = datetime(2023, 3, 25, tzinfo=UTC)
    assert [d["as_of"] for d in per_date] == [
        (start + timedelta(hours=6 * k)).strftime("%Y-%m-%dT%H:%M:%SZ") for k in range(25)
    ]
    (horizon,) = body["rule_sets"][0]["horizons"]
    assert (horizon["horizon_days"], horizon["horizon_bars"], horizon["horizon_hours"]) == (
        1.0,
        24,
        24.0,
    )
    assert horizon["reversion"]["difference"]["block_days"] == 4  # ceil(24 bars / 6 bars)
    text = run_cli(
        *argv, "--quiet", "evaluate", "--horizon", "1d", "--every", "6",
        "--from", "2023-03-25", env=env, timeout=60,
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    # a bare --every counts bars; a date is its end (the bar closing at 00:00 the next day)
    assert text.stdout.startswith(
        "21 as-of closes of 1h bars from 2023-03-26T00:00:00Z to 2023-03-31T00:00:00Z every 6 h "
        "(6 bars)"
    ), text.stdout
    row = next(line for line in text.stdout.splitlines() if line.startswith("screen "))
    assert row.split()[1:3] == ["24", "h"]  # the horizon named in hours


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--horizon", "90m"], "--horizon '90m' is not a whole number of 1h bars"),
        (["--every", "30m"], "--every '30m' is not a whole number of 1h bars"),
        (["--horizon", "24x"], "--horizon '24x' is not a duration"),
        (["--every", "0"], "--every must be at least one bar"),
        (["--from", "2023-03-25T99:00"], "--from '2023-03-25T99:00' is neither a date"),
        (
            ["--outcome", "strategy", "--horizon", "12h"],
            "span of days); --horizon 12 h is not: give 24h",
        ),
        (
            ["--from", "2023-03-31T12:00"],
            "--from 2023-03-31T12:00:00Z leaves no as-of close: the shortest horizon (24 h) "
            "can follow closes up to 2023-03-31T00:00:00Z only",
        ),
        (["--to", "2023-03-12"], "--to 2023-03-13T00:00:00Z leaves no as-of close"),
    ],
)
def test_bad_durations_on_an_hourly_universe_are_one_line(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch, args, message
) -> None:
    argv, env = cli_universe(tmp_path, monkeypatch)
    done = run_cli(*argv, "evaluate", *args, env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_the_strategy_outcome_and_a_portfolio_run_on_bars(hourly) -> None:  # type: ignore[no-untyped-def]
    from pairscreen.evaluation.portfolio import PortfolioSpec

    rt, _key = hourly
    with database.connection_context():
        market = runtime_market(rt, runtime_candles(rt), sample=None, scorer=rt.settings.scorer)
        assert isinstance(market, Market)
        sets = rule_sets(rt.plugins, rt.universe, [])[:1]
        strategy = rt.plugins.strategies.get(rt.settings.strategy)
        closes = [datetime(2023, 3, 25, tzinfo=UTC) + timedelta(hours=6 * k) for k in range(20)]
        result = evaluate(
            rt.plugins, market, sets, closes, [24], every_days=6, fee=0.001,
            depegs_at=active_depegs, outcome="strategy", strategy=strategy,
            portfolio=PortfolioSpec(2),
        )  # fmt: skip
    horizon = result.results[0].horizons[0]
    traded = horizon.measures["excess"].survivors
    assert traded.n > 0
    (portfolio,) = result.portfolio
    assert portfolio.block_days == 4
    assert portfolio.as_json()["horizon_days"] == 1.0
    assert portfolio.as_json()["horizon_hours"] == 24.0


@pytest.mark.parametrize(("every_bars", "expected"), [(1, {3}), (24, {1})])
def test_persistence_on_bars_counts_the_workers_previous_screens(  # type: ignore[no-untyped-def]
    hourly, tmp_path, every_bars, expected
) -> None:
    """A persistence rule counts the screens the bar-following worker made before the as-of
    close, one every PAIRSCREEN_SCREEN_EVERY_BARS bars (t - 1 h, t - 2 h, ... by default;
    t - 24 h, t - 48 h, ... at 24), each replayed as of its own close, as the live screen
    counts the previous screens that each read an earlier bar."""
    rt, _key = hourly
    rules = tmp_path / "persistent.toml"
    loose = "hurst_below = 1.5\nadf_below = 1.0\nmin_range_width = 0.0\nmin_touches = 0\n"
    loose += "min_history_days = 14\n"  # the universe's thresholds, as a rule file
    rules.write_text(f"[screen]\n{loose}min_persistence = 2\n", encoding="utf-8")
    # 14 days of history (the minimum) after the first bar 03-10T01:00Z: the day before this
    # close has them, the two before it do not, whereas the hours before it all do
    close = datetime(2023, 3, 25, 12, tzinfo=UTC)
    with database.connection_context():
        market = runtime_market(rt, runtime_candles(rt), sample=None, scorer=None)
        sets = rule_sets(rt.plugins, rt.universe, [rules])
        persistent = next(s for s in sets if s.name == "persistent")
        result = evaluate(
            rt.plugins, market, sets, [close], [24], every_days=6, fee=0.0,
            depegs_at=active_depegs, persistence_screens=3, screen_every_bars=every_bars,
        )  # fmt: skip
        before = [
            verdicts_at(
                rt.plugins, market, [persistent], close - timedelta(hours=k * every_bars),
                active_depegs,
            )
            for k in (1, 2, 3)
        ]  # fmt: skip
    entry = next(r for r in result.results if r.rule_set.name == "persistent").per_date[0]
    counted = entry["survived_last"]
    assert isinstance(counted, dict) and counted, "no pair judged"
    names = [f"{a.ticker}/{b.ticker}" for a, b in market.pairs]
    for name, count in counted.items():
        i = names.index(name)
        assert count == sum(int(v.survives["persistent"][i]) for v in before), name
    assert set(counted.values()) == expected
    spaced = "1 h apart" if every_bars == 1 else "24 h apart"
    assert any(spaced in w for w in result.warnings), result.warnings


def test_the_track_records_step_widens_on_a_long_intraday_history() -> None:
    """Two years of hourly closes at the default 6-hour step would replay 2,900 screens a
    day in the worker: the step widens to keep at most 1,000 as-of closes; a short history
    keeps 6 hours, and a daily universe its 30 days."""
    hour = bar_size("1h")
    start, end = datetime(2022, 1, 1, tzinfo=UTC), datetime(2023, 12, 31, tzinfo=UTC)
    every = track_record_every(hour, start, end, 6)
    assert every == 18  # 17,496 bars over at most 999 steps
    assert len(as_of_points(start, end, every, hour)) <= MAX_TRACK_RECORD_CLOSES
    short = datetime(2023, 10, 1, tzinfo=UTC), datetime(2023, 12, 30, 18, tzinfo=UTC)
    assert track_record_every(hour, *short, 6) == 6
    assert track_record_every(bar_size("1d"), start.date(), end.date(), 30) == 30


@pytest.mark.parametrize(
    ("bar", "every", "every_bars", "first_closes", "horizon_bars", "block", "refused"),
    [
        # a day is 6 bars: --every 8h is 2, --horizon 24h 6, blocks of 3 as-of closes
        ("4h", "8h", 2, ("00:00", "08:00", "16:00"), 6, 3, "6h"),
        # a day is 96 bars: --every 45m is 3, --horizon 24h 96, blocks of 32
        ("15m", "45m", 3, ("00:00", "00:45", "01:30"), 96, 32, "20m"),
    ],
)
def test_evaluate_counts_the_universes_own_bars(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch, bar, every, every_bars, first_closes, horizon_bars, block, refused
) -> None:
    """The step and the horizon are whole numbers of the universe's bars, the as-of closes
    fall where the step puts them (quarter hours on 15-minute bars), the overlap blocks count
    as-of closes, and a step that is not a whole number of bars is refused in one line."""
    argv, env = cli_universe(tmp_path, monkeypatch, bar)
    done = run_cli(
        *argv, "--quiet", "evaluate", "--horizon", "24h", "--every", every,
        "--from", "2023-03-30T00:00Z", "--json", env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["bar"] == bar
    assert body["every_bars"] == every_bars
    assert body["horizons_bars"] == [horizon_bars] and body["horizons_hours"] == [24.0]
    assert body["to_close"] == "2023-03-31T00:00:00Z"  # 24 h before the newest bar
    per_date = body["rule_sets"][0]["per_date"]
    assert [d["as_of"] for d in per_date[:3]] == [f"2023-03-30T{hm}:00Z" for hm in first_closes]
    (horizon,) = body["rule_sets"][0]["horizons"]
    assert horizon["reversion"]["difference"]["block_days"] == block  # ceil(h / every)
    wrong = run_cli(*argv, "--quiet", "evaluate", "--every", refused, env=env, timeout=60)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert f"--every '{refused}' is not a whole number of {bar} bars" in wrong.stderr


def test_evaluate_on_four_hour_bars_steps_one_bar_and_names_days_it_cannot_follow(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch
) -> None:
    """Without --every a 4-hour universe steps as its track record does (the 6-hour default
    of hourly bars is no whole number of 4-hour bars), and closes no horizon can follow are
    refused in one line."""
    argv, env = cli_universe(tmp_path, monkeypatch, "4h")
    # left out, --every is the track record's step on 4-hour bars (one bar), not a refused 6h
    done = run_cli(
        *argv, "--quiet", "evaluate", "--horizon", "24h", "--from", "2023-03-25T00:00Z",
        "--json", env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert (body["every_bars"], body["every_hours"]) == (track_record_steps(bar_size("4h"))[0], 4.0)
    # closes no horizon can follow: one line naming them, never a --to or --from not given
    for extra, said in (
        (["--horizon", "1000d"], "no as-of close: the shortest horizon (24000 h) can follow"),
        (["--from", "2020-01-01", "--to", "2020-02-01"], "leaves no as-of close: the first"),
    ):
        refused = run_cli(*argv, "--quiet", "evaluate", *extra, env=env, timeout=60)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert said in refused.stderr and "is before --from" not in refused.stderr


def test_a_strategy_outcome_across_a_missing_bar_starts_at_its_close(hourly) -> None:  # type: ignore[no-untyped-def]
    """The strategy simulates whole days ending at the cut's last bar. With every asset's bar
    at t + 48 h gone (an outage), the cut ends at the last bar a whole day after t (t + 24 h),
    so the simulation starts at t, as the 24 h horizon's does, not 23 hours later."""
    from pairscreen.contracts.assets import Candles
    from pairscreen.evaluation.strategy_outcomes import strategy_outcomes_at
    from pairscreen.universe import SwapCosts

    rt, _key = hourly
    t = CLOSES[1]
    gone = np.datetime64(stamp(t + timedelta(hours=48), bar_size("1h")))
    with database.connection_context():
        candles = {
            ticker: Candles(c.ticker, c.dates[keep], c.close[keep], c.volume[keep])
            for ticker, c in runtime_candles(rt).items()
            for keep in [c.dates != gone]
        }
        assert all(len(c.dates) for c in candles.values())
        market = runtime_market(rt, candles, sample=None, scorer=None)
        sets = rule_sets(rt.plugins, rt.universe, [])
        verdicts = verdicts_at(rt.plugins, market, sets, t, active_depegs)
        strategy = rt.plugins.strategies.get(rt.settings.strategy)
        day = strategy_outcomes_at(strategy, market, verdicts, 24, 0.001, SwapCosts())
        two = strategy_outcomes_at(strategy, market, verdicts, 48, 0.001, SwapCosts())
    assert np.isfinite(day.excess).sum() >= 2, "too few in-zone pairs to check"
    np.testing.assert_array_equal(two.strategy_return, day.strategy_return)
    np.testing.assert_array_equal(two.hold_both, day.hold_both)
