"""``pairscreen evaluate`` replays the screen-wide rules point-in-time: a q-value rule keeps
the pairs whose Benjamini-Hochberg q-value over that day's tested pairs (statsmodels'
``multipletests``) is below its limit, persistence counts what point-in-time screens of the
days before survived, and nothing after an as-of day changes its verdicts."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from pairscreen.contracts import Candles
from pairscreen.db.connection import database
from pairscreen.db.models import Screen
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import Evaluation, evaluate
from pairscreen.evaluation.verdicts import Market
from pairscreen.pegs.status import active_depegs
from pairscreen.screening.point_in_time import run_screen_as_of
from pairscreen.universe import Universe
from tests.series_factory import LAST_DAY, mean_reverting, random_walk
from tests.test_evaluation import N_DAYS, no_depegs, universe_of

from pairscreen_plugins.metrics.cointegration import engle_granger  # isort: skip
from pairscreen.screen_store.published import stored_payload

WINDOW = 540
LAST = date.fromisoformat(str(LAST_DAY))
DAYS = [LAST - timedelta(days=d) for d in (400, 340, 280, 220)]


def synthetic(*, screen: dict[str, float] | None = None) -> tuple[Universe, dict[str, Candles]]:
    """30 pairs, half mean-reverting with various strengths, half random walks."""
    series = [mean_reverting(500 + i, N_DAYS) for i in range(15)]
    series += [random_walk(600 + i, N_DAYS) for i in range(15)]
    universe, candles = universe_of(series)
    return replace(universe, screen_thresholds=screen or {}), candles


def rules(tmp_path: Path, name: str, table: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'[screen]\nfilter = "default"\n{table}\n')
    return path


def replay(plugins, universe, candles, files, days, *, sample=None) -> Evaluation:  # type: ignore[no-untyped-def]
    market = Market.of(universe, candles, window_days=WINDOW, min_history_days=200, sample=sample)
    return evaluate(
        plugins,
        market,
        rule_sets(plugins, universe, files),
        days,
        (30,),
        every_days=60,
        fee=0.001,
        depegs_at=no_depegs,
    )


def coint_pvalues(candles: dict[str, Candles], pairs: list[tuple[str, str]], day: date):  # type: ignore[no-untyped-def]
    """Each pair's symmetric Engle-Granger p-value over its last 540 closes up to ``day``,
    from the two orders computed directly on the logs (``engle_granger`` equals statsmodels'
    ``coint`` to 1e-9: tests/test_cointegration_parity.py), not through the replay."""
    end = int(np.searchsorted(candles[pairs[0][0]].dates, np.datetime64(day), side="right"))
    log_a = np.log([candles[a].close[end - WINDOW : end] for a, _ in pairs])
    log_b = np.log([candles[b].close[end - WINDOW : end] for _, b in pairs])
    return np.maximum(engle_granger(log_a, log_b)[0], engle_granger(log_b, log_a)[0])


def by_name(result: Evaluation) -> dict[str, tuple[dict[str, object], ...]]:
    return {r.rule_set.name: r.per_date for r in result.results}


@pytest.mark.parametrize("sample", [None, 24])
def test_a_qvalue_rule_keeps_the_pairs_statsmodels_bh_keeps_each_day(empty_runtime, sample):
    limit = 0.05
    universe, candles = synthetic(screen={"coint_q_below": limit})
    result = replay(empty_runtime.plugins, universe, candles, [], DAYS, sample=sample)
    days = by_name(result)
    assert "without coint_q" in days  # the rule is on in the screen: its "without" set
    market = Market.of(universe, candles, window_days=WINDOW, min_history_days=200, sample=sample)
    pairs = [(a.ticker, b.ticker) for a, b in market.pairs]
    assert len(pairs) == (sample or 30)
    bound = kept = 0
    for screen, loose in zip(days["screen"], days["without coint_q"], strict=True):
        day = date.fromisoformat(str(screen["as_of"]))
        # The family: every pair evaluated that day (the sample's, when sampled).
        p = coint_pvalues(candles, pairs, day)
        q = dict(
            zip([f"{a}/{b}" for a, b in pairs], multipletests(p, method="fdr_bh")[1], strict=True)
        )
        assert not any(abs(v - limit) < 1e-6 for v in q.values())  # no decision on a hair
        filtered = set(loose["survivor_pairs"])  # type: ignore[arg-type]
        expected = {pair for pair in filtered if q[pair] < limit}
        assert set(screen["survivor_pairs"]) == expected, day  # type: ignore[arg-type]
        assert screen["qvalue_tests"] == {"coint_pvalue": len(pairs), "adf_pvalue": len(pairs)}
        assert screen["rejected"] == {"coint_q": len(filtered - expected)}  # type: ignore[index]
        bound += len(filtered - expected)
        kept += len(expected)
    assert bound > 0 and kept > 0, (bound, kept)  # the rule binds and keeps: a real test
    sampled = [w for w in result.warnings if w.startswith("q-values: Benjamini-Hochberg")]
    assert bool(sampled) == (sample is not None), result.warnings


SPREAD_SEARCH_DAYS = 60


def day_with_a_spread(runtime, start: date, n: int) -> tuple[date, dict[str, object]]:
    """The first day from ``start`` on whose point-in-time screen has survivors that survived
    all ``n`` screens before it and survivors that did not (a real spread for the rule to
    cut), with that screen's payload. Screens are stored day by day, oldest first, so each
    counts the ones before it; the search keeps the test's precondition true whatever day
    the demo market ends on."""
    for back in range(n, 0, -1):
        run_screen_as_of(runtime, start - timedelta(days=back), processes=1)
    for offset in range(SPREAD_SEARCH_DAYS):
        day = start + timedelta(days=offset)
        run_screen_as_of(runtime, day, processes=1)
        with database.connection_context():
            live = json.loads(stored_payload(Screen.get(Screen.as_of == day).id))
        counts = [s["survived_last"] for s in live["survivors"]]
        if counts and max(counts) == n and min(counts) < n:
            return day, live
    pytest.fail(f"no day of {SPREAD_SEARCH_DAYS} from {start} has survivors of both kinds")


def test_persistence_replay_counts_what_point_in_time_screens_survived(runtime, tmp_path):
    """Point-in-time screens of the six days before ``day`` and of ``day`` itself (each
    counting the ones before it, as stored history), against the replay of ``day``."""
    candles = runtime.candles.get()
    newest = date.fromisoformat(str(max(c.dates[-1] for c in candles.values())))
    n = runtime.settings.persistence_screens
    day, live = day_with_a_spread(runtime, newest - timedelta(days=120), n)
    want = {"/".join(s["pair"]): s["survived_last"] for s in live["survivors"]}
    assert len(live["persistence_screens"]) == n

    files = [rules(tmp_path, f"persist_{k}", f"min_persistence = {k}") for k in (1, n)]
    market = Market.of(
        runtime.universe,
        candles,
        window_days=runtime.settings.window_days,
        min_history_days=runtime.settings.min_history_days,
    )
    sets = rule_sets(runtime.plugins, runtime.universe, files)

    def at(days: list[date], every: int) -> dict[str, tuple[dict[str, object], ...]]:
        result = evaluate(
            runtime.plugins, market, sets, days, [30], every_days=every, fee=0.0,
            depegs_at=active_depegs, persistence_screens=n,
        )  # fmt: skip
        return by_name(result)

    alone = at([day], 30)
    assert sorted(alone["screen"][0]["survivor_pairs"]) == sorted(want)  # type: ignore[arg-type]
    for k in (1, n):
        entry = alone[f"persist_{k}"][0]
        assert entry["survived_last"] == want  # every pair the rule judged, with its count
        kept = {pair for pair, count in want.items() if count >= k}
        assert set(entry["survivor_pairs"]) == kept  # type: ignore[arg-type]
        assert entry["rejected"] == {"persistence": len(want) - len(kept)}
    # Consecutive as-of days: the previous day is computed whole once and counted again.
    daily = at([day - timedelta(days=1), day], 1)
    assert daily["persist_1"][1] == alone["persist_1"][0]


def garbage_after(candles: dict[str, Candles], day: date, seed: int) -> dict[str, Candles]:
    rng = np.random.default_rng(seed)
    out = {}
    for ticker, c in candles.items():
        close = c.close.copy()
        later = c.dates > np.datetime64(day)
        close[later] = close[later] * np.exp(rng.normal(0, 0.5, int(later.sum())))
        out[ticker] = Candles(ticker, c.dates, close, c.volume)
    return out


def test_data_after_an_as_of_day_changes_none_of_its_screen_wide_verdicts(empty_runtime, tmp_path):
    universe, candles = synthetic(screen={"coint_q_below": 0.2, "adf_q_below": 0.5})
    files = [
        rules(tmp_path, "persist", "min_persistence = 3"),
        rules(tmp_path, "q_and_persist", "coint_q_below = 0.3\nmin_persistence = 2"),
    ]
    day = DAYS[1]
    before = by_name(replay(empty_runtime.plugins, universe, candles, files, [day]))
    changed = garbage_after(candles, day, 7)
    after = by_name(replay(empty_runtime.plugins, universe, changed, files, [day]))
    assert before == after
    assert sum(len(d[0]["survived_last"]) for k, d in before.items() if "persist" in k) > 0  # type: ignore[arg-type]
    # The garbage does reach the verdicts of a later day: the comparison can fail.
    later = DAYS[2]
    clean = by_name(replay(empty_runtime.plugins, universe, candles, files, [later]))
    dirty = by_name(replay(empty_runtime.plugins, universe, changed, files, [later]))
    assert clean != dirty


def test_publish_with_screen_wide_rules_on_states_them_and_how_they_were_replayed(
    cli, runtime, keys, tmp_path
):
    from pairscreen.bootstrap import build_runtime
    from tests.conftest import make_client
    from tests.test_screen_evidence import DEMO_UNIVERSE

    universe = tmp_path / "universe.toml"
    table = "coint_q_below = 0.5\nmin_persistence = 1\n"
    universe.write_text(DEMO_UNIVERSE.read_text() + "\n[screen]\n" + table)
    code, out, err = cli(
        "--universe", str(universe), "evaluate", "--every", "120", "--horizon", "30",
        "--sample", "60", "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    names = [s["name"] for s in body["rule_sets"]]
    assert names[0] == "screen" and {"without coint_q", "without persistence"} <= set(names)
    screen = body["rule_sets"][0]
    limits = {"coint_q_below": 0.5, "adf_q_below": 1.0, "min_persistence": 1}
    assert screen["screen_rules"] == limits
    assert body["persistence_screens"] == runtime.settings.persistence_screens
    for entry in screen["per_date"]:
        assert entry["pairs_tested"] <= 60 and set(entry["rejected"]) == {"coint_q", "persistence"}
        kept = {p for p, n in entry["survived_last"].items() if n >= 1}
        assert set(entry["survivor_pairs"]) == kept
    assert any(w.startswith("q-values: Benjamini-Hochberg") for w in body["warnings"])
    assert any(w.startswith("persistence: survived_last counts") for w in body["warnings"])

    code, out, err = cli(
        "--universe", str(universe), "evaluate", "--every", "120", "--horizon", "30",
        "--sample", "60", "--publish", "--json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    published = json.loads(out)
    rt = build_runtime(replace(runtime.settings, universe_path=universe), migrate=False)
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/evidence", keys.personal)  # validated against openapi.yaml
    assert r.status_code == 200, r.text
    served = r.json()
    assert served["rules"]["screen_rules"] == limits
    assert served["warnings"] == published["warnings"] == body["warnings"]
