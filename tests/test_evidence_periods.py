"""``/evidence`` names its periods and sets the model's promise beside what it realised.

* ``data_through`` is the newest close the evaluation read: the last as-of day's longest
  outcome.
* ``periods`` splits the as-of days at ``defaults_chosen_through`` (a setting, 2023-12-31 by
  default): ``after`` first, then ``chosen_on``; the ``after`` rows are exactly those of an
  evaluation run over the ``after`` days alone.
* ``calibration`` groups the survivors by quintile of ``ou_expected_return_per_year``; a
  hand-built input checks the quintiles, means and clustered intervals number by number.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from datetime import date, timedelta

import numpy as np
import pytest
from scipy.special import stdtrit

from pairscreen import clock
from pairscreen.config import Settings
from pairscreen.db.connection import database
from pairscreen.evaluation.calibration import calibrate
from pairscreen.evaluation.track_record import evaluate_current_rules, split_periods
from pairscreen.screen_store.evidence import publish
from tests.conftest import make_client

BASE = "/api/v1"
CHOSEN_THROUGH = date(2025, 6, 30)  # inside the demo market's history, so both periods hold days


def test_evidence_serves_data_through_its_periods_and_the_calibration(runtime, keys):
    rt = replace(
        runtime, settings=replace(runtime.settings, defaults_chosen_through=CHOSEN_THROUGH)
    )
    with database.connection_context():
        record = evaluate_current_rules(rt, sample=30, every_days=45)
        publish(record.body, record.first_day, record.last_day, clock.now())
        newest = max(c.dates[-1] for c in rt.candles.get().values()).astype(date)
    client = make_client(rt)
    with client.client:
        r = client.get(f"{BASE}/evidence", keys.personal)  # validated against openapi.yaml
    assert r.status_code == 200, r.text
    body = r.json()

    # The newest close an outcome read: each horizon follows the as-of days it can (the
    # range runs to the last day the 30-day horizon can follow), every 45 days.
    first_as_of, last_as_of = date.fromisoformat(body["from"]), date.fromisoformat(body["to"])
    as_of_days = [
        first_as_of + timedelta(days=k) for k in range(0, (last_as_of - first_as_of).days + 1, 45)
    ]
    followed = [d + timedelta(days=h) for d in as_of_days for h in (30, 90)]
    assert body["data_through"] == max(day for day in followed if day <= newest).isoformat()
    assert last_as_of + timedelta(days=30) <= newest < last_as_of + timedelta(days=30 + 45)

    assert body["defaults_chosen_through"] == "2025-06-30"
    after, chosen_on = body["periods"]
    assert (after["name"], chosen_on["name"]) == ("after", "chosen_on")
    assert chosen_on["from"] == body["from"] and after["to"] == body["to"]
    assert date.fromisoformat(chosen_on["to"]) <= CHOSEN_THROUGH
    assert date.fromisoformat(after["from"]) > CHOSEN_THROUGH
    assert (date.fromisoformat(after["from"]) - date.fromisoformat(chosen_on["to"])).days == 45
    assert after["as_of_days"] + chosen_on["as_of_days"] == body["as_of_days"]
    assert chosen_on["as_of_days"] >= 2 and after["as_of_days"] >= 2
    with database.connection_context():
        alone = evaluate_current_rules(
            rt,
            sample=30,
            every_days=45,
            start=date.fromisoformat(after["from"]),
            end=date.fromisoformat(after["to"]),
        )
    assert after["horizons"] == alone.body["horizons"]
    assert after["horizons"] != chosen_on["horizons"]

    table = body["calibration"]
    assert (table["model_field"], table["horizon"], table["measure"]) == (
        "ou_expected_return_per_year",
        30,
        "excess",  # the strategy's return over holding both legs
    )
    groups = table["groups"]
    assert [g["quintile"] for g in groups] == [1, 2, 3, 4, 5]
    assert sum(g["n"] for g in groups) == table["n"] > 0
    held = body["horizons"][0]["hold_value"]["survivors"]
    assert body["horizons"][0]["horizon_days"] == 30
    assert table["n"] <= held["n"]
    filled = [g for g in groups if g["n"]]
    for lower, upper in itertools.pairwise(filled):
        assert lower["model_high"] <= upper["model_low"]
    for g in filled:
        assert g["model_low"] <= g["model_mean"] <= g["model_high"]
        assert g["model_implied"] == pytest.approx(g["model_mean"] * 30 / 365, rel=1e-12)
        if g["ci95"] is not None:
            assert g["ci95"][0] <= g["realised_mean"] <= g["ci95"][1]


def test_the_defaults_period_is_declared_once_and_splits_at_its_last_day():
    assert Settings().defaults_chosen_through == date(2023, 12, 31)
    first, last = date(2023, 6, 1), date(2024, 6, 1)
    assert split_periods(date(2023, 12, 31), first, last) == [
        ("after", date(2024, 1, 1), last),
        ("chosen_on", first, date(2023, 12, 31)),
    ]


def test_calibration_groups_survivors_by_quintile_with_intervals_over_independent_days():
    """Ten survivors with model figures 1 … 10 over two days (one block each), two of each
    quintile, one per day; a non-survivor, a survivor without an outcome and one without a
    model figure are left out."""
    model = [
        np.array([1.0, 3.0, 5.0, 7.0, 9.0, 100.0, np.nan]),
        np.array([2.0, 4.0, 6.0, 8.0, 10.0, 50.0, 0.5]),
    ]
    survive = [
        np.array([True, True, True, True, True, False, True]),
        np.array([True, True, True, True, True, True, True]),
    ]
    realised = [
        np.array([0.10, 0.00, -0.02, 0.03, 0.20, 1.0, 1.0]),
        np.array([0.30, 0.04, -0.06, 0.03, -0.10, np.nan, np.nan]),
    ]
    table = calibrate(model, survive, realised, block_days=1)
    assert table.n == 10
    t = float(stdtrit(1, 0.975))
    for q, group in enumerate(table.groups):
        a, b = realised[0][q], realised[1][q]
        assert group.quintile == q + 1 and group.n == 2 and group.blocks == 2
        assert (group.model_low, group.model_high) == (2.0 * q + 1, 2.0 * q + 2)
        assert group.realised_mean == pytest.approx((a + b) / 2, abs=1e-15)
        # Two blocks, one observation each: the clustered standard error is |a - b| / 2.
        half = t * abs(a - b) / 2
        assert group.low == pytest.approx((a + b) / 2 - half, abs=1e-12)
        assert group.high == pytest.approx((a + b) / 2 + half, abs=1e-12)
    # The two days in one block: a single independent period gives no interval.
    merged = calibrate(model, survive, realised, block_days=2)
    assert all(g.blocks == 1 and g.low is None for g in merged.groups)
    assert math.isclose(merged.groups[0].realised_mean or 0.0, 0.2)
