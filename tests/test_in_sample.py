"""In-sample figures say so.

* ``breakeven_fee`` counts closed swaps only and is null, with a reason, below 3 of them; the
  open position is shown apart (``open_position_pct``). Hand-built log-ratios whose swaps are
  known in advance: a sine for the bands, then excursions past them on chosen days.
* The in-sample fields say "in-sample" in openapi.yaml, the CSV answer names them in its
  ``In-Sample-Columns`` header, and the website marks them.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pairscreen import PairPanel
from tests.series_factory import PairSeries, panel

from pairscreen_plugins.metrics.breakeven import BreakevenMetric  # isort: skip
from pairscreen_plugins.strategies.accumulation import AccumulationStrategy  # isort: skip

ROOT = Path(__file__).resolve().parents[1]
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
