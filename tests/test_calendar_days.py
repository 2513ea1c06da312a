"""Every window in days is a calendar span ending at the pair's last common close.

On real closes (``tests/fixtures/calendar_days``: Binance BTC and ETH every day, AAPL and GLD
on exchange trading days): a crypto x equity pair's metric window, band window and backtest
windows hold the common closes inside their calendar spans and say how many; its half-life is
in calendar days; a pair of two daily assets keeps the windows of so many closes (and the
reference numbers) it always had. The same over HTTP, in ``/pair``, ``/series`` and a screen.
"""

from __future__ import annotations

import csv
import functools
import math
import shutil
from datetime import date
from pathlib import Path

import numpy as np
import pairscan_rmr as rmr
import pytest
from arch.unitroot import VarianceRatio
from statsmodels.tsa.stattools import adfuller

from pairscreen.config import load_settings
from pairscreen.contracts import Asset, Candles, PairPanel
from pairscreen.db.connection import database
from pairscreen.engine.batch_panel import select_rows
from pairscreen.engine.calendar import CandleMatrix
from pairscreen.engine.evaluate import compute_metrics, run_legs
from pairscreen.engine.filtering import FilterChoice
from pairscreen.engine.panels import AlignedPair, align, group_by_history, panel_of, span_panel
from pairscreen.engine.windows import windows_of
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screening.pair_chunks import ScreenSpec, chunk_jobs
from pairscreen.screening.screen import run_screen
from tests.conftest import make_client
from tests.support.synced import synced_runtime

from pairscreen_plugins.strategies.accumulation import (  # isort: skip
    AccumulationStrategy,
    columns,
    history_of,
    plan,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "calendar_days"
TICKERS = ("BTC", "ETH", "AAPL", "GLD")
WINDOW = 540
MIXED = (("BTC", "AAPL"), ("BTC", "GLD"))
ONE_DAY = np.timedelta64(1, "D")


def load(ticker: str) -> Candles:
    with (FIXTURES / f"{ticker}.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return Candles(
        ticker,
        np.array([r["date"] for r in rows], dtype="datetime64[D]"),
        np.array([float(r["close"]) for r in rows]),
        np.array([float(r["volume"]) if r["volume"] else np.nan for r in rows]),
    )


CANDLES = {t: load(t) for t in TICKERS}


def pair_of(a: str, b: str) -> AlignedPair:
    return align(CANDLES[a], CANDLES[b])


@functools.cache
def plugins() -> Plugins:
    settings = load_settings()
    return Plugins(load_plugins(settings), settings)


def in_span(dates: np.ndarray, last: np.datetime64, days: int, before: int = 0) -> np.ndarray:
    """The dates of the ``days`` calendar days ending ``before`` days before ``last``."""
    end = last - before * ONE_DAY
    return (dates > end - days * ONE_DAY) & (dates <= end)


def test_fixture_calendars_are_what_the_tests_assume() -> None:
    btc, aapl = CANDLES["BTC"].dates, CANDLES["AAPL"].dates
    assert (np.diff(btc) == ONE_DAY).all()  # crypto: a close every day
    weekdays = (aapl.astype("datetime64[D]").view("int64") - 4) % 7  # 0 = Monday
    assert (weekdays < 5).all() and (np.diff(aapl) > ONE_DAY).any()  # trading days only


@pytest.mark.parametrize(("a", "b"), MIXED)
@pytest.mark.parametrize("bt", [90, 180, 360])
def test_mixed_pair_windows_are_calendar_spans(a: str, b: str, bt: int) -> None:
    pair = pair_of(a, b)
    last = pair.dates[-1]
    panel = span_panel(pair, WINDOW + bt, WINDOW)
    legs = run_legs(AccumulationStrategy(), panel, bt)
    windows = windows_of(panel, 0, legs["A"], 0)
    expected = {
        "metric": (WINDOW, pair.dates[in_span(pair.dates, last, WINDOW)]),
        "band": (WINDOW, pair.dates[in_span(pair.dates, last, WINDOW, before=1)]),
        "backtest": (bt, pair.dates[in_span(pair.dates, last, bt)]),
    }
    for name, (days, used) in expected.items():
        window = windows[name]
        assert window["days"] == days, name
        assert window["observations"] == used.size < days, name  # fewer closes than days
        assert window["first_day"] == str(used[0]) and window["last_day"] == str(used[-1])
        # The first day used lies inside the span: never before the last close minus the span.
        assert np.datetime64(window["first_day"]) >= last - days * ONE_DAY, name
    assert windows["metric"]["last_day"] == str(last)
    assert np.datetime64(windows["band"]["last_day"]) < last
    for leg in ("A", "B"):
        assert int(legs[leg].history_days[0]) == bt
        assert int(legs[leg].observations[0]) == windows["backtest"]["observations"]
    # Counting closes instead would reach far back (the untruth this fixes).
    assert (last - pair.dates[-WINDOW]).astype(int) > 700
    assert (last - pair.dates[-bt]).astype(int) > bt * 1.3


def test_btc_aapl_windows_on_the_documented_days() -> None:
    """The example of docs/methodology.md#calendar-days."""
    pair = pair_of("BTC", "AAPL")
    panel = span_panel(pair, WINDOW + 90, WINDOW)
    windows = windows_of(panel, 0, run_legs(AccumulationStrategy(), panel, 90)["A"], 0)
    assert windows == {
        "metric": {
            "days": 540,
            "observations": 373,
            "first_day": "2022-07-08",
            "last_day": "2023-12-29",
        },
        "band": {
            "days": 540,
            "observations": 373,
            "first_day": "2022-07-07",
            "last_day": "2023-12-28",
        },
        "backtest": {
            "days": 90,
            "observations": 63,
            "first_day": "2023-10-02",
            "last_day": "2023-12-29",
        },
    }


def _values(panel: PairPanel) -> dict[str, object]:
    return compute_metrics(plugins(), panel).row(0)


@pytest.mark.parametrize(("a", "b"), MIXED)
def test_mixed_pair_metrics_read_the_common_closes_inside_the_span(a: str, b: str) -> None:
    pair = pair_of(a, b)
    last = pair.dates[-1]
    r = np.log(pair.close_a / pair.close_b)
    w = r[in_span(pair.dates, last, WINDOW)]
    h = r[in_span(pair.dates, last, WINDOW, before=1)]
    got = _values(span_panel(pair, WINDOW + 360, WINDOW))
    assert got["p5"] == np.percentile(h, 5) and got["p95"] == np.percentile(h, 95)
    assert got["p15"] == np.percentile(h, 15)  # a full band window: history covers the span
    assert got["r_current"] == r[-1]
    assert got["range_width"] == w.max() - w.min()
    vr = VarianceRatio(w, lags=20, trend="c", debiased=True, overlap=True)
    assert got["variance_ratio"] == vr.vr
    assert abs(float(got["adf_pvalue"]) - adfuller(w, autolag="AIC", result_object=False)[1]) < 1e-9  # type: ignore[arg-type]
    verdict = rmr.is_mean_reverting(
        pair.close_a[in_span(pair.dates, last, WINDOW)],
        pair.close_b[in_span(pair.dates, last, WINDOW)],
    )
    assert (got["touches_low"], got["touches_high"]) == (verdict.low_touches, verdict.high_touches)
    # Returns between consecutive common closes, the close before W's first included.
    closes = np.flatnonzero(in_span(pair.dates, last, WINDOW))
    with_before = np.r_[closes[0] - 1, closes]
    ra, rb = np.diff(np.log(pair.close_a[with_before])), np.diff(np.log(pair.close_b[with_before]))
    assert abs(float(got["return_correlation"]) - np.corrcoef(ra, rb)[0, 1]) < 1e-12  # type: ignore[arg-type]
    # trend_slope is per calendar day: the fit is on each close's day.
    days = (pair.dates[closes] - last).astype(float)
    assert abs(float(got["trend_slope"]) - np.polyfit(days, w, 1)[0]) < 1e-12  # type: ignore[arg-type]


@pytest.mark.parametrize(("a", "b"), MIXED)
def test_half_life_is_in_calendar_days(a: str, b: str) -> None:
    pair = pair_of(a, b)
    last = pair.dates[-1]
    inside = in_span(pair.dates, last, WINDOW)
    w = np.log(pair.close_a / pair.close_b)[inside]
    beta = np.polyfit(w[:-1], np.diff(w), 1)[0]
    steps = -math.log(2) / math.log1p(beta)
    used = pair.dates[inside]
    spacing = (used[-1] - used[0]).astype(int) / (used.size - 1)
    assert 1.4 < spacing < 1.5  # trading days: about 1.45 calendar days per step
    got = float(_values(span_panel(pair, WINDOW + 90, WINDOW))["half_life_days"])  # type: ignore[arg-type]
    assert got == pytest.approx(steps * spacing, rel=1e-9)
    assert got > steps * 1.4  # not the count of closes


def calendar_walk_forward(
    pair: AlignedPair, bt: int, lookback: int, start: str
) -> tuple[float, int, float]:
    """pairscan-rmr's walk-forward loop written over calendar spans: the simulated days are
    the common closes of the last ``bt`` calendar days, each day's band the common closes of
    the ``lookback`` calendar days before it. (growth %, trades, max drawdown %)."""
    own, other = (pair.close_a, pair.close_b) if start == "A" else (pair.close_b, pair.close_a)
    r = np.log(own / other)
    dates, last = pair.dates, pair.dates[-1]
    holding_own, qty, trades = True, 100.0, 0
    peak, worst, value = -math.inf, 0.0, 100.0
    for t in np.flatnonzero(in_span(dates, last, bt)):
        band = r[(dates >= dates[t] - lookback * ONE_DAY) & (dates < dates[t])]
        low, high = float(np.percentile(band, 5)), float(np.percentile(band, 95))
        width = high - low
        position = 0.5 if width == 0 else (float(r[t - 1]) - low) / width
        if position <= 0.2 and not holding_own:
            qty, holding_own, trades = qty * (other[t] / own[t]) * (1.0 - 0.001), True, trades + 1
        elif position >= 0.8 and holding_own:
            qty, holding_own, trades = qty * (own[t] / other[t]) * (1.0 - 0.001), False, trades + 1
        value = qty if holding_own else qty * (other[t] / own[t])
        peak = max(peak, value)
        worst = max(worst, (peak - value) / peak)
    return 100.0 * (value / 100.0 - 1.0), trades, 100.0 * worst


@pytest.mark.parametrize(("a", "b"), MIXED)
@pytest.mark.parametrize("bt", [90, 180, 360])
def test_mixed_pair_backtest_walks_forward_over_calendar_spans(a: str, b: str, bt: int) -> None:
    pair = pair_of(a, b)
    legs = run_legs(AccumulationStrategy(), span_panel(pair, WINDOW + bt, WINDOW), bt)
    for leg in ("A", "B"):
        growth, trades, drawdown = calendar_walk_forward(pair, bt, WINDOW, leg)
        batch = legs[leg]
        assert int(batch.n_trades[0]) == trades
        assert float(batch.growth_pct[0]) == pytest.approx(growth, abs=1e-9)
        assert float(batch.max_drawdown_pct[0]) == pytest.approx(drawdown, abs=1e-9)


@pytest.mark.parametrize("seed", [1, 2])
def test_irregular_gaps_take_the_day_by_day_bands_and_still_walk_the_calendar(seed: int) -> None:
    """A history with random gaps gives bands of many lengths (the one-day-at-a-time path);
    a panel of several such pairs on one calendar matches the reference loop per pair."""
    rng = np.random.default_rng(seed)
    eth = pair_of("ETH", "BTC")
    keep = np.sort(rng.choice(eth.n_days, size=int(eth.n_days * 0.6), replace=False))
    keep[-1] = eth.n_days - 1
    gappy = [
        AlignedPair(
            "ETH",
            "BTC",
            eth.dates[keep],
            eth.close_a[keep],
            eth.close_b[keep],
            eth.volume_a[keep],
            eth.volume_b[keep],
        ),
        AlignedPair(
            "ETH",
            "BTC",
            eth.dates[keep],
            eth.close_a[keep] * 1.01,
            eth.close_b[keep],
            eth.volume_a[keep],
            eth.volume_b[keep],
        ),
    ]
    panel = group_by_history(gappy, WINDOW + 180, WINDOW)
    assert len(panel) == 1
    idx, both = panel[0]
    cols = columns(both, plan(history_of(both), WINDOW, 180))
    lengths = cols.first + np.arange(cols.lo.size) - cols.lo
    assert np.unique(lengths).size > 8  # more than the per-length passes take
    legs = run_legs(AccumulationStrategy(), both, 180)
    for row, i in enumerate(idx):
        for leg in ("A", "B"):
            growth, trades, drawdown = calendar_walk_forward(gappy[i], 180, WINDOW, leg)
            assert int(legs[leg].n_trades[row]) == trades
            assert float(legs[leg].growth_pct[row]) == pytest.approx(growth, abs=1e-9)
            assert float(legs[leg].max_drawdown_pct[row]) == pytest.approx(drawdown, abs=1e-9)


@pytest.mark.parametrize("bt", [90, 360])
def test_daily_pair_is_the_reference_on_as_many_closes_as_days(bt: int) -> None:
    """ETH/BTC: both legs close every day, so every span holds as many closes as days and
    the numbers are pairscan-rmr's on the last 540 (+ bt) closes, bit for bit."""
    pair = pair_of("ETH", "BTC")
    panel = span_panel(pair, WINDOW + bt, WINDOW)
    assert panel.n_days == WINDOW + bt
    legs = run_legs(AccumulationStrategy(), panel, bt)
    windows = windows_of(panel, 0, legs["A"], 0)
    assert [windows[k]["observations"] for k in ("metric", "band", "backtest")] == [540, 540, bt]
    got = _values(panel)
    signal = rmr.current_signal(np.log(pair.close_a / pair.close_b)[-WINDOW - 1 :])
    assert (got["p5"], got["p95"], got["position"]) == (
        signal.p_low,
        signal.p_high,
        signal.position,
    )
    a, b = pair.close_a[-(WINDOW + bt) :], pair.close_b[-(WINDOW + bt) :]
    for leg, (x, y) in (("A", (a, b)), ("B", (b, a))):
        ref = rmr.walk_forward_backtest(x, y, lookback_days=WINDOW)
        value = ref.value_in_a_over_time
        assert float(legs[leg].growth_pct[0]) == 100.0 * (value[-1] / 100.0 - 1.0)
        assert int(legs[leg].n_trades[0]) == len(ref.trades)


def test_a_panel_of_two_calendars_is_computed_one_calendar_at_a_time() -> None:
    """A panel whose rows sit on different calendars (built by hand) gives each row the
    numbers it has alone: the engine splits it, so a metric never sees mixed windows."""
    daily, mixed = pair_of("ETH", "BTC"), pair_of("BTC", "AAPL")
    both = panel_of([daily, mixed], 600, WINDOW)
    with pytest.raises(ValueError, match="different calendars"):
        _ = both.day_offsets
    together = compute_metrics(plugins(), both)
    legs = run_legs(AccumulationStrategy(), both, 90, with_trades=True)
    for row, pair in enumerate((daily, mixed)):
        alone_panel = panel_of([pair], 600, WINDOW)
        alone = compute_metrics(plugins(), alone_panel)
        assert together.row(row) == alone.row(0)
        alone_legs = run_legs(AccumulationStrategy(), alone_panel, 90, with_trades=True)
        for leg in ("A", "B"):
            assert legs[leg].growth_pct[row] == alone_legs[leg].growth_pct[0]
            assert legs[leg].trades is not None and alone_legs[leg].trades is not None
            assert legs[leg].trades[row] == alone_legs[leg].trades[0]


def _spec(bt: int = 360) -> ScreenSpec:
    assets = tuple(Asset(t, "mixed") for t in TICKERS)
    return ScreenSpec(
        matrix=CandleMatrix.of(CANDLES, TICKERS),
        assets=assets,
        depegs=((),) * len(TICKERS),
        screen_filter=FilterChoice("default", {}),
        strategy="accumulation",
        scorer="score",
        bt_days=bt,
        window_days=WINDOW,
        min_history_days=200,
    )


def test_screen_groups_pairs_by_calendar_and_agrees_with_the_snapshot() -> None:
    spec = _spec()
    index = {t: i for i, t in enumerate(TICKERS)}
    pairs = [("ETH", "BTC"), ("BTC", "AAPL"), ("BTC", "GLD"), ("AAPL", "GLD")]
    ia = np.array([index[a] for a, _ in pairs])
    ib = np.array([index[b] for _, b in pairs])
    outcome, groups = chunk_jobs(spec, (ia, ib))
    assert outcome.rejected == {}
    found: dict[tuple[str, str], PairPanel] = {}
    for group in groups:
        panel = group.job.panel.rows(slice(None))  # cut from the matrix on demand
        _ = panel.day_offsets  # one calendar per panel
        for row, (a, b) in enumerate(zip(panel.a, panel.b, strict=True)):
            found[(a, b)] = select_rows(panel, [row])
        if panel.a == ("ETH",):  # two daily legs: the broadcast fast path, as before
            assert panel.dates.strides[0] == 0 and panel.n_days == WINDOW + 360
    assert set(found) == set(pairs)
    p = plugins()
    for a, b in pairs:
        snapshot = span_panel(pair_of(a, b), WINDOW + 360, WINDOW)
        screened = found[(a, b)]
        assert np.array_equal(screened.dates[0], snapshot.dates[0])
        assert compute_metrics(p, screened).row(0) == compute_metrics(p, snapshot).row(0)
    # The three pairs on the exchange's calendar share one panel.
    mixed = [g.job.panel.rows(slice(None)) for g in groups if g.job.panel.n_pairs == 3]
    assert len(mixed) == 1 and set(mixed[0].b) == {"AAPL", "GLD"}


def test_minimum_history_counts_calendar_days() -> None:
    """200 calendar days of common history pass the minimum for a mixed pair with only
    ~140 common closes."""
    spec = _spec()
    cut = {t: _until(c, np.datetime64("2021-07-22")) for t, c in CANDLES.items()}
    spec = ScreenSpec(**{**spec.__dict__, "matrix": CandleMatrix.of(cut, TICKERS)})
    aligned = align(cut["BTC"], cut["AAPL"])
    assert aligned.calendar_days == 200 and aligned.n_days < 140
    outcome, groups = chunk_jobs(spec, (np.array([0]), np.array([2])))
    assert outcome.rejected == {} and len(groups) == 1
    assert int(groups[0].job.history_days[0]) == 200
    shorter = {t: _until(c, np.datetime64("2021-07-21")) for t, c in CANDLES.items()}
    spec = ScreenSpec(**{**spec.__dict__, "matrix": CandleMatrix.of(shorter, TICKERS)})
    outcome, groups = chunk_jobs(spec, (np.array([0]), np.array([2])))
    assert outcome.rejected == {"insufficient_history": 1} and groups == []


def _until(c: Candles, day: np.datetime64) -> Candles:
    keep = c.dates <= day
    return Candles(c.ticker, c.dates[keep], c.close[keep], c.volume[keep])


# --- over HTTP, on a real SQLite database synced from the fixture files -----------------

LOOSE_SCREEN = """
[screen]
hurst_below = 1.5
adf_below = 1.0
min_range_width = 0.0
min_touches = 0
"""


@pytest.fixture()
def real_runtime(tmp_path):  # type: ignore[no-untyped-def]
    prices = tmp_path / "prices"
    prices.mkdir()
    for t in TICKERS:
        shutil.copy(FIXTURES / f"{t}.csv", prices / f"{t}.csv")
    assets = "".join(f'[[asset]]\nticker = "{t}"\nsector = "mixed"\n\n' for t in TICKERS)
    (tmp_path / "universe.toml").write_text(
        '[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\nvolume_unit = "base"\n\n'
        "[staleness]\ncrypto = 100000\n" + LOOSE_SCREEN + "\n" + assets,
        encoding="utf-8",
    )
    with synced_runtime(tmp_path, "days") as (rt, key):
        yield rt, key


def test_pair_and_series_report_calendar_windows_over_http(real_runtime) -> None:  # type: ignore[no-untyped-def]
    rt, key = real_runtime
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/pair/BTC/AAPL?bt=90", key)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
        body = r.json()
        windows = body["windows"]
        assert windows["metric"] == {
            "days": 540,
            "observations": 373,
            "first_day": "2022-07-08",
            "last_day": "2023-12-29",
        }
        assert windows["band"]["observations"] == 373
        assert windows["backtest"]["days"] == body["backtest"]["history_days"] == 90
        assert windows["backtest"]["observations"] == body["backtest"]["observations"] == 63
        assert windows["backtest"]["first_day"] == "2023-10-02"
        pair = pair_of("BTC", "AAPL")
        expected = _values(span_panel(pair, WINDOW + 90, WINDOW))
        assert body["metrics"]["half_life_days"] == expected["half_life_days"]

        daily = client.get("/api/v1/pair/ETH/BTC?bt=90", key).json()
        assert [daily["windows"][k]["observations"] for k in ("metric", "band", "backtest")] == [
            540,
            540,
            90,
        ]

        series = client.get("/api/v1/pair/BTC/AAPL/series?bt=90", key)
        assert series.status_code == 200, series.text
        drawn = np.array(series.json()["dates"], dtype="datetime64[D]")
        last = np.datetime64("2023-12-29")
        assert drawn[-1] == last and drawn[0] >= last - (WINDOW + 90) * ONE_DAY
        assert np.array_equal(drawn, pair.dates[in_span(pair.dates, last, WINDOW + 90)])
        assert series.json()["backtest_start"] == "2023-10-02"
        trades = [t["date"] for t in series.json()["trades"]["A"]]
        assert all(d >= "2023-10-02" for d in trades)
        chart = client.get("/api/v1/pair/BTC/AAPL/chart.png?bt=90", key)
        assert chart.status_code == 200 and chart.content.startswith(b"\x89PNG")


def test_screen_survivors_report_calendar_windows(real_runtime) -> None:  # type: ignore[no-untyped-def]
    rt, key = real_runtime
    client = make_client(rt)
    with database.connection_context():
        run_screen(rt)
    with client.client:
        screen = client.get("/api/v1/screen/latest", key)
        assert screen.status_code == 200, screen.text
        survivors = {tuple(s["pair"]): s for s in screen.json()["survivors"]}
        assert ("BTC", "AAPL") in survivors or ("AAPL", "BTC") in survivors
        for (a, b), survivor in survivors.items():
            snapshot = client.get(f"/api/v1/pair/{a}/{b}?bt=360", key).json()
            assert survivor["windows"] == snapshot["windows"], (a, b)
            assert survivor["backtest"]["observations"] == snapshot["backtest"]["observations"]
            assert survivor["metrics"]["half_life_days"] == snapshot["metrics"]["half_life_days"]
            mixed = "AAPL" in (a, b) or "GLD" in (a, b)
            metric = survivor["windows"]["metric"]
            assert (metric["observations"] < 540) == mixed, (a, b)
            assert survivor["windows"]["backtest"]["days"] == 360


def test_evaluation_replays_each_day_with_calendar_windows(real_runtime) -> None:  # type: ignore[no-untyped-def]
    """``pairscreen evaluate``'s as-of day: the mixed pair's zone and verdict come from the
    calendar windows of the candles known that day, exactly as a snapshot of them."""
    from pairscreen.evaluation.rule_sets import rule_sets
    from pairscreen.evaluation.verdicts import Market, verdicts_at

    rt, _ = real_runtime
    with database.connection_context():
        candles = rt.candles.get()
        market = Market.of(rt.universe, candles, window_days=WINDOW, min_history_days=200)
        sets = rule_sets(rt.plugins, rt.universe, [])
        day = date(2023, 6, 30)
        verdicts = verdicts_at(rt.plugins, market, sets, day, lambda _: {})
    cut = {t: _until(c, np.datetime64(day)) for t, c in candles.items()}
    pairs = [(a.ticker, b.ticker) for a, b in market.pairs]
    for (a, b), zone in zip(pairs, verdicts.zone, strict=True):
        panel = span_panel(align(cut[a], cut[b]), WINDOW + 360, WINDOW)
        expected = compute_metrics(rt.plugins, panel).row(0)
        assert zone == expected["zone"], (a, b)
        if "AAPL" in (a, b):
            assert panel.metric_window.observations < WINDOW  # the trading days of the span
    screen = verdicts.survives["screen"]
    assert screen.any()  # the loose universe rules let pairs survive that day
    # The panels the replay builds (group_by_history) cut each pair to its calendar span.
    aligned = [align(cut[a], cut[b]) for a, b in pairs]
    for idx, panel in group_by_history(aligned, WINDOW + 360, WINDOW):
        for row, i in enumerate(idx):
            dates = aligned[i].dates
            want = dates[in_span(dates, dates[-1], WINDOW + 360)]
            got = panel.dates[row]
            # The span's closes, and the close before it when none falls on its first day.
            assert np.array_equal(got[got.size - want.size :], want)
            assert got.size - want.size in (0, 1)
            inside = in_span(dates, dates[-1], WINDOW)
            assert panel.metric_window.observations == int(inside.sum())
