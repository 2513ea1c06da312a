"""In-sample figures say so.

* ``breakeven_fee`` counts closed swaps only and is null, with a reason, below 3 of them; the
  open position is shown apart (``open_position_pct``). Hand-built log-ratios whose swaps are
  known in advance: a sine for the bands, then excursions past them on chosen days.
* The in-sample fields say "in-sample" in openapi.yaml, the CSV answer names them in its
  ``In-Sample-Columns`` header, and the website marks them.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from pairscreen import PairPanel
from pairscreen.screening import in_sample
from tests.series_factory import PairSeries, panel

from pairscreen_plugins.metrics.breakeven import BreakevenMetric  # isort: skip
from pairscreen_plugins.strategies.accumulation import AccumulationStrategy  # isort: skip

ROOT = Path(__file__).resolve().parents[1]
BASE = "/api/v1"
BAND_DAYS, SIMULATED = 540, 360
HIGH = 0.35  # beyond the sine's p95 (about 0.29): leg A swaps into B the next day
# First day of each excursion, counted from the first simulated day; each lasts 3 days.
ONE_ROUND_TRIP_AND_OPEN = ((50, HIGH), (100, -HIGH), (300, HIGH))
TWO_ROUND_TRIPS = ((50, HIGH), (100, -HIGH), (200, HIGH), (250, -HIGH))


def hand_built(name: str, excursions: tuple[tuple[int, float], ...]) -> PairSeries:
    """A log-ratio r = ln(A/B): a sine of amplitude 0.3 over the band window, then 0 on every
    simulated day but the excursions; B is constant."""
    days = np.arange(BAND_DAYS)
    sine = 0.3 * np.sin(2 * np.pi * days / 60)
    simulated = np.zeros(SIMULATED + 1)
    for start, level in excursions:
        simulated[start : start + 3] = level
    r = np.concatenate([sine, simulated])
    close_b = np.full(r.size, 20.0)
    ones = np.ones(r.size)
    return PairSeries(name, close_b * np.exp(r), close_b, ones, ones)


def the_panel() -> PairPanel:
    return panel(
        [hand_built("open", ONE_ROUND_TRIP_AND_OPEN), hand_built("closed", TWO_ROUND_TRIPS)]
    )


def test_breakeven_fee_is_null_below_three_closed_swaps_and_the_open_position_is_apart() -> None:
    leg_a = AccumulationStrategy().run(the_panel(), bt_days=SIMULATED, start_leg="A")
    assert leg_a.breakeven_fee is not None and leg_a.breakeven_swaps is not None
    assert leg_a.open_position_pct is not None
    assert leg_a.n_trades.tolist() == [3, 4]
    # Row "open": out at +0.35, home at -0.35 (two closed swaps), out again at +0.35 and held.
    assert leg_a.breakeven_swaps.tolist() == [2, 4]
    assert math.isnan(leg_a.breakeven_fee[0])
    # The open position: bought B at r = 0.35, marked at the last close, r = 0.
    assert leg_a.open_position_pct[0] == pytest.approx(100 * math.expm1(HIGH), rel=1e-12)
    # Row "closed": two round trips each gain 0.70 in log; four swaps break even at
    # f = 1 - exp(-1.40 / 4), and nothing is open.
    assert leg_a.breakeven_fee[1] == pytest.approx(-math.expm1(-4 * HIGH / 4), rel=1e-12)
    assert math.isnan(leg_a.open_position_pct[1])


def test_the_pairs_breakeven_metric_says_why_it_is_null() -> None:
    got = BreakevenMetric(AccumulationStrategy()).compute(the_panel())
    # Leg B of "open" swaps into A at -0.35 and home at +0.35: two closed swaps as well.
    assert math.isnan(got["breakeven_fee"][0])
    assert got["breakeven_swaps"][0] == 2
    assert got["breakeven_fee_reason"][0] == (
        "the legs closed 2 and 2 swaps in the backtest, at least 3 needed"
    )
    assert got["breakeven_fee"][1] == pytest.approx(-math.expm1(-HIGH), rel=1e-12)
    assert got["breakeven_swaps"][1] == 4 and got["breakeven_fee_reason"][1] == ""


IN_SAMPLE_WORDS = ("In-sample model figure", "In-sample history figure")


def schema(name: str) -> dict[str, Any]:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    return spec["components"]["schemas"][name]  # type: ignore[no-any-return]


def test_openapi_describes_every_in_sample_field_as_in_sample() -> None:
    for metrics in ("ScreenMetrics", "SnapshotMetrics"):
        props = schema(metrics)["properties"]
        for name in in_sample.METRICS:
            assert props[name]["description"].startswith(IN_SAMPLE_WORDS), (metrics, name)
        assert "breakeven_fee_reason" in props and "breakeven_swaps" in props
    for leg in ("ScreenBacktestLeg", "SnapshotBacktestLeg"):
        props = schema(leg)["properties"]
        for name in in_sample.LEG_FIELDS:
            assert props[name]["description"].startswith(IN_SAMPLE_WORDS), (leg, name)
        for name in ("breakeven_swaps", "breakeven_fee_reason", "open_position_pct"):
            assert name in props, (leg, name)


def test_pair_names_its_in_sample_fields_and_says_why_a_breakeven_fee_is_null(client, keys):
    survivors = client.get(f"{BASE}/screen/latest", keys.personal).json()["survivors"]
    a, b = survivors[0]["pair"]
    body = client.get(f"{BASE}/pair/{a}/{b}", keys.personal).json()
    assert body["in_sample"]["fields"] == in_sample.snapshot_paths()
    assert "not the future" in body["in_sample"]["note"]
    for path in body["in_sample"]["fields"]:
        node: Any = body
        for part in path.split("."):
            assert part in node, path
            node = node[part]
    seen_null = 0
    for s in [*survivors, {"backtest": body["backtest"]}]:
        for leg in ("A", "B"):
            one = s["backtest"][leg]
            trades, closed = one["n_trades"], one["breakeven_swaps"]
            assert closed in (trades, trades - 1) and closed % 2 == 0
            assert (one["open_position_pct"] is None) == (closed == trades)
            if closed < 3:
                seen_null += 1
                assert one["breakeven_fee"] is None
                assert one["breakeven_fee_reason"] == (
                    f"{closed} closed swap{'' if closed == 1 else 's'} in the backtest, "
                    "at least 3 needed"
                )
            else:
                assert one["breakeven_fee"] is not None and one["breakeven_fee_reason"] == ""
    assert seen_null, "the demo's survivors include a leg with fewer than 3 closed swaps"


def test_the_csv_names_its_in_sample_columns_and_moves_none(client, keys):
    r = client.get(f"{BASE}/screen/latest", keys.personal, headers={"Accept": "text/csv"})
    assert r.status_code == 200
    header = next(csv.reader(io.StringIO(r.text)))
    named = r.headers["in-sample-columns"].split(", ")
    assert named == [c for c in header if c in in_sample.METRICS or c.endswith(LEG_SUFFIXES)]
    assert {
        "ou_expected_return_per_year",
        "breakeven_fee",
        "backtest_A_growth_pct",
        "backtest_B_max_drawdown_pct",
        "backtest_A_open_position_pct",
    } <= set(named)
    # The new leg columns come last, after every column the table had before.
    assert header[-5:] == [
        "backtest_B_buy_hold_growth_pct",
        "backtest_A_breakeven_swaps",
        "backtest_A_open_position_pct",
        "backtest_B_breakeven_swaps",
        "backtest_B_open_position_pct",
    ]


LEG_SUFFIXES = tuple(f"_{leg}_{name}" for leg in "AB" for name in in_sample.LEG_FIELDS)
