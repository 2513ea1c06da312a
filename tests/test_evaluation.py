"""``pairscreen evaluate``: verdicts equal the point-in-time screen's, an edge is found where
one was built in and none is invented where there is none, and the outputs hold their fields."""

from __future__ import annotations

import json
from datetime import date, timedelta

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.db.models import Screen
from pairscreen.evaluation.dates import as_of_dates
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import Evaluation, evaluate
from pairscreen.evaluation.statistics import difference
from pairscreen.evaluation.verdicts import Market
from pairscreen.pegs.status import active_depegs
from pairscreen.screening.point_in_time import run_screen_as_of
from pairscreen.types import Asset, Candles
from pairscreen.universe import Universe
from tests.series_factory import LAST_DAY, PairSeries, mean_reverting, random_walk

N_DAYS = 1500
EVERY = 20
HORIZONS = (30, 60)


def no_depegs(_at: object) -> dict:
    return {}


def universe_of(series: list[PairSeries]) -> tuple[Universe, dict[str, Candles]]:
    """Each generated pair in a sector of its own, so the screened pairs are exactly these."""
    assets: list[Asset] = []
    candles: dict[str, Candles] = {}
    for i, s in enumerate(series):
        for leg, close, volume in (("A", s.close_a, s.volume_a), ("B", s.close_b, s.volume_b)):
            ticker = f"P{i}{leg}"
            assets.append(Asset(ticker, sector=f"s{i}"))
            candles[ticker] = Candles(ticker, s.dates, close, volume)
    return Universe(tuple(assets), market_source="csv"), candles


def run(plugins, series: list[PairSeries]) -> Evaluation:  # type: ignore[no-untyped-def]
    universe, candles = universe_of(series)
    market = Market.of(universe, candles, window_days=540, min_history_days=200)
    last = date.fromisoformat(str(LAST_DAY))
    dates = as_of_dates(last - timedelta(N_DAYS - 760), last - timedelta(max(HORIZONS)), EVERY)
    sets = rule_sets(plugins, universe, [])
    progress: list[tuple[int, int]] = []
    result = evaluate(
        plugins,
        market,
        sets,
        dates,
        HORIZONS,
        every_days=EVERY,
        fee=0.001,
        depegs_at=no_depegs,
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert progress == [(i + 1, len(dates)) for i in range(len(dates))]
    return result


def test_built_in_mean_reversion_shows_as_a_positive_difference(empty_runtime):
    series = [mean_reverting(100 + i, N_DAYS) for i in range(12)]
    series += [random_walk(200 + i, N_DAYS) for i in range(12)]
    result = run(empty_runtime.plugins, series)
    screen = result.results[0]
    assert screen.rule_set.name == "screen"
    survivors = sum(int(d["survivors"]) for d in screen.per_date)  # type: ignore[call-overload]
    assert survivors > 0
    for h in screen.horizons:
        diff = h.difference
        assert diff.estimate is not None and diff.low is not None, h
        assert diff.low > 0, (h.horizon, diff)
        assert diff.block_days == -(-h.horizon // EVERY)


def test_pure_random_walks_show_no_edge(empty_runtime):
    series = [random_walk(300 + i, N_DAYS) for i in range(24)]
    result = run(empty_runtime.plugins, series)
    screen = result.results[0]
    assert sum(int(d["survivors"]) for d in screen.per_date) > 0  # type: ignore[call-overload]
    for h in screen.horizons:
        diff = h.difference
        assert diff.low is not None and diff.high is not None, h
        assert diff.low <= 0 <= diff.high, (h.horizon, diff)


def test_block_bootstrap_is_fixed_and_wider_with_longer_blocks():
    rng = np.random.default_rng(1)
    common = rng.normal(0, 0.05, 40).cumsum() * 0.1  # a factor shared by all pairs of a day
    survivors = [common[i] + rng.normal(0.01, 0.02, 5) for i in range(40)]
    rest = [common[i] + rng.normal(0.0, 0.02, 30) for i in range(40)]
    one = difference(survivors, rest, 1)
    again = difference(survivors, rest, 1)
    assert one == again
    assert one.estimate == pytest.approx(
        np.concatenate(survivors).mean() - np.concatenate(rest).mean()
    )
    assert one.low is not None and one.high is not None
    assert one.low < one.estimate < one.high
    assert difference(survivors, [], 1).estimate is None


def test_evaluation_at_a_day_gives_the_survivors_of_screen_run_as_of(runtime):
    candles = runtime.candles.get()
    newest = date.fromisoformat(str(max(c.dates[-1] for c in candles.values())))
    day = newest - timedelta(days=120)
    summary = run_screen_as_of(runtime, day, processes=1)
    payload = json.loads(Screen.get_by_id(summary.screen_id).payload)
    expected = sorted(f"{s['pair'][0]}/{s['pair'][1]}" for s in payload["survivors"])
    assert expected, "a day without survivors proves little"
    market = Market.of(
        runtime.universe,
        candles,
        window_days=runtime.settings.window_days,
        min_history_days=runtime.settings.min_history_days,
    )
    sets = rule_sets(runtime.plugins, runtime.universe, [])
    result = evaluate(
        runtime.plugins, market, sets, [day], [30], every_days=30, fee=0.0, depegs_at=active_depegs
    )
    got = result.results[0].per_date[0]
    assert sorted(got["survivor_pairs"]) == expected  # type: ignore[arg-type]
    assert got["survivors"] == payload["n_survivors"]


def test_cli_json_plot_and_rule_files(cli, runtime, tmp_path):
    rules = tmp_path / "loose.toml"
    rules.write_text('[screen]\nfilter = "default"\nhurst_below = 0.6\n')
    plot = tmp_path / "eval.png"
    code, out, err = cli(
        "evaluate", "--every", "60", "--horizon", "30,90", "--rules", str(rules), "--json",
        "--plot", str(plot),
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert body["horizons"] == [30, 90] and body["fee"] == 0.001
    names = [s["name"] for s in body["rule_sets"]]
    assert names[0] == "screen" and "without hurst" in names and names[-1] == "loose"
    assert body["rule_sets"][-1]["thresholds"]["hurst_below"] == 0.6
    for rule_set in body["rule_sets"]:
        assert rule_set["per_date"]
        for entry in rule_set["per_date"]:
            assert {"as_of", "pairs", "survivors"} <= set(entry)
        for horizon in rule_set["horizons"]:
            diff = horizon["reversion"]["difference"]
            assert {"estimate", "ci95", "min_detectable"} <= set(diff)
    assert any("cannot resolve differences smaller than" in w for w in body["warnings"])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = cli("evaluate", "--every", "60")
    assert code == 0 and "difference [95% CI]" in out and "screen" in out


def test_from_alone_chooses_the_last_followed_day_or_says_why(cli):
    newest = clock.today() - timedelta(days=1)  # the demo market closes every day
    last_followed = newest - timedelta(days=90)
    too_late = last_followed + timedelta(days=1)
    code, _out, err = cli("evaluate", "--from", too_late.isoformat())
    assert code == 2 and err.count("\n") == 1
    assert (
        f"--from {too_late} leaves no as-of day: the longest horizon (90 days) can follow "
        f"days up to {last_followed} only (newest close {newest}); give --from "
        f"{last_followed} or earlier, or a shorter --horizon" in err
    )
    code, out, err = cli("evaluate", "--from", last_followed.isoformat(), "--json")
    assert code == 0, err
    (only,) = json.loads(out)["rule_sets"][0]["per_date"]
    assert only["as_of"] == last_followed.isoformat()
    code, _out, err = cli("evaluate", "--from", too_late.isoformat(), "--horizon", "30")
    assert code == 0, err  # a shorter horizon leaves room
    code, _out, err = cli("evaluate", "--from", clock.today().isoformat())
    assert code == 2 and "has not closed yet" in err
    code, _out, err = cli("evaluate", "--to", "2000-01-01")
    assert code == 2 and err.count("\n") == 1 and "--to 2000-01-01 leaves no as-of day" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--every", "0"], "--every must be at least 1 day"),
        (["--horizon", "30,x"], "--horizon 'x' is not a whole number"),
        (["--from", "2025-13-01"], "--from '2025-13-01' is not a date"),
        (["--from", "2025-03-01", "--to", "2025-01-01"], "is before --from"),
        (["--rules", "/nonexistent.toml"], "cannot read rule file"),
    ],
)
def test_cli_bad_input_is_one_line(cli, argv, message):
    code, _out, err = cli("evaluate", *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1
