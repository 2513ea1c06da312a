"""The screen on an hourly universe (issue 36): synced from real hourly closes, screened
with windows that are spans of time, published and served with its bar.

The universe is tests/fixtures/hourly (Binance BTC, ETH, SOL 1h closes, 2023-03-10 to
2023-04-01, one outage bar missing) plus ``ETHX``, built here from ETH's closes times a
seeded mean-reverting factor (an AR(1) on the log, -5 % a bar, 0.3 % noise) so that one pair
reverts and survives a loose filter. The clock is pinned a few hours after the last bar.
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.bar_sync import sync_bars
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
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


def write_universe(folder: Path) -> Path:
    """The hourly csv universe of the four assets in ``folder``."""
    prices = folder / "prices"
    prices.mkdir()
    for t in TICKERS[:3]:
        shutil.copy(FIXTURES / f"{t}.csv", prices / f"{t}.csv")
    write_ethx(prices)
    assets = "".join(f'[[asset]]\nticker = "{t}"\nsector = "majors"\n\n' for t in TICKERS)
    path = folder / "universe.toml"
    path.write_text(
        '[market]\nbar = "1h"\n\n[components]\nmarket_source = "csv"\n\n'
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
