"""The screen on an hourly universe (issue 36): synced from real hourly closes, screened
with windows that are spans of time, published and served with its bar.

The universe is tests/fixtures/hourly (Binance BTC, ETH, SOL 1h closes, 2023-03-10 to
2023-04-01, one outage bar missing) plus ``ETHX``, built here from ETH's closes times a
seeded mean-reverting factor (an AR(1) on the log, -5 % a bar, 0.3 % noise) so that one pair
reverts and survives a loose filter. The clock is pinned a few hours after the last bar.
"""

from __future__ import annotations

import csv
import itertools
import json
import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import yaml

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.app import openapi_path
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.bar_sync import sync_bars
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from pairscreen.universe import UniverseError, load_universe_file
from tests.conftest import make_client
from tests.support.cli import newcomer_env, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "hourly"
TICKERS = ("BTC", "ETH", "SOL", "ETHX")
NOW = "2023-04-01T06:30:00Z"
SCREEN = """
[screen]
window_days = 7
backtest_days = [3, 7]
min_history_days = 14
hurst_below = 1.5
adf_below = 1.0
min_range_width = 0.0
min_touches = 0

[staleness]
crypto = 2
"""


def write_ethx(prices: Path) -> None:
    """``ETHX.csv``: ETH's hourly closes times ``exp(x)``, ``x`` a seeded AR(1)."""
    with (FIXTURES / "ETH.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rng = np.random.default_rng(36)
    x = np.zeros(len(rows))
    for t in range(1, len(rows)):
        x[t] = 0.95 * x[t - 1] + rng.normal(0, 0.003)
    with (prices / "ETHX.csv").open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["timestamp", "close"])
        for row, factor in zip(rows, np.exp(x), strict=True):
            out.writerow([row["timestamp"], repr(float(row["close"]) * float(factor))])


def pin(monkeypatch: pytest.MonkeyPatch, moment: str = NOW) -> None:
    when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    monkeypatch.setenv(clock.SHIFT_VARIABLE, clock.shift_to(when))


def write_quarters(path: Path) -> None:
    """Rewrite an hourly ``path`` as 15-minute closes: each hour's close kept at its time and
    the three quarters before it interpolated geometrically from the previous hour's close
    (after a missing hour, only the hour's own close). Not market prices: bars whose count
    and spacing test the 15-minute arithmetic on the real closes' hours and gaps."""
    with path.open(encoding="utf-8") as handle:
        hours = [
            (datetime.fromisoformat(row["timestamp"]), float(row["close"]))
            for row in csv.DictReader(handle)
        ]
    quarters: list[tuple[datetime, float]] = [hours[0]]
    for (before, previous), (moment, close) in itertools.pairwise(hours):
        if moment - before == timedelta(hours=1):
            quarters += [
                (moment - timedelta(minutes=15 * (4 - k)), previous * (close / previous) ** (k / 4))
                for k in (1, 2, 3)
            ]
        quarters.append((moment, close))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["timestamp", "close"])
        for moment, price in quarters:
            writer.writerow([moment.strftime("%Y-%m-%dT%H:%M:%SZ"), repr(price)])


def write_universe(folder: Path, bar: str = "1h") -> Path:
    """The csv universe of the four assets in ``folder``; at ``bar = "4h"`` each file keeps
    the hourly rows closing at a multiple of 4 hours (a 4-hour bar closes where its fourth
    hourly bar does, at the same price); at ``"15m"`` the hours are cut in quarters
    (:func:`write_quarters`)."""
    prices = folder / "prices"
    prices.mkdir()
    for t in TICKERS[:3]:
        shutil.copy(FIXTURES / f"{t}.csv", prices / f"{t}.csv")
    write_ethx(prices)
    if bar == "4h":
        for t in TICKERS:
            lines = (prices / f"{t}.csv").read_text(encoding="utf-8").splitlines()
            kept = [lines[0]] + [row for row in lines[1:] if int(row[11:13]) % 4 == 0]
            (prices / f"{t}.csv").write_text("\n".join(kept) + "\n", encoding="utf-8")
    if bar == "15m":
        for t in TICKERS:
            write_quarters(prices / f"{t}.csv")
    assets = "".join(f'[[asset]]\nticker = "{t}"\nsector = "majors"\n\n' for t in TICKERS)
    path = folder / "universe.toml"
    path.write_text(
        f'[market]\nbar = "{bar}"\n\n[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\n' + SCREEN + "\n" + assets,
        encoding="utf-8",
    )
    return path


@pytest.fixture()
def hourly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Runtime, str]]:
    pin(monkeypatch)
    write_universe(tmp_path)
    settings = load_settings(
        data_dir=tmp_path,
        database_url=f"sqlite:///{tmp_path / 'hourly.sqlite3'}",
        universe=tmp_path / "universe.toml",
    )
    rt = build_runtime(settings)
    with database.connection_context():
        report = sync_bars(rt.universe, rt.plugins)
        assert not report.needs_review
        accounts.create_user("hourly@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("hourly@example.com")
    try:
        yield rt, key
    finally:
        database.close()


def test_an_hourly_universe_screens_with_windows_in_time_and_serves_its_bar(hourly) -> None:  # type: ignore[no-untyped-def]
    rt, key = hourly
    with database.connection_context():
        summary = run_screen(rt)
    assert summary.n_pairs_screened == 6
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/screen/latest", key)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
    body = r.json()
    assert body["bar"] == "1h" and body["bar_seconds"] == 3600
    assert body["window_days"] == 7 and body["backtest_windows"] == [3, 7]
    assert body["backtest_days"] == 7
    assert body["data_time"] == {
        "newest": "2023-04-01T00:00:00+00:00",
        "oldest": "2023-04-01T00:00:00+00:00",
    }
    assert body["stale"] is False
    assert body["n_pairs_screened"] == 6
    assert sum(body["rejected"].values()) + body["n_survivors"] == 6
    pairs = {tuple(sorted(s["pair"])) for s in body["survivors"]}
    assert ("ETH", "ETHX") in pairs, body["rejected"]
    survivor = next(s for s in body["survivors"] if sorted(s["pair"]) == ["ETH", "ETHX"])
    windows = survivor["windows"]
    # 7 days of hourly bars ending at the last close: no bar missing in them
    assert windows["metric"] == {
        "days": 7,
        "observations": 168,
        "first_day": "2023-03-25",
        "last_day": "2023-04-01",
        "first_close": "2023-03-25T01:00:00+00:00",
        "last_close": "2023-04-01T00:00:00+00:00",
    }
    assert windows["band"]["observations"] == 168
    assert windows["band"]["last_close"] == "2023-03-31T23:00:00+00:00"
    assert windows["backtest"]["days"] == survivor["backtest"]["history_days"] == 7
    assert windows["backtest"]["observations"] == survivor["backtest"]["observations"] == 168
    assert survivor["data_time"] == "2023-04-01T00:00:00+00:00"
    half_life = survivor["metrics"]["half_life_days"]
    assert 0 < half_life < 2  # an AR(1) of -5 % a bar: about 14 hours, in days


def test_evidence_of_an_hourly_universe_is_published_and_served(hourly) -> None:  # type: ignore[no-untyped-def]
    """The worker's track record on bars: as-of closes 6 hours apart, horizons of 24 and 72
    hours, served by /evidence with the bar (validated against openapi.yaml)."""
    from pairscreen.evaluation.track_record import evaluate_current_rules
    from pairscreen.screen_store.evidence import publish

    rt, key = hourly
    client = make_client(rt)
    with client.client:
        assert client.get("/api/v1/evidence", key).status_code == 404  # none published yet
        with database.connection_context():
            record = evaluate_current_rules(rt)
            publish(record.body, record.first_day, record.last_day, clock.now())
        r = client.get("/api/v1/evidence", key)
        assert r.status_code == 200, r.text
    body = r.json()
    assert body["bar"] == "1h" and body["every_bars"] == 6 and body["every_days"] == 0.25
    assert body["horizons_hours"] == [24.0, 72.0]
    assert [h["horizon_hours"] for h in body["horizons"]] == [24.0, 72.0]
    # the first close with a full 7-day window after the first bar (03-10T01:00Z)
    assert body["from_close"] == "2023-03-17T01:00:00Z" and body["from"] == "2023-03-17"
    # the last close 24 h can follow on the 6-hour grid from 01:00Z, and its outcome's bar
    assert body["to_close"] == "2023-03-30T19:00:00Z"
    assert body["data_through_close"] == "2023-03-31T19:00:00Z"
    assert [p["name"] for p in body["periods"]] == ["after", "chosen_on"]
    # every close of 2023-03 is in the period the defaults were chosen on (to 2023-12-31)
    after, chosen_on = body["periods"]
    assert after["as_of_days"] == 0 and chosen_on["as_of_days"] == body["as_of_days"]


def test_pair_and_chart_of_an_hourly_pair_take_its_declared_windows(hourly) -> None:  # type: ignore[no-untyped-def]
    rt, key = hourly
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/pair/ETH/ETHX?bt=7", key)  # validated against openapi.yaml
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["data_time"] == "2023-04-01T00:00:00+00:00"
        assert body["backtest"]["history_days"] == 7
        assert body["backtest"]["observations"] == 168
        assert body["windows"]["metric"]["observations"] == 168
        assert body["windows"]["backtest"]["first_close"] == "2023-03-25T01:00:00+00:00"
        assert 0 < body["metrics"]["half_life_days"] < 2
        default = client.get("/api/v1/pair/ETH/ETHX", key).json()  # the longest window
        assert default["backtest"]["history_days"] == 7
        three = client.get("/api/v1/pair/ETH/ETHX?bt=3", key).json()
        assert three["backtest"]["observations"] == 72
        refused = client.get("/api/v1/pair/ETH/ETHX?bt=90", key)
        assert refused.status_code == 400
        assert refused.text.strip() == "Bad request: query parameter 'bt' is '90'; allowed: 3 or 7."
        served = client.client.get("/api/v1/openapi.json").json()  # the universe's windows
        bt = served["components"]["parameters"]["BacktestDays"]["schema"]
        assert (bt["enum"], bt["default"]) == ([3, 7], 7)
        chart = client.get("/api/v1/pair/ETH/ETHX/chart.png?bt=7", key)
        assert chart.status_code == 200, chart.text
        assert chart.content.startswith(b"\x89PNG") and len(chart.content) > 10_000


def test_the_chart_of_an_hourly_pair_has_a_time_axis_in_hours(hourly) -> None:  # type: ignore[no-untyped-def]
    from pairscreen.screening.chart import chart_data

    rt, _ = hourly
    with database.connection_context():
        a, b = rt.universe.pair("ETH", "ETHX")
        chart = chart_data(rt, a, b, 3)
    dates = np.asarray(chart.dates)
    assert dates.dtype == np.dtype("datetime64[h]")
    steps = np.unique(np.diff(dates).astype(np.int64))
    # one bar an hour over the drawn 7 + 3 days, but for Binance's outage bar (03-24T14:00)
    assert steps.tolist() == [1, 2]
    assert dates.size == 10 * 24 - 1
    assert np.datetime64("2023-03-24T14", "h") not in dates
    assert chart.data_time.isoformat() == "2023-04-01T00:00:00+00:00"
    renderer = rt.plugins.chart_renderers.get(rt.settings.chart_renderer)
    png = renderer.render(chart, width_px=720, height_px=480)
    assert png.startswith(b"\x89PNG")


def test_the_series_of_an_hourly_pair_gives_each_bar_its_close_time(hourly) -> None:  # type: ignore[no-untyped-def]
    rt, key = hourly
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/pair/ETH/ETHX/series?bt=3", key)  # validated by the contract
        assert r.status_code == 200, r.text
    body = r.json()
    assert body["bt_days"] == 3
    assert len(body["close_times"]) == len(body["dates"]) == 10 * 24 - 1
    assert body["close_times"][-1] == "2023-04-01T00:00:00+00:00"
    assert body["dates"][-1] == "2023-04-01"


def test_screen_run_on_the_command_line_screens_the_bars_and_publishes(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    pin(monkeypatch)
    universe = write_universe(tmp_path)
    argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(universe), "--quiet")
    synced = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))  # creates the database
    assert synced.returncode == 0, synced.stderr
    done = run_cli(*argv, "screen", "run", env=newcomer_env(tmp_path))  # syncs again first
    assert done.returncode == 0, done.stderr
    assert "screen #1: 6 pairs, " in done.stdout, done.stdout
    # a bare date on an hourly universe: the bars closed by its end (tests/test_hourly_rest.py)
    again = run_cli(*argv, "screen", "run", "--as-of", "2023-03-30", env=newcomer_env(tmp_path))
    assert again.returncode == 0, again.stderr
    assert "as of 2023-03-31T00:00:00+00:00: 6 pairs" in again.stdout, again.stdout


@pytest.mark.parametrize(
    ("lines", "needle"),
    [
        ("window_days = 0", "window_days must be whole days, at least 2, got 0"),
        ("window_days = 7.5", "window_days must be whole days, at least 2, got 7.5"),
        ("backtest_days = 7", "backtest_days must be a list of whole days, e.g. [7, 14, 30]"),
        ("backtest_days = []", "backtest_days must be a list of whole days"),
        ("backtest_days = [7, 0]", "backtest_days must be whole days, at least 1, got 0"),
        ("backtest_days = [7, 7]", "backtest_days names a span twice: [7, 7]"),
    ],
)
def test_bad_screen_spans_are_one_line_errors(tmp_path, lines: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    path = write_universe(tmp_path)
    text = path.read_text(encoding="utf-8")
    text = text.replace("window_days = 7\nbacktest_days = [3, 7]\n", lines + "\n")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UniverseError) as raised:
        load_universe_file(path)
    message = str(raised.value)
    assert "\n" not in message and "[screen]" in message and needle in message, message


def test_a_daily_universe_keeps_its_spans_and_declares_its_own() -> None:
    from pairscreen.config import Settings
    from pairscreen.contracts.bars import DAILY
    from pairscreen.screening.spans import screen_spans
    from pairscreen.universe import Universe

    plain = screen_spans(Universe(assets=(), market_source="csv"), Settings())
    assert (plain.bar, plain.window_days, plain.min_history_days) == (DAILY, 540, 200)
    assert plain.backtest_days == (90, 180, 360) and plain.screen_bt_days == 360
    own = screen_spans(
        Universe(assets=(), market_source="csv", window_days=270, backtest_days=(30, 60)),
        Settings(),
    )
    assert (own.window_days, own.backtest_days, own.screen_bt_days) == (270, (30, 60), 60)
    changed = screen_spans(
        Universe(assets=(), market_source="csv", window_days=270), Settings(window_days=300)
    )
    assert changed.window_days == 300  # a setting changed from its default wins


def test_a_four_hour_universe_screens_the_same_spans_of_time(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pin(monkeypatch)
    universe = write_universe(tmp_path, "4h")
    settings = load_settings(
        data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'four.sqlite3'}", universe=universe
    )
    rt = build_runtime(settings)
    try:
        with database.connection_context():
            assert not sync_bars(rt.universe, rt.plugins).needs_review
            run_screen(rt)
            body = json.loads(rt.screens.latest().payload)
    finally:
        database.close()
    assert body["bar"] == "4h" and body["bar_seconds"] == 14_400
    survivor = next(s for s in body["survivors"] if sorted(s["pair"]) == ["ETH", "ETHX"])
    windows = survivor["windows"]
    # 7 days of 4-hour bars: 42 of them, whichever window
    assert [windows[k]["observations"] for k in ("metric", "band", "backtest")] == [42, 42, 42]
    assert windows["metric"]["first_close"] == "2023-03-25T04:00:00+00:00"
    assert windows["band"]["last_close"] == "2023-03-31T20:00:00+00:00"
    assert survivor["backtest"]["history_days"] == 7


def test_an_hourly_universe_is_served_its_own_contract_and_a_daily_one_the_file(hourly) -> None:  # type: ignore[no-untyped-def]
    """The served contract of an hourly universe names its bar and types the evidence's
    spans in days as numbers (its track record steps 0.25 days); openapi.yaml, a daily
    universe's contract, keeps them integers, so daily clients generated from it keep their
    types."""
    rt, key = hourly
    client = make_client(rt)
    with client.client:
        served = client.get("/api/v1/openapi.json", key).json()
    schemas = served["components"]["schemas"]
    assert served["info"]["x-pairscreen-bar"] == "1h"
    fields = [
        schemas["Evidence"]["properties"]["every_days"],
        schemas["EvidenceHorizon"]["properties"]["horizon_days"],
        schemas["EvidencePortfolio"]["properties"]["horizon_days"],
    ]
    assert [f["type"] for f in fields] == ["number"] * 3
    daily = yaml.safe_load(openapi_path(rt.settings).read_text(encoding="utf-8"))
    kept = daily["components"]["schemas"]
    assert kept["Evidence"]["properties"]["every_days"]["type"] == "integer"
    assert kept["EvidenceHorizon"]["properties"]["horizon_days"]["type"] == "integer"
    assert kept["EvidencePortfolio"]["properties"]["horizon_days"]["type"] == "integer"
    assert "x-pairscreen-bar" not in daily["info"]
