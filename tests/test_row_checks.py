"""The checks a sync makes of what a market source answers, for days and for bars: the
rows come back sorted, a stamp repeated with the same values is stored once, one repeated
with other values refuses the asset and is named, and what closes after the last closed
stamp is left out. Plugin sources (ccxt, third parties) reach the database only through
these checks, so their words matter as much as their counts."""

from __future__ import annotations

from datetime import date

import numpy as np

from pairscreen.contracts import Candles
from pairscreen.contracts.bars import bar_size
from pairscreen.market.bar_checks import checked_bars
from pairscreen.market.row_checks import checked


def daily(days: list[str], close: list[float], volume: list[float]) -> Candles:
    return Candles("BTC", np.array(days, dtype="datetime64[D]"), np.array(close), np.array(volume))


def test_days_are_sorted_repeats_kept_once_and_conflicts_named():
    candles = daily(
        ["2023-01-03", "2023-01-01", "2023-01-02", "2023-01-02", "2023-01-01", "2023-01-04"],
        [3.0, 1.0, 2.0, 2.0, 1.5, 4.0],
        [30.0, 10.0, 20.0, 20.0, 10.0, 40.0],
    )
    out = checked(candles, date(2023, 1, 3))
    assert out.dates.astype(str).tolist() == ["2023-01-01", "2023-01-02", "2023-01-03"]
    assert (out.issues.future, out.issues.duplicate, out.issues.conflicting) == (1, 1, 1)
    assert out.issues.examples == ("2023-01-01 is given twice, with closes 1.0 and 1.5",)
    assert out.issues.refuses


def test_a_day_repeated_with_another_volume_is_named_by_its_volumes():
    candles = daily(["2023-01-01", "2023-01-01"], [1.0, 1.0], [10.0, 12.0])
    out = checked(candles, date(2023, 1, 1))
    assert out.issues.examples == ("2023-01-01 is given twice, with volumes 10.0 and 12.0",)
    assert out.issues.conflicting == 1 and out.issues.duplicate == 0


def test_bars_follow_the_same_rules_named_by_their_close_times():
    hour = bar_size("1h")
    times = np.array(
        ["2023-03-10T02:00", "2023-03-10T01:00", "2023-03-10T02:00", "2023-03-10T03:00"],
        dtype="datetime64[s]",
    )
    candles = Candles("BTC", times, np.array([2.0, 1.0, 2.5, 3.0]), np.full(4, np.nan))
    until = int(np.datetime64("2023-03-10T02:00", "s").astype(np.int64))
    out = checked_bars(candles, hour, until)
    assert out.dates.astype(str).tolist() == ["2023-03-10T01:00:00", "2023-03-10T02:00:00"]
    assert (out.issues.future, out.issues.conflicting) == (1, 1)
    assert out.issues.examples == (
        "the bar closing 2023-03-10T02:00:00Z is given twice, with closes 2.0 and 2.5",
    )


def test_a_close_that_is_no_positive_number_is_named_as_a_number():
    candles = daily(["2023-01-01", "2023-01-02"], [1.0, -2.0], [1.0, 1.0])
    out = checked(candles, date(2023, 1, 2))
    assert out.issues.examples == (
        "row 2 of the source's answer (2023-01-02): close -2.0 is not a finite positive number",
    )
    assert out.issues.unparseable == 1 and out.issues.refuses
