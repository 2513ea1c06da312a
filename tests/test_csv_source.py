"""The ``csv`` market source: every row understood or counted with its line, nothing guessed."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from pairscreen_plugins.market import csv_source

from pairscreen import Asset, RowIssues
from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.config import Settings, load_settings
from pairscreen.db.connection import database, init_database
from pairscreen.db.models import Candle
from pairscreen.market.sync import load_candles, sync_candles
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import load_universe_file
from tests.conftest import make_client

UNTIL = date(2025, 1, 31)


def _write(folder: Path, symbol: str, text: str) -> Path:
    path = folder / f"{symbol}.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _fetch(folder: Path, assets, since=None, until=UNTIL, volume_unit="quote"):
    source = csv_source.CsvMarketSource()
    options = {"path": str(folder), "volume_unit": volume_unit}
    return {
        c.ticker: c for c in source.fetch_candles(assets, options, since=since or {}, until=until)
    }


def test_hook_registers_the_csv_source():
    (source,) = csv_source.pairscreen_register_market_sources()
    assert source.name == "csv"


def test_rows_come_back_sorted_and_every_row_not_understood_is_counted(tmp_path, caplog):
    _write(
        tmp_path,
        "BTC",
        (
            "date,close,volume\n"
            "2025-01-03,103,1000\n"
            "2025-01-01,101,1000\n"
            "2025-01-02,102,1000\n"
            "2025-01-02,102.5,1500\n"  # line 5: the day of line 4 with another close
            "2025-01-04,-1,1000\n"  # line 6: non-positive close
            "2025-01-05,nan,1000\n"  # line 7: NaN close
            "2025-01-06,,1000\n"  # line 8: empty close
            "yesterday,99,1000\n"  # line 9: bad date
            "2025-01-07,107,\n"  # line 10: empty volume is unknown, not 0
            "2025-01-08T00:00:00Z,108,800\n"  # a timestamp counts as its UTC day
            "2025-01-08,108,800\n"  # line 12: the same row again, harmless
            "\n"
            "2025-02-01,999,1\n"  # after `until`
        ),
    )
    with caplog.at_level(logging.WARNING):
        got = _fetch(tmp_path, [Asset("BTC", "majors")])["BTC"]
    assert [str(d) for d in got.dates] == [
        "2025-01-01",
        "2025-01-02",
        "2025-01-03",
        "2025-01-07",
        "2025-01-08",
    ]
    np.testing.assert_array_equal(got.close, [101, 102, 103, 107, 108])
    np.testing.assert_array_equal(got.volume, [1000, 1000, 1000, np.nan, 800])
    assert got.issues == RowIssues(
        future=1,
        duplicate=1,
        unparseable=4,
        conflicting=1,
        examples=(
            "line 5 gives 2025-01-02 again with close 102.5 (line 4: 102)",
            "line 6: close '-1' is not a finite positive number",
            "line 7: close 'nan' is not a finite positive number",
        ),
        origin="BTC.csv",
    )
    assert got.issues.refuses and got.issues.not_understood == 5
    assert caplog.text == ""  # counted for the sync's report, not logged row by row


def test_header_order_is_free_and_symbols_come_from_the_asset(tmp_path):
    _write(tmp_path, "XBT", "Volume, Date ,CLOSE,note\n5,2025-01-01,10,x\n6,2025-01-02,11,y\n")
    got = _fetch(tmp_path, [Asset("BTC", "majors", symbol="XBT")])["BTC"]
    np.testing.assert_array_equal(got.close, [10, 11])
    np.testing.assert_array_equal(got.volume, [5, 6])


def test_missing_file_is_skipped_with_a_warning(tmp_path, caplog):
    _write(tmp_path, "ETH", "date,close,volume\n2025-01-01,3000,1\n")
    with caplog.at_level(logging.WARNING):
        got = _fetch(tmp_path, [Asset("BTC", "majors"), Asset("ETH", "majors")])
    assert list(got) == ["ETH"]
    assert "BTC" in caplog.text and "BTC.csv" in caplog.text


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ("day,close,volume", "its header 'day,close,volume' names no date (or timestamp) column"),
        ("date;close;volume", "separated by semicolons? only commas are read"),
        ("", "BTC.csv is empty"),
        ("date,volume", "its header 'date,volume' names no close column"),
        ("date,close,Close", "its header 'date,close,Close' names close more than once"),
    ],
)
def test_a_file_without_a_usable_header_is_unreadable_and_named(tmp_path, header, why):
    _write(tmp_path, "BTC", f"{header}\n2025-01-01,1,1\n" if header else "")
    _write(tmp_path, "ETH", "date,close\n2025-01-01,3000\n")
    got = _fetch(tmp_path, [Asset("BTC", "majors"), Asset("ETH", "majors")])
    assert len(got["BTC"].dates) == 0 and got["BTC"].issues.refuses
    assert got["BTC"].issues.unreadable.startswith("BTC.csv ")
    assert why in got["BTC"].issues.unreadable
    assert len(got["ETH"].dates) == 1  # the next file is read all the same


def test_a_file_without_volume_has_unknown_volumes_never_zero(tmp_path, caplog):
    _write(tmp_path, "BTC", "date,close\n2025-01-01,10\n2025-01-02,11\n")
    _write(tmp_path, "ETH", "date,close,volume\n2025-01-01,1,5\n2025-01-02,2,\n")
    _write(tmp_path, "SOL", "date,close,volume\n2025-01-01,1,5\n2025-01-02,2,-3\n")
    assets = [Asset("BTC", "majors"), Asset("ETH", "majors"), Asset("SOL", "majors")]
    with caplog.at_level(logging.WARNING):
        got = _fetch(tmp_path, assets)
    np.testing.assert_array_equal(got["BTC"].close, [10, 11])
    assert np.isnan(got["BTC"].volume).all()
    np.testing.assert_array_equal(got["ETH"].volume, [5, np.nan])  # an empty cell: unknown
    assert not got["BTC"].issues and not got["ETH"].issues
    # A negative volume is not a volume: the row is not understood, never read as 0.
    assert got["SOL"].issues.examples == (
        "line 3: volume '-3' is not a finite number of at least 0",
    )


def test_bad_options_are_clear(tmp_path):
    source = csv_source.CsvMarketSource()
    with pytest.raises(ValueError, match="path"):
        list(source.fetch_candles([Asset("BTC", "x")], {}, since={}, until=UNTIL))
    with pytest.raises(ValueError, match="does not exist"):
        list(
            source.fetch_candles(
                [Asset("BTC", "x")], {"path": str(tmp_path / "nope")}, since={}, until=UNTIL
            )
        )


def test_since_returns_only_later_days(tmp_path):
    _write(
        tmp_path,
        "BTC",
        "date,close,volume\n" + "".join(f"2025-01-{d:02d},{100 + d},1\n" for d in range(1, 11)),
    )
    got = _fetch(tmp_path, [Asset("BTC", "majors")], since={"BTC": date(2025, 1, 8)})["BTC"]
    np.testing.assert_array_equal(got.close, [109, 110])
    nothing = _fetch(tmp_path, [Asset("BTC", "majors")], since={"BTC": date(2025, 1, 10)})
    assert len(nothing["BTC"].dates) == 0  # an answer with no rows: not "no file"


def test_incremental_sync_from_a_universe_file(tmp_path):
    prices = tmp_path / "prices"
    prices.mkdir()
    for symbol, base in (("BTC", 100.0), ("ETH", 10.0)):
        _write(
            prices,
            symbol,
            "date,close,volume\n"
            + "".join(f"2025-01-{d:02d},{base + d},{d * 1000}\n" for d in range(1, 21)),
        )
    universe_file = tmp_path / "universe.toml"
    universe_file.write_text(
        # the former [market] form: this test hands load_universe_file's universe to the
        # sync directly, without the start-up that moves the options to their plugin's table
        '[market]\nsource = "csv"\npath = "prices"\nvolume_unit = "quote"\n\n'
        '[[asset]]\nticker = "BTC"\nsector = "majors"\n\n'
        '[[asset]]\nticker = "ETH"\nsector = "majors"\n',
        encoding="utf-8",
    )
    universe = load_universe_file(universe_file)
    pm = new_plugin_manager()
    pm.register(csv_source)
    plugins = Plugins(pm, Settings())
    init_database("sqlite:///" + str(tmp_path / "t.sqlite3"))
    try:
        first = sync_candles(universe, plugins, until=date(2025, 1, 31))
        assert first.inserted == {"BTC": 20, "ETH": 20}
        text = (prices / "BTC.csv").read_text(encoding="utf-8")
        # 2025-01-05 corrected before the overlap (read again by --verify only), two new days
        text = text.replace("2025-01-05,105.0,5000", "2025-01-05,999,1")
        text += "2025-01-21,121,21000\n2025-01-22,122,22000\n"
        (prices / "BTC.csv").write_text(text, encoding="utf-8")
        second = sync_candles(universe, plugins, until=date(2025, 1, 31))
        assert second.inserted == {"BTC": 2}
        stored = load_candles()
        assert len(stored["BTC"].dates) == 22 and len(stored["ETH"].dates) == 20
        assert stored["BTC"].close[4] == 105.0
        assert stored["BTC"].close[-1] == 122.0
        with database.connection_context():
            assert Candle.select().count() == 42
    finally:
        database.close()


def test_a_volume_less_file_serves_null_volumes_over_http(empty_database_url, tmp_path):
    """No volume column: stored as NULL, served as null (the contract allows it), never 0."""
    prices = tmp_path / "prices"
    prices.mkdir()
    rng = np.random.default_rng(3)
    days = np.datetime64("2024-01-01") + np.arange(300)
    for symbol, volume in (("AAA", ",1000"), ("BBB", None)):
        close = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, len(days))))
        header = "date,close" + (",volume" if volume else "")
        body = "".join(f"{d},{c:.6f}{volume or ''}\n" for d, c in zip(days, close, strict=True))
        _write(prices, symbol, f"{header}\n{body}")
    universe_file = tmp_path / "universe.toml"
    universe_file.write_text(
        '[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\nvolume_unit = "quote"\n\n'
        '[[asset]]\nticker = "AAA"\nsector = "majors"\n\n'
        '[[asset]]\nticker = "BBB"\nsector = "majors"\n',
        encoding="utf-8",
    )
    settings = load_settings(
        data_dir=tmp_path, database_url=empty_database_url, universe=universe_file
    )
    init_database(settings.database_url)
    rt = build_runtime(settings)
    try:
        sync_candles(rt.universe, rt.plugins)
        with database.connection_context():
            assert Candle.select().where(Candle.volume.is_null()).count() == len(days)
            accounts.create_user("csv@example.com", "personal", lifetime=True)
            key = accounts.rotate_key("csv@example.com")
        client = make_client(rt)
        with client.client:
            r = client.get("/api/v1/pair/AAA/BBB", key)
        assert r.status_code == 200
        metrics = r.json()["metrics"]
        assert metrics["volume_a"] == 1000.0 and metrics["volume_b"] is None
    finally:
        database.close()
