"""Intraday bars (issue 36's foundation): ``[market] bar``, the csv and demo sources at a bar,
the checks per bar, compact storage on SQLite and PostgreSQL, and the reader.

The real hourly files are tests/fixtures/hourly (Binance 1h closes, see its README); every
test builds its own database and pins the service's clock where a bar's being closed matters.
"""

from __future__ import annotations

import csv
import hashlib
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from pairscreen_plugins.market import demo
from pairscreen_plugins.market.csv_cells import CellError, close_time

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import Settings, load_settings
from pairscreen.contracts.bars import BAR_SIZES, bar_size
from pairscreen.db.connection import database, init_database
from pairscreen.db.models import BarBlock, Candle
from pairscreen.market.bar_source import bar_source
from pairscreen.market.bar_store import load_bars, load_closed_bars, pack_days, unpack_days
from pairscreen.market.bar_sync import sync_bars
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.runtime import Runtime
from pairscreen.universe import Universe, UniverseError, load_universe_file
from tests.support.cli import newcomer_env, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "hourly"
TICKERS = ("BTC", "ETH", "SOL")
HOUR = bar_size("1h")


def csv_universe(folder: Path, bar: str = "1h", tickers: tuple[str, ...] = TICKERS) -> Path:
    """A csv universe over ``folder/prices`` (the fixture files copied there)."""
    prices = folder / "prices"
    prices.mkdir(exist_ok=True)
    for ticker in tickers:
        if not (prices / f"{ticker}.csv").exists():
            shutil.copy(FIXTURES / f"{ticker}.csv", prices / f"{ticker}.csv")
    assets = "".join(f'[[asset]]\nticker = "{t}"\nsector = "majors"\n\n' for t in tickers)
    path = folder / "universe.toml"
    path.write_text(
        f'[market]\nbar = "{bar}"\n\n[components]\nmarket_source = "csv"\n\n'
        f'[plugins.csv_source]\npath = "prices"\n\n{assets}',
        encoding="utf-8",
    )
    return path


def file_bars(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A fixture file read independently of the csv source: close times (epoch s), closes."""
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    times = [
        int(datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp()) for r in rows
    ]
    return np.array(times, dtype=np.int64), np.array([float(r["close"]) for r in rows])


def opened(folder: Path, url: str, universe_file: Path) -> Runtime:
    """The runtime of ``universe_file`` on the database at ``url`` (built-in plugins)."""
    settings = load_settings(data_dir=folder, database_url=url, universe=universe_file)
    return build_runtime(settings)


def plugins_with(*modules: object) -> Plugins:
    pm = new_plugin_manager()
    for module in modules:
        pm.register(module)
    return Plugins(pm, Settings())


def at(moment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the service's clock to ``moment`` (ISO, UTC) for this test."""
    when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    monkeypatch.setenv(clock.SHIFT_VARIABLE, clock.shift_to(when))


@pytest.fixture(params=["sqlite", "postgresql"])
def bar_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh migrated database on SQLite, and on PostgreSQL when the suite has a server."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'bars.sqlite3'}"
        init_database(url)
        yield url
        database.close()
        return
    postgres = request.getfixturevalue("postgres")  # skips without a server
    name = postgres.create("bars")
    url = postgres.url(name)
    init_database(url)
    try:
        yield url
    finally:
        database.close()
        postgres.drop(name)


# --- [market] bar ---------------------------------------------------------------------------


def test_the_bar_is_read_from_market_and_defaults_to_daily(tmp_path):
    path = csv_universe(tmp_path, "4h")
    assert load_universe_file(path).bar == "4h"
    daily = path.read_text(encoding="utf-8").replace('[market]\nbar = "4h"\n\n', "")
    path.write_text(daily, encoding="utf-8")
    unset = load_universe_file(path)
    path.write_text('[market]\nbar = "1d"\n\n' + daily, encoding="utf-8")
    explicit = load_universe_file(path)
    assert unset.bar == explicit.bar == "1d"
    assert unset == explicit and unset.market_options == explicit.market_options == {}


@pytest.mark.parametrize("value", ['"2h"', '"1H"', "1", '""'])
def test_a_bad_bar_is_a_one_line_error(tmp_path, value):
    path = csv_universe(tmp_path)
    path.write_text(
        path.read_text(encoding="utf-8").replace('bar = "1h"', f"bar = {value}"), encoding="utf-8"
    )
    with pytest.raises(UniverseError) as raised:
        load_universe_file(path)
    message = str(raised.value)
    assert "\n" not in message and "[market]" in message
    assert 'bar must be one of "1d", "4h", "1h", "15m"' in message
    done = run_cli(
        "--data-dir", str(tmp_path / "data"), "--universe", str(path), "data", "sync",
        env=newcomer_env(tmp_path),
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and "bar must be one of" in done.stderr


# --- the csv file's cells and rows ----------------------------------------------------------


def test_a_close_time_is_read_from_each_documented_form():
    expected = int(datetime(2023, 3, 10, 1, tzinfo=UTC).timestamp())
    for text in (
        "2023-03-10T01:00:00Z",
        "2023-03-10T01:00:00+00:00",
        "2023-03-10T03:00:00+02:00",
        "2023-03-10 01:00:00",  # naive: UTC
        str(expected),
        str(expected * 1000),
    ):
        assert close_time(text) == expected, text
    for bad in ("2023-03-10", "1678410000500", "12345", "yesterday", "2023-03-10T25:00:00Z"):
        with pytest.raises(CellError):
            close_time(bad)


def test_pack_and_unpack_keep_every_bar_gaps_and_unknown_volumes():
    bar = BAR_SIZES["4h"]
    times = np.array([1, 2, 3, 5, 6, 7, 13], dtype=np.int64) * bar.seconds + 86_400 * 19_000
    close = np.array([1.5, 2.25, 3.0, 1e-9, 123456.789, 7.0, 0.1])
    volume = np.array([np.nan, 10.0, np.nan, np.nan, np.nan, np.nan, np.nan])
    blocks = pack_days(bar, times, close, volume)
    assert [day for day, _, _ in blocks] == [19_000, 19_001, 19_002]
    assert [v is None for _, _, v in blocks] == [False, True, True]  # NULL: no volume known
    days = np.array([day for day, _, _ in blocks])
    back = unpack_days(bar, days, [c for _, c, _ in blocks], [v for _, _, v in blocks])
    np.testing.assert_array_equal(back[0], times)
    assert back[1].tobytes() == close.tobytes()  # bit for bit
    np.testing.assert_array_equal(back[2], volume)


# --- sync and read back, SQLite and PostgreSQL ----------------------------------------------


def test_an_hourly_csv_universe_syncs_and_its_bars_read_back_exactly(bar_database, tmp_path):
    rt = opened(tmp_path, bar_database, csv_universe(tmp_path))
    universe, plugins = rt.universe, rt.plugins
    report = sync_bars(universe, plugins)
    assert report.inserted == {"BTC": 527, "ETH": 527, "SOL": 527}
    assert not report.needs_review and report.data_version == 1
    headline = report.lines()[0]  # 2023's bars, the suite's clock in 2026: stale, in bars and days
    assert headline.startswith(
        "3 of 3 assets are stale; the oldest is BTC, last bar closed 2023-04-01T00:00:00Z ("
    )
    assert " days behind the last closed 1h bar, limit 2 days)" in headline
    behind = report.freshness["ETH"].bars_behind
    assert behind == (HOUR.last_closed(clock.now()) - 1680307200) // 3600  # 2023-04-01T00:00Z
    with database.connection_context():
        stored = load_bars(HOUR)
        blocks = BarBlock.select().count()
        assert Candle.select().count() == 0  # the daily table is not touched
    assert blocks == 3 * 22  # one row per asset and UTC day
    for ticker in TICKERS:
        times, close = file_bars(FIXTURES / f"{ticker}.csv")
        got = stored[ticker]
        assert got.dates.dtype == np.dtype("datetime64[s]")
        np.testing.assert_array_equal(got.dates.astype(np.int64), times)
        assert got.close.tobytes() == close.tobytes()
        assert np.isnan(got.volume).all()  # the files have no volume: unknown, never 0
    gap = np.datetime64("2023-03-24T14:00:00", "s")
    assert gap not in stored["BTC"].dates  # the exchange's outage stays a gap

    again = sync_bars(universe, plugins)
    assert again.total == 0 and not again.needs_review and again.data_version is None
    assert "0 new 1h bars for 0 assets through" in again.lines()[-1]


def test_a_new_bar_in_the_file_is_appended_and_a_changed_one_is_a_conflict(bar_database, tmp_path):
    rt = opened(tmp_path, bar_database, csv_universe(tmp_path))
    universe, plugins = rt.universe, rt.plugins
    sync_bars(universe, plugins)
    btc = tmp_path / "prices" / "BTC.csv"
    btc.write_text(
        btc.read_text(encoding="utf-8") + "2023-04-01T01:00:00Z,28500.5\n", encoding="utf-8"
    )
    eth = tmp_path / "prices" / "ETH.csv"
    eth.write_text(
        eth.read_text(encoding="utf-8").replace("2023-03-31T20:00:00Z,", "2023-03-31T20:00:00Z,1"),
        encoding="utf-8",
    )
    report = sync_bars(universe, plugins)
    assert report.inserted == {"BTC": 1}
    (conflict,) = report.conflicts
    assert conflict.ticker == "ETH" and conflict.describe().startswith(
        "ETH: the bar closing 2023-03-31T20:00:00Z: stored close "
    )
    with database.connection_context():
        stored = load_bars(HOUR)
    assert stored["BTC"].close[-1] == 28500.5 and len(stored["ETH"].dates) == 527


# --- the rules per bar ----------------------------------------------------------------------


def test_an_unfinished_last_bar_is_not_stored(bar_database, tmp_path, monkeypatch):
    rt = opened(tmp_path, bar_database, csv_universe(tmp_path, tickers=("BTC",)))
    universe, plugins = rt.universe, rt.plugins
    at("2023-03-31T23:59:59Z", monkeypatch)  # the bar closing at 2023-04-01T00:00Z is forming
    report = sync_bars(universe, plugins)
    assert report.inserted == {"BTC": 526}
    assert report.issues["BTC"].future == 1 and not report.needs_review
    assert (
        report.lines()[0] == "no stale assets: 1 asset with 1h bars, each within its class's limit"
    )
    warning = next(line for line in report.lines() if line.startswith("warning: BTC"))
    assert warning == (
        "warning: BTC: source rows left out (BTC.csv): 1 closing after 2023-03-31T23:00:00Z, "
        "the last closed 1h bar (unfinished)"
    )
    with database.connection_context():
        last = load_bars(HOUR)["BTC"].dates[-1]
    assert last == np.datetime64("2023-03-31T23:00:00", "s")

    at("2023-04-01T00:00:00Z", monkeypatch)  # now it has closed
    assert sync_bars(universe, plugins).inserted == {"BTC": 1}

    at("2023-03-31T12:30:00Z", monkeypatch)  # a clock set back: the reader follows it
    with database.connection_context():
        closed = load_closed_bars(HOUR)["BTC"].dates
        stored = load_bars(HOUR)["BTC"].dates
    assert closed[-1] == np.datetime64("2023-03-31T12:00:00", "s")
    assert stored[-1] == np.datetime64("2023-04-01T00:00:00", "s") and len(stored) == 527


def test_off_grid_and_duplicated_bars_are_named_and_refused(bar_database, tmp_path):
    folder = csv_universe(tmp_path)
    btc = tmp_path / "prices" / "BTC.csv"
    lines = btc.read_text(encoding="utf-8").splitlines()  # line k: the bar closing (k-1):00
    lines.insert(5, "2023-03-10T04:30:00Z,20000.0")  # line 6: half past the hour
    lines.append("2023-03-10T09:00:00Z,1.0")  # line 530: line 11's bar with another close
    lines.append(lines[11])  # line 531: line 12's row again, the same values
    btc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    eth = tmp_path / "prices" / "ETH.csv"
    eth.write_text(
        eth.read_text(encoding="utf-8") + "1680314400,1822.0\n", encoding="utf-8"
    )  # 02:00Z
    eth_lines = eth.read_text(encoding="utf-8").splitlines()
    eth_lines.append(str((1680314400 + 60) * 1000) + ",1823.0")  # epoch ms, a minute off
    eth.write_text("\n".join(eth_lines) + "\n", encoding="utf-8")

    rt = opened(tmp_path, bar_database, folder)
    report = sync_bars(rt.universe, rt.plugins)
    assert set(report.refused) == {"BTC", "ETH"} and report.inserted == {"SOL": 527}
    lines_out = report.lines()
    btc_line = next(line for line in lines_out if line.startswith("refused: BTC"))
    assert btc_line == (
        "refused: BTC: BTC.csv: 2 rows not understood: line 6: 2023-03-10T04:30:00Z is off "
        "the 1h grid (bars close every 1h from 00:00 UTC); line 530 gives "
        "2023-03-10T09:00:00Z again with close 1 (line 11: 19959.12); nothing written for BTC"
    )
    eth_line = next(line for line in lines_out if line.startswith("refused: ETH"))
    assert "1680314460000 is off the 1h grid" in eth_line
    assert report.issues["BTC"].duplicate == 1  # the same bar twice: harmless, counted
    with database.connection_context():
        assert set(load_bars(HOUR)) == {"SOL"}


def test_data_sync_on_the_command_line_names_refusals_and_exits_7(tmp_path):
    folder = csv_universe(tmp_path, tickers=("BTC", "SOL"))
    btc = tmp_path / "prices" / "BTC.csv"
    btc.write_text(btc.read_text(encoding="utf-8") + "2023-04-01T00:30:00Z,1.0\n", encoding="utf-8")
    argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(folder), "--quiet")
    done = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert done.returncode == 7, done.stderr
    assert (
        "refused: BTC: BTC.csv: 1 row not understood: line 529: 2023-04-01T00:30:00Z" in done.stdout
    )
    assert "csv: 527 new 1h bars for 1 asset through " in done.stdout
    assert done.stderr.count("\n") == 1
    # the screen runs on the stored bars (the worker's screens are
    # tests/test_screen_schedule.py's, evaluate's tests/test_hourly_evaluation.py's)
    screen = run_cli(*argv, "screen", "run", "--no-sync", env=newcomer_env(tmp_path))
    assert screen.returncode == 0, screen.stderr
    done = run_cli(*argv, "evaluate", "--horizon", "90m", env=newcomer_env(tmp_path), timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--horizon '90m' is not a whole number of 1h bars" in done.stderr


def test_a_daily_only_source_is_refused_for_intraday_bars_in_one_line():
    class DailyOnly:
        name = "dailyonly"

    with pytest.raises(ValueError, match=r"^market source 'dailyonly' serves daily candles only"):
        bar_source(DailyOnly(), "1h")


# --- the demo market at a bar ---------------------------------------------------------------


def test_the_demo_market_generates_hourly_bars_ending_on_its_daily_closes(bar_database, tmp_path):
    path = tmp_path / "universe.toml"
    path.write_text(
        '[market]\nbar = "1h"\n\n[components]\nmarket_source = "demo"\n\n'
        "[plugins.demo]\ndays = 30\n\n"
        '[[asset]]\nticker = "BTC"\nsector = "majors"\n\n'
        '[[asset]]\nticker = "ETH"\nsector = "majors"\n',
        encoding="utf-8",
    )
    rt = opened(tmp_path, bar_database, path)
    hourly: Universe = rt.universe
    plugins = rt.plugins
    report = sync_bars(hourly, plugins)
    assert not report.needs_review and report.inserted["BTC"] >= 29 * 24
    assert (
        report.lines()[0] == "no stale assets: 2 assets with 1h bars, each within its class's limit"
    )
    with database.connection_context():
        bars = load_bars(HOUR)
    btc = bars["BTC"]
    now = np.datetime64(clock.now().replace(tzinfo=None), "s")
    assert btc.dates[-1] <= now < btc.dates[-1] + np.timedelta64(3600, "s")  # closed bars only
    assert (np.diff(btc.dates.astype(np.int64)) == 3600).all()
    daily = {
        c.ticker: c
        for c in demo.DemoMarketSource().fetch_candles(
            hourly.assets, {"days": 30}, since={}, until=clock.today()
        )
    }["BTC"]
    midnight = btc.dates.astype(np.int64) % 86_400 == 0
    closing_days = (btc.dates[midnight] - np.timedelta64(1, "D")).astype("datetime64[D]")
    on = np.isin(daily.dates, closing_days)
    assert on.sum() >= 28
    assert (
        btc.close[midnight][np.isin(closing_days, daily.dates)].tobytes()
        == daily.close[on].tobytes()
    )
    assert sync_bars(hourly, plugins).total <= 1  # only a bar closed since the first sync


# --- a daily universe is what it was --------------------------------------------------------

# The demo fixture's stored candles and screen export (sha256) at the suite's pinned day,
# computed on the code before [market] bar existed (commit c07eadd) with the same command,
# with the numerical libraries below: a golden digest holds for the versions it was taken
# with, and for the SIMD code paths numpy dispatches to on the CPU (a numpy or pandas
# release, or AVX-512 against AVX2 in np.log, may move the last bit of a float), so another
# environment skips, naming it, rather than failing on a change the code did not make.
# Recorded again on 2026-11-29 when c07eadd itself gave these digests with these versions.
DAILY_DEMO_DIGESTS = (
    "c34ab71b5ffcee8304c5ff5c531e9cd47228f6ce7f52dbe3015e57d3a93abf94",
    "397f8ac5791e5c1351b81ed134cca379bd2aa9a7b8e573487aaf1c0f1f5e5fad",
)
DIGEST_LIBRARIES = {
    "numpy": "2.4.6",
    "pandas": "3.1.1",
    "scipy": "1.17.1",
    "statsmodels": "0.15.0",
    "arch": "8.0.0",
}
DIGEST_SIMD = ["X86_V3", "X86_V4", "AVX512_ICL"]  # numpy's dispatch targets the CPU ran


def numpy_simd_targets() -> list[str]:
    """The SIMD targets numpy dispatches to on this CPU (its build's targets it supports)."""
    from numpy._core import _multiarray_umath as umath

    features: dict[str, bool] = getattr(umath, "__cpu_features__", {})
    return [t for t in getattr(umath, "__cpu_dispatch__", []) if features.get(t)]


def test_a_daily_universe_syncs_and_screens_bit_identically_to_before(tmp_path):
    from importlib.metadata import version

    from tests.support.pinned_clock import PINNED_NOW, pinned_moment
    from tests.test_pinned_clock import demo_fixture_digest

    if pinned_moment() != PINNED_NOW:
        pytest.skip("the digests are those of the suite's own pinned day")
    installed = {name: version(name) for name in DIGEST_LIBRARIES}
    if installed != DIGEST_LIBRARIES or numpy_simd_targets() != DIGEST_SIMD:
        pytest.skip(
            f"the digests were taken with {DIGEST_LIBRARIES} on SIMD {DIGEST_SIMD}; this run "
            f"has {installed} on {numpy_simd_targets()}"
        )
    candles, export = demo_fixture_digest(tmp_path / "a", PINNED_NOW.replace(hour=4, minute=5))
    assert (candles, hashlib.sha256(export.encode()).hexdigest()) == DAILY_DEMO_DIGESTS


def test_a_long_history_is_written_in_several_statements_and_reads_back(bar_database):
    """More blocks than one statement writes (600 days > 500), merged into a stored day."""
    from pairscreen.db.connection import write_transaction
    from pairscreen.db.models import AssetRow
    from pairscreen.market.bar_store import asset_ids, write_bars
    from pairscreen.types import Candles

    four = BAR_SIZES["4h"]
    start = np.datetime64("2022-01-01T04:00:00", "s")
    times = start + np.arange(600 * 6) * np.timedelta64(four.seconds, "s")
    rng = np.random.default_rng(11)
    close = 50 * np.exp(np.cumsum(rng.normal(0, 0.01, len(times))))
    volume = np.where(rng.random(len(times)) < 0.5, rng.random(len(times)) * 1e5, np.nan)
    with database.connection_context():
        AssetRow.create(ticker="AAA", sector="s", asset_class="crypto")
        with write_transaction():
            first = Candles("AAA", times[:-3], close[:-3], volume[:-3])
            write_bars(four, asset_ids(), first)
        with write_transaction():  # the last day's three remaining bars join its block
            write_bars(four, asset_ids(), Candles("AAA", times[-3:], close[-3:], volume[-3:]))
        back = load_bars(four)["AAA"]
        assert BarBlock.select().count() == 600
    np.testing.assert_array_equal(back.dates, times)
    assert back.close.tobytes() == close.tobytes()
    np.testing.assert_array_equal(back.volume, volume)


def test_a_clean_file_reads_column_by_column_as_it_does_row_by_row(tmp_path):
    """The fast path of a clean file gives the bits the row-by-row reader gives."""
    import io

    from pairscreen_plugins.market import csv_bars
    from pairscreen_plugins.market.csv_layout import layout

    times, close = file_bars(FIXTURES / "BTC.csv")
    rng = np.random.default_rng(5)
    volume = [f"{v:.4f}" if v > 0.3 else "" for v in rng.random(len(times))]
    order = rng.permutation(len(times))
    texts = {
        "iso": (FIXTURES / "BTC.csv").read_text(encoding="utf-8"),
        "seconds, volumes": "timestamp,close,volume\n"
        + "".join(f"{t},{float(c)!r},{v}\n" for t, c, v in zip(times, close, volume, strict=True)),
        "milliseconds, shuffled": "close,date\n"
        + "".join(f"{float(close[i])!r},{times[i] * 1000}\n" for i in order),
    }
    for name, text in texts.items():
        header, *records = list(csv.reader(io.StringIO(text)))
        columns = layout(header)
        fast = csv_bars._clean_bars(records, columns, HOUR)
        assert fast is not None, name
        slow = csv_bars._read_bar_rows(
            csv.reader(io.StringIO(text.split("\n", 1)[1])), columns, HOUR
        )
        keys = sorted(slow.days)
        assert fast[0].tolist() == [int(k.timestamp()) for k in keys], name  # type: ignore[attr-defined]
        assert fast[1].tobytes() == np.array([slow.days[k][0] for k in keys]).tobytes(), name
        np.testing.assert_array_equal(fast[2], np.array([slow.days[k][1] for k in keys]))
    broken = texts["iso"].replace("2023-03-10T05:00:00Z", "2023-03-10T05:30:00Z")
    header, *records = list(csv.reader(io.StringIO(broken)))
    assert csv_bars._clean_bars(records, layout(header), HOUR) is None  # named row by row
