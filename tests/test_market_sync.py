"""Syncing candles from a market source into the database, and reading them back."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest
from pairscreen_plugins.market import demo

from pairscreen.config import Settings, load_settings
from pairscreen.db.connection import database, init_database
from pairscreen.db.models import AssetRow, Candle, DataVersion
from pairscreen.market.sync import load_candles, sync_candles
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import load_universe, load_universe_file

END = date(2026, 3, 14)
DAYS = 300

UNIVERSE = f"""
label = "sync test"

[market]
source = "demo"
days = {DAYS}

[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETH"
sector = "majors"

[[asset]]
ticker = "BERA"
sector = "layer1"

[[asset]]
ticker = "PAXG"
sector = "gold"
asset_class = "tokenized_metal"
peg = {{ reference = "XAU", sources = ["demo"] }}
"""


@pytest.fixture()
def universe(tmp_path: Path):
    path = tmp_path / "universe.toml"
    path.write_text(UNIVERSE, encoding="utf-8")
    return load_universe_file(path)


@pytest.fixture()
def plugins() -> Plugins:
    pm = new_plugin_manager()
    pm.register(demo)
    return Plugins(pm, Settings())


@pytest.fixture()
def db(tmp_path: Path):
    init_database("sqlite:///" + str(tmp_path / "t.sqlite3"))
    yield
    database.close()


def _version() -> int:
    with database.connection_context():
        row = DataVersion.get_or_none(DataVersion.name == "candles")
        return row.version if row else 0


def test_sync_is_incremental_and_versions_changes(universe, plugins, db):
    first = sync_candles(universe, plugins, until=END)
    assert first.inserted == {"BTC": DAYS, "ETH": DAYS, "BERA": 120, "PAXG": DAYS}
    assert first.total == 3 * DAYS + 120
    assert first.data_version == 1 and _version() == 1
    assert first.assets_changed == 4
    assert "new candles" in first.summary()
    with database.connection_context():
        assets = {r.ticker: (r.sector, r.asset_class) for r in AssetRow.select()}
    assert assets["PAXG"] == ("gold", "tokenized_metal")
    assert assets["BTC"] == ("majors", "crypto")

    again = sync_candles(universe, plugins, until=END)
    assert again.total == 0 and not again.changed and again.data_version is None
    assert _version() == 1
    assert "no new candles" in again.summary() and not again.conflicts

    next_day = sync_candles(universe, plugins, until=END + timedelta(days=1))
    assert next_day.inserted == {"BTC": 1, "ETH": 1, "BERA": 1, "PAXG": 1}
    assert next_day.data_version == 2 and _version() == 2
    with database.connection_context():
        assert Candle.select().count() == 3 * DAYS + 120 + 4
        newest = Candle.select().where(Candle.day == END + timedelta(days=1)).count()
    assert newest == 4


def test_load_candles_round_trips(universe, plugins, db):
    sync_candles(universe, plugins, until=END)
    expected = {
        c.ticker: c
        for c in demo.DemoMarketSource().fetch_candles(
            universe.assets, universe.market_options, since={}, until=END
        )
    }
    stored = load_candles()
    assert set(stored) == set(expected)
    for ticker, c in expected.items():
        got = stored[ticker]
        assert got.ticker == ticker
        assert got.dates.dtype == np.dtype("datetime64[D]")
        np.testing.assert_array_equal(got.dates, c.dates)
        np.testing.assert_array_equal(got.close, c.close)
        np.testing.assert_array_equal(got.volume, c.volume)
    subset = load_candles(["PAXG", "BTC", "NOPE"])
    assert set(subset) == {"PAXG", "BTC"}
    assert load_candles([]) == {}


def test_changed_asset_metadata_bumps_the_version(universe, plugins, db, tmp_path):
    sync_candles(universe, plugins, until=END)
    moved = tmp_path / "moved.toml"
    moved.write_text(
        UNIVERSE.replace(
            'ticker = "ETH"\nsector = "majors"', 'ticker = "ETH"\nsector = "platforms"'
        ),
        encoding="utf-8",
    )
    report = sync_candles(load_universe_file(moved), plugins, until=END)
    assert report.total == 0 and report.assets_changed == 1 and report.data_version == 2
    with database.connection_context():
        assert AssetRow.get(AssetRow.ticker == "ETH").sector == "platforms"


def test_assets_the_source_does_not_know_are_reported(tmp_path, plugins, db, caplog):
    path = tmp_path / "u.toml"
    path.write_text(
        UNIVERSE + '\n[[asset]]\nticker = "GHOST"\nsector = "majors"\n', encoding="utf-8"
    )
    with caplog.at_level(logging.WARNING):
        report = sync_candles(load_universe_file(path), plugins, until=END)
    assert report.missing == ("GHOST",)
    assert "GHOST" not in report.inserted
    assert "GHOST" in caplog.text and "no data for GHOST" in report.summary()


def test_sync_inside_an_open_connection_keeps_it_open(universe, plugins, db):
    database.connect(reuse_if_open=True)
    sync_candles(universe, plugins, until=END)
    assert not database.is_closed()
    assert len(load_candles(["BTC"])["BTC"].dates) == DAYS
    assert not database.is_closed()


def test_load_universe_defaults_to_the_packaged_demo(tmp_path, universe, monkeypatch):
    monkeypatch.delenv("PAIRSCREEN_UNIVERSE", raising=False)
    settings = load_settings(data_dir=tmp_path, database_url="sqlite:///:memory:")
    assert settings.universe_path is None
    default = load_universe(settings)
    assert default.label == "synthetic demo market" and default.market_source == "demo"
    explicit = load_settings(
        data_dir=tmp_path, database_url="sqlite:///:memory:", universe=tmp_path / "universe.toml"
    )
    assert load_universe(explicit).label == "sync test"


def test_a_candle_table_from_before_unknown_volumes_is_migrated(tmp_path):
    """Migration 5 lets an existing table store an unknown volume (NULL), keeping its rows."""
    path = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(path)) as old:
        old.execute(
            'CREATE TABLE "candle" ("ticker" VARCHAR(20) NOT NULL, "day" DATE NOT NULL, '
            '"close" REAL NOT NULL, "volume" REAL NOT NULL, PRIMARY KEY ("ticker", "day"))'
        )
        old.execute("INSERT INTO candle VALUES ('BTC', '2025-01-01', 100.0, 5.0)")
        old.commit()
    init_database(f"sqlite:///{path}")
    try:
        with database.connection_context():
            (volume,) = [c for c in database.get_columns("candle") if c.name == "volume"]
            assert volume.null
            Candle.create(ticker="BTC", day=date(2025, 1, 2), close=101.0, volume=None)
        stored = load_candles()["BTC"]
        np.testing.assert_array_equal(stored.close, [100.0, 101.0])
        np.testing.assert_array_equal(stored.volume, [5.0, np.nan])
    finally:
        database.close()


def test_a_sync_told_to_stop_earlier_finds_no_conflict_in_later_stored_days(universe, plugins, db):
    sync_candles(universe, plugins, until=END)
    earlier = sync_candles(universe, plugins, until=END - timedelta(days=3))
    assert not earlier.conflicts and not earlier.changed
    again = sync_candles(universe, plugins, until=END, verify=True)
    assert not again.conflicts and not again.changed  # the demo market repeats its history
