"""``evaluate`` on forked workers gives what one process gives, to the bit: the run is cut
into stretches of as-of days, and a stretch replays first, whole, the run's as-of days its
first day's persistence rule counts (``evaluation.day_work``)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from pairscreen.evaluation import day_work
from pairscreen.evaluation.report import as_json
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import evaluate
from pairscreen.evaluation.verdicts import Market
from tests.test_evaluation import no_depegs
from tests.test_evaluation_screen_wide import DAYS, WINDOW, rules, synthetic


@pytest.mark.parametrize("outcome", ["reversion", "strategy"])
def test_stretches_on_two_processes_give_the_one_process_result(
    empty_runtime, tmp_path, monkeypatch, outcome
):
    plugins = empty_runtime.plugins
    universe, candles = synthetic(screen={"coint_q_below": 0.5})
    files = [
        rules(tmp_path, "persist", "min_persistence = 2"),  # previous days: candidates only
        rules(tmp_path, "q_and_persist", "coint_q_below = 0.3\nmin_persistence = 3"),
    ]
    sets = rule_sets(plugins, universe, files)
    dates = [DAYS[1] + timedelta(days=d) for d in range(12)]
    market = Market.of(universe, candles, window_days=WINDOW, min_history_days=200)

    def run(processes: int) -> str:
        result = evaluate(
            plugins, market, sets, dates, (30,), every_days=1, fee=0.001, depegs_at=no_depegs,
            persistence_screens=3, outcome=outcome,
            strategy=plugins.strategies.get("accumulation"), processes=processes,
        )  # fmt: skip
        return json.dumps(as_json(result), allow_nan=False, sort_keys=True)

    one = run(1)
    monkeypatch.setattr(day_work, "MIN_STRETCH_DAYS", 2)
    monkeypatch.setattr(day_work, "WARM_SHARE", 1)
    plan = day_work.DayPlan(plugins, market, sets, 3, (30,), 0.001, None, None, False)
    stretches = day_work._stretches(plan, dates, 2)
    assert len(stretches) == 4  # 3 days each; each later one replays the 3 days before it
    assert [len(warm) for warm, _days in stretches] == [0, 3, 3, 3]
    assert [d for _warm, days in stretches for d in days] == dates
    assert run(2) == one
    assert '"survived_last"' in one  # the persistence rule judged pairs: the check can fail
