"""Windows are spans of time at every bar size (issue 36, "durations stay durations").

On synthetic 4-hour and hourly closes with a gap: the metric window, the band window (one bar
before the last close) and the backtest's simulated span cover exactly ``days * bars per day``
bars of time, minus the bars of the gap inside them; the engine's calendar matrix cuts the
same spans and counts history in days; an AR(1) half-life on hourly bars comes out in days
(its steps over 24). Daily panels keep their integer day offsets (the daily screen's digest
test in tests/test_hourly_bars.py holds the rest bit for bit).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from pairscreen.config import load_settings
from pairscreen.contracts import Asset, Candles, PairPanel
from pairscreen.contracts.bars import DAILY, BarSize, bar_size, days_between
from pairscreen.engine.calendar import CandleMatrix
from pairscreen.engine.evaluate import compute_metrics, run_legs
from pairscreen.engine.filtering import FilterChoice
from pairscreen.engine.windows import windows_of
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screening.pair_chunks import ScreenSpec, chunk_jobs

HOUR = bar_size("1h")
FOUR_HOURS = bar_size("4h")
LAST_CLOSE = np.datetime64("2023-04-01T00:00:00", "s")


@functools.cache
def plugins() -> Plugins:
    settings = load_settings()
    return Plugins(load_plugins(settings), settings)


def close_times(bar: BarSize, days: int, gap: tuple[int, int] = (0, 0)) -> np.ndarray:
    """``days`` days of ``bar`` close times ending at :data:`LAST_CLOSE`, without the bars
    ``gap[0]`` to ``gap[1]`` (counted back from the last, end excluded)."""
    back = np.arange(bar.bars(days) - 1, -1, -1)
    back = back[(back < gap[0]) | (back >= gap[1])]
    times: np.ndarray = LAST_CLOSE - back * np.timedelta64(bar.seconds, "s")
    return times


def ar1(n: int, beta: float, seed: int = 3) -> np.ndarray:
    """A mean-reverting log-ratio: ``Δr = β r(t-1) + ε``."""
    rng = np.random.default_rng(seed)
    r = np.zeros(n)
    for t in range(1, n):
        r[t] = r[t - 1] * (1 + beta) + rng.normal(0, 0.002)
    return r


def panel_of(bar: BarSize, times: np.ndarray, window_days: int, ratio: np.ndarray) -> PairPanel:
    n = times.shape[0]
    close_b = 100 * np.exp(np.cumsum(np.random.default_rng(1).normal(0, 0.001, n)))
    return PairPanel(
        a=("A",),
        b=("B",),
        dates=times.astype(bar.dtype)[None, :],
        close_a=(close_b * np.exp(ratio))[None, :],
        close_b=close_b[None, :],
        volume_a=np.ones((1, n)),
        volume_b=np.ones((1, n)),
        window_days=window_days,
        bar=bar,
    )


def in_span(times: np.ndarray, days: float, before_seconds: int = 0) -> int:
    """How many of ``times`` fall in the ``days`` days ending ``before_seconds`` before the
    last: counted from the clock, independently of the panel."""
    end = times[-1] - np.timedelta64(before_seconds, "s")
    start = end - np.timedelta64(int(days * 86_400), "s")
    return int(((times > start) & (times <= end)).sum())


@pytest.mark.parametrize(("bar", "bars_in_30_days"), [(HOUR, 720), (FOUR_HOURS, 180)])
def test_thirty_days_are_720_hourly_or_180_four_hour_bars(bar: BarSize, bars_in_30_days: int):
    times = close_times(bar, 70)
    panel = panel_of(bar, times, 30, ar1(times.size, -0.05))
    assert panel.metric_window.observations == bars_in_30_days
    assert panel.band_window.observations == bars_in_30_days
    assert panel.band_window.stop == panel.n_days - 1  # H ends one bar before the last close
    assert panel.metric_window.stop == panel.n_days
    assert panel.calendar_window(7).observations == 7 * bar.per_day
    assert panel.spacing(panel.metric_window) == pytest.approx(1 / bar.per_day)
    assert bool(panel.has_full_window[0])
    offsets = panel.day_offsets
    assert offsets.dtype == np.float64 and offsets[-1] == 0.0
    assert offsets[0] == pytest.approx((times.size - 1) / bar.per_day)


@pytest.mark.parametrize("bar", [HOUR, FOUR_HOURS])
def test_a_gap_leaves_its_bars_out_of_the_span_not_the_time(bar: BarSize):
    gap = (bar.per_day * 3, bar.per_day * 5)  # two days of missing bars, 3 to 5 days back
    times = close_times(bar, 70, gap)
    panel = panel_of(bar, times, 30, ar1(times.size, -0.05))
    expected = bar.bars(30) - (gap[1] - gap[0])
    assert panel.metric_window.observations == expected == in_span(times, 30)
    assert panel.band_window.observations == in_span(times, 30, bar.seconds)
    first = panel.dates[0, panel.metric_window.start]
    assert LAST_CLOSE - first.astype("datetime64[s]") < np.timedelta64(30, "D")
    # the spacing is the window's time over its steps: a little more than one bar
    spacing = panel.spacing(panel.metric_window)
    assert spacing == pytest.approx((bar.bars(30) - 1) / (expected - 1) / bar.per_day)
    assert spacing > 1 / bar.per_day


@pytest.mark.parametrize(("bar", "bt"), [(HOUR, 7), (HOUR, 14), (FOUR_HOURS, 14)])
def test_the_backtest_simulates_bt_days_of_bars_with_a_gap(bar: BarSize, bt: int):
    gap = (bar.per_day, bar.per_day * 2)  # the second-to-last day is missing
    times = close_times(bar, 30 + bt + 5, gap)
    panel = panel_of(bar, times, 30, ar1(times.size, -0.05))
    legs = run_legs(plugins().strategies.get("accumulation"), panel, bt)
    simulated = int(legs["A"].simulated_closes()[0])
    assert simulated == in_span(times, bt) == bar.bars(bt) - bar.per_day
    assert int(legs["A"].history_days[0]) == bt  # days, not bars
    windows = windows_of(panel, 0, legs["A"], 0)
    assert windows["backtest"]["days"] == bt
    assert windows["backtest"]["observations"] == simulated
    first = panel.dates[0, panel.metric_window.start]
    assert windows["metric"] == {
        "days": 30,
        "observations": in_span(times, 30),
        "first_day": str(first.astype("datetime64[D]")),
        "last_day": "2023-04-01",
        "first_close": f"{first.astype('datetime64[s]')}+00:00",
        "last_close": "2023-04-01T00:00:00+00:00",
    }


def test_an_hourly_half_life_is_in_days_the_steps_over_24():
    times = close_times(HOUR, 40)
    ratio = ar1(times.size, -0.02)
    panel = panel_of(HOUR, times, 30, ratio)
    w = ratio[-720:]
    beta = np.polyfit(w[:-1], np.diff(w), 1)[0]
    steps = -math.log(2) / math.log1p(beta)
    values = compute_metrics(plugins(), panel).values
    assert float(values["half_life_days"][0]) == pytest.approx(steps / 24, rel=1e-6)
    # the OU fit's step is a bar in days too
    assert float(values["ou_half_life_days"][0]) == pytest.approx(steps / 24, rel=0.2)


def test_days_between_is_whole_days_for_daily_dates_and_fractions_for_bars():
    days = np.array(["2023-03-01", "2023-03-11"], dtype="datetime64[D]")
    assert days_between(days[1:], days[:1]).tolist() == [10.0]
    hours = np.array(["2023-03-01T00", "2023-03-01T06"], dtype="datetime64[h]")
    assert days_between(hours[1:], hours[:1]).tolist() == [0.25]


def test_a_daily_panel_keeps_integer_day_offsets():
    days = np.datetime64("2023-01-01") + np.arange(100)
    panel = PairPanel(
        a=("A",),
        b=("B",),
        dates=days[None, :],
        close_a=np.ones((1, 100)),
        close_b=np.ones((1, 100)),
        volume_a=np.ones((1, 100)),
        volume_b=np.ones((1, 100)),
        window_days=30,
    )
    assert panel.bar is DAILY
    assert panel.day_offsets.dtype == np.int64
    assert panel.day_offsets is panel.bar_offsets
    assert panel.metric_window.observations == 30


def candles_of(bar: BarSize, ticker: str, times: np.ndarray, close: np.ndarray) -> Candles:
    return Candles(ticker, times.astype("datetime64[s]"), close, np.full(close.size, np.nan))


def test_the_calendar_matrix_cuts_spans_of_time_and_counts_history_in_days():
    full = close_times(HOUR, 40)
    gapped = close_times(HOUR, 40, (24 * 2, 24 * 2 + 5))  # five hours missing, two days back
    rng = np.random.default_rng(5)
    candles = {
        "A": candles_of(HOUR, "A", full, 100 + rng.random(full.size)),
        "B": candles_of(HOUR, "B", full, 100 + rng.random(full.size)),
        "C": candles_of(HOUR, "C", gapped, 100 + rng.random(gapped.size)),
    }
    matrix = CandleMatrix.of(candles, ("A", "B", "C"), HOUR)
    assert matrix.calendar.dtype == np.dtype("datetime64[h]")
    common = matrix.common(np.array([0, 0]), np.array([1, 2]))
    spans = matrix.spans(common, 30)
    assert spans.history_days.tolist() == [40, 40]
    assert spans.closes.tolist() == [720, 715]
    assert spans.group[0] != spans.group[1]  # two calendars, two groups
    spec = ScreenSpec(
        matrix=matrix,
        assets=(Asset("A", "x"), Asset("B", "x"), Asset("C", "x")),
        depegs=((), (), ()),
        screen_filter=FilterChoice("default", {}),
        strategy="accumulation",
        scorer="score",
        bt_days=10,
        window_days=20,
        min_history_days=41,  # one day more than there is: too short, in days
    )
    outcome, jobs = chunk_jobs(spec, (np.array([0, 0]), np.array([1, 2])))
    assert jobs == [] and sum(outcome.rejected.values()) == 2
    spec = ScreenSpec(**{**spec.__dict__, "min_history_days": 40})
    outcome, jobs = chunk_jobs(spec, (np.array([0, 0]), np.array([1, 2])))
    assert len(jobs) == 2
    widths = sorted(job.job.panel.days for job in jobs)
    assert widths == [30 * 24 - 5, 30 * 24]
    panel = jobs[0].job.panel.rows(slice(None))
    assert panel.bar is HOUR and panel.metric_window.observations in (20 * 24, 20 * 24 - 5)
