"""Verified syncs on real daily closes (tests/fixtures/sync_realdata, see its README): a source that
rewrites stored history is refused per asset, ``--verify`` reads every stored day again,
``--replace`` adopts the source's history without touching accounts, big moves and unusable
rows are named, base volume becomes quote volume. Runs on SQLite, and on PostgreSQL with
``PAIRSCREEN_TEST_DATABASE_URL`` set."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.cli import exits
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.db.models import Candle, DataVersion
from pairscreen.market.sync import load_candles
from tests.conftest import make_client
from tests.support.csv_world import CsvWorld, csv_world

REAL = Path(__file__).parent / "fixtures" / "sync_realdata"
BASE = "/api/v1"


def _rows(ticker: str, *, through: str = "9999", since: str = "") -> list[str]:
    lines = (REAL / f"{ticker}.csv").read_text(encoding="utf-8").splitlines()[1:]
    return [line for line in lines if since <= line[:10] <= through]


def _write(folder: Path, ticker: str, rows: list[str], header: str = "date,close,volume") -> None:
    (folder / f"{ticker}.csv").write_text(header + "\n" + "\n".join(rows) + "\n", "utf-8")


@dataclass
class World(CsvWorld):
    """A csv universe over a prices folder, a database, and ``pairscreen`` run on both."""

    def candles_of(self, ticker: str) -> list[tuple[str, str, str]]:
        """The stored rows of one asset as text: what "byte for byte" compares."""
        with database.connection_context():
            query = (
                Candle.select(Candle.day, Candle.close, Candle.volume)
                .where(Candle.ticker == ticker)
                .order_by(Candle.day)
                .tuples()
            )
            return [(str(d)[:10], repr(c), repr(v)) for d, c, v in query]

    def version(self) -> int:
        with database.connection_context():
            row = DataVersion.get_or_none(DataVersion.name == "candles")
            return row.version if row else 0


UNIVERSE = """
label = "real closes (test fixture)"

[components]
market_source = "csv"

[plugins.csv_source]
path = "prices"
volume_unit = "base"

[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETH"
sector = "majors"
"""


@pytest.fixture()
def world(
    empty_database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[World]:
    base = csv_world(empty_database_url, tmp_path, capsys, UNIVERSE)
    yield World(base.folder, base.universe, base.url, base.data_dir, base.run)
    database.close()


def test_a_refreshed_file_that_moves_history_is_refused_and_leaves_that_asset_as_stored(world):
    _write(world.folder, "BTC", _rows("BTC", through="2023-10-31"))
    _write(world.folder, "ETH", _rows("ETH", through="2023-10-31"))
    code, out, err = world.run("data", "sync")
    assert code == 0, err
    btc_before = world.candles_of("BTC")
    assert len(btc_before) == 153
    version = world.version()

    # The refreshed folder: BTC's dates moved one day (every stored close now sits on
    # another day), ETH simply two months longer.
    moved = [
        f"{later[:10]}{row[10:]}"
        for row, later in zip(_rows("BTC"), _rows("BTC")[1:], strict=False)
    ]
    _write(world.folder, "BTC", moved)
    _write(world.folder, "ETH", _rows("ETH"))
    code, out, err = world.run("data", "sync")

    assert code == exits.DATA_CONFLICT == 7
    assert err.count("\n") == 1 and "contradicts the stored history of BTC" in err
    lines = out.splitlines()
    assert lines[0].startswith("2 of 2 assets are stale; the oldest is ")
    (conflict,) = [line for line in lines if line.startswith("conflict:")]
    # 2023-10-25 is the 7th-last stored day; the moved file has 2023-10-24's close there.
    stored = dict((d, c) for d, c, _ in btc_before)
    assert conflict.startswith(
        f"conflict: BTC: 2023-10-25: stored close {float(stored['2023-10-25']):.10g}, "
        f"the source {float(stored['2023-10-24']):.10g} (first of 7 conflicting days)"
    )
    assert "nothing written for BTC" in conflict
    assert "61 new candles for 1 asset through" in out
    assert "--replace BTC" in out
    assert world.candles_of("BTC") == btc_before  # not one row of BTC changed
    assert len(world.candles_of("ETH")) == 214  # the other asset synced
    assert world.version() == version + 1


def test_a_corrected_day_is_reported_inside_the_overlap_and_with_verify_outside(world):
    btc = _rows("BTC", through="2023-10-31")
    _write(world.folder, "BTC", btc)
    _write(world.folder, "ETH", _rows("ETH", through="2023-10-31"))
    assert world.run("data", "sync")[0] == 0
    before = world.candles_of("BTC")

    def corrected(day: str) -> list[str]:
        out = []
        for row in btc:
            d, close, volume = row.split(",")
            out.append(f"{d},{float(close) * 1.001!r},{volume}" if d == day else row)
        return out

    # An old day (outside the last 7 stored): a plain sync does not read it again...
    _write(world.folder, "BTC", corrected("2023-08-15"))
    code, out, _ = world.run("data", "sync")
    assert code == 0 and "conflict" not in out
    # ... --verify does, and names both closes.
    code, out, err = world.run("data", "sync", "--verify")
    assert code == exits.DATA_CONFLICT, out + err
    old = float(dict((d, c) for d, c, _ in before)["2023-08-15"])
    assert (
        f"conflict: BTC: 2023-08-15: stored close {old:.10g}, the source {old * 1.001:.10g}; "
        "nothing written for BTC" in out
    )
    assert "whole stored history checked" in out
    # A correction inside the overlap is caught by every sync.
    _write(world.folder, "BTC", corrected("2023-10-29"))
    code, out, _ = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT and "conflict: BTC: 2023-10-29: stored close" in out
    # A stored day the source no longer has is a conflict too.
    _write(world.folder, "BTC", [r for r in btc if not r.startswith("2023-10-30")])
    code, out, _ = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT
    assert "conflict: BTC: 2023-10-30: stored close" in out and "no longer has that day" in out
    assert world.candles_of("BTC") == before


def test_replace_adopts_the_new_history_and_accounts_keep_working(world):
    _write(world.folder, "BTC", _rows("BTC", through="2023-10-31"))
    _write(world.folder, "ETH", _rows("ETH", through="2023-10-31"))
    assert world.run("data", "sync")[0] == 0
    assert (
        world.run("users", "create", "trader@example.com", "--tier", "personal", "--lifetime")[0]
        == 0
    )
    code, key, _ = world.run("keys", "rotate", "trader@example.com")
    key = key.strip().split()[-1]
    assert key.startswith("rr_") and code == 0
    assert world.run("watchlist", "add", "trader@example.com", "BTC/ETH")[0] == 0
    version = world.version()

    # The whole history restated a tenth of a percent higher from 2023-09-01 on.
    restated = []
    for row in _rows("BTC"):
        d, close, volume = row.split(",")
        restated.append(f"{d},{float(close) * 1.001!r},{volume}" if d >= "2023-09-01" else row)
    _write(world.folder, "BTC", restated)
    _write(world.folder, "ETH", _rows("ETH"))
    assert world.run("data", "sync")[0] == exits.DATA_CONFLICT
    code, out, err = world.run("data", "sync", "--replace", "btc")
    assert code == 0, err
    assert "replaced: BTC: adopted the source's history: 61 days changed from 2023-09-01" in out
    assert world.version() == version + 2  # ETH's new days, then the replacement
    stored = load_candles(["BTC"])["BTC"]
    assert len(stored.dates) == 214 and str(stored.dates[-1]) == "2023-12-31"
    expected = [float(r.split(",")[1]) for r in restated]
    np.testing.assert_array_equal(stored.close, expected)

    settings = load_settings(
        data_dir=world.data_dir, database_url=world.url, universe=world.universe
    )
    rt = build_runtime(settings)
    client = make_client(rt)
    with client.client:
        me = client.get(f"{BASE}/me", key)
        watchlist = client.get(f"{BASE}/watchlist", key)
        pair = client.get(f"{BASE}/pair/BTC/ETH", key)
    assert me.status_code == 200 and me.json()["email"] == "trader@example.com"
    assert watchlist.status_code == 200
    assert [(i["a"], i["b"]) for i in watchlist.json()["items"]] == [("BTC", "ETH")]
    assert pair.status_code == 200, pair.text

    code, out, _ = world.run("data", "sync", "--replace", "NOPE")
    assert code == exits.USAGE and "'NOPE' is not an asset of the universe" in _


def test_replace_all_on_an_unchanged_source_changes_nothing(world):
    _write(world.folder, "BTC", _rows("BTC"))
    _write(world.folder, "ETH", _rows("ETH"))
    assert world.run("data", "sync")[0] == 0
    version = world.version()
    code, out, _ = world.run("data", "sync", "--replace-all")
    assert code == 0
    assert "replaced: BTC: the source's history is the stored one; nothing changed" in out
    assert "replaced: ETH: the source's history is the stored one; nothing changed" in out
    assert world.version() == version


def test_a_move_beyond_the_class_limit_and_the_assets_own_range_is_held(world):
    world.universe.write_text(
        UNIVERSE.replace('ticker = "ETH"', 'ticker = "DOGE"')
        + '\n[[asset]]\nticker = "AAPL"\nsector = "stocks"\nasset_class = "equity"\n'
        + "\n[move_limits]\nequity = 10\n",
        encoding="utf-8",
    )
    _write(world.folder, "BTC", _rows("BTC"))
    _write(world.folder, "DOGE", _rows("DOGE"))
    _write(world.folder, "AAPL", _rows("AAPL"))
    code, out, err = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT, err
    held = [line for line in out.splitlines() if line.startswith("held:")]
    (doge,) = [h for h in held if h.startswith("held: DOGE:")]
    # DOGE/USDT closed 0.0074124 on 2021-01-27 and 0.0364995 on 2021-01-28 (Binance).
    assert doge.startswith("held: DOGE: close moved +85.3 % on 2021-01-02 (")
    assert "; +392.4 % on 2021-01-28 (0.0074124 -> 0.0364995), beyond 8 x its median" in doge
    assert "its class limit of 60 %; its 90 new rows wait, none stored" in doge
    assert doge.endswith(
        "'pairscreen data sync --accept DOGE:2021-01-02,DOGE:2021-01-28' adopts them"
    )
    (aapl,) = [h for h in held if h.startswith("held: AAPL:")]
    assert "-12.9 % on 2020-03-16" in aapl and "its class limit of 10 %" in aapl
    assert not [line for line in out.splitlines() if "BTC" in line and "held" in line]
    assert world.candles_of("DOGE") == [] and world.candles_of("AAPL") == []
    assert len(world.candles_of("BTC")) == 214
    assert "implausible moves held for DOGE, AAPL" in err


def test_future_and_repeated_rows_are_named_and_rows_not_understood_refuse_the_asset(
    world, monkeypatch
):
    monkeypatch.setattr(clock, "now", lambda: datetime(2024, 1, 1, 12, tzinfo=UTC))
    btc = _rows("BTC", through="2023-10-31")
    eth = _rows("ETH", through="2023-10-31")
    _write(
        world.folder,
        "BTC",
        [*btc, btc[-1], btc[-2], "2099-01-01,100000.0,1.0", "2099-01-02,100001.0,1.0"],
    )
    _write(
        world.folder, "ETH", [*eth[:10], "2023-13-01,1800.0,1.0", "2023-06-11,n/a,1.0", *eth[10:]]
    )
    code, out, err = world.run("data", "sync")
    assert code == exits.DATA_CONFLICT, err
    lines = out.splitlines()
    assert (
        "warning: BTC: source rows left out (BTC.csv): 2 dated after the last closed day "
        "2023-12-31 (not closed yet), 2 repeating a day with the same values (stored once)" in lines
    )
    assert (
        "refused: ETH: ETH.csv: 2 rows not understood: line 12: date '2023-13-01' is not a day "
        "of the calendar; line 13: close 'n/a' is not a finite positive number; nothing "
        "written for ETH" in lines
    )
    assert len(world.candles_of("BTC")) == len(btc)
    assert world.candles_of("ETH") == []  # nothing partial: not the real rows either


def test_base_volume_is_stored_as_quote_volume(world):
    _write(world.folder, "BTC", _rows("BTC"))
    _write(world.folder, "ETH", _rows("ETH"))
    assert world.run("data", "sync")[0] == 0
    stored = load_candles()
    for ticker in ("BTC", "ETH"):
        rows = [r.split(",") for r in _rows(ticker)]
        base = np.array([float(r[2]) for r in rows])
        close = np.array([float(r[1]) for r in rows])
        np.testing.assert_allclose(stored[ticker].volume, base * close, rtol=1e-12)
    # 2023-12-31: 23,585.9 BTC traded, at the close of 42,283.58 about 997 M USDT.
    assert stored["BTC"].volume[-1] == pytest.approx(23585.91603 * 42283.58, rel=1e-12)


def test_a_volume_column_without_a_declared_unit_stops_the_sync(world):
    world.universe.write_text(UNIVERSE.replace('volume_unit = "base"\n', ""), encoding="utf-8")
    _write(world.folder, "BTC", _rows("BTC"))
    _write(world.folder, "ETH", _rows("ETH"))
    code, _out, err = world.run("data", "sync")
    assert code == exits.USAGE  # a value of the universe file to fix
    assert err.count("\n") == 1 and "BTC.csv has a volume column: declare its unit" in err


def test_sync_leads_with_how_many_assets_are_stale(world):
    shutil.copy(REAL / "BTC.csv", world.folder / "BTC.csv")
    _write(world.folder, "ETH", _rows("ETH", through="2023-09-30"))
    assert world.run("data", "sync")[0] == 0
    code, out, _ = world.run("data", "sync")
    first = out.splitlines()[0]
    assert code == 0
    assert first.startswith("2 of 2 assets are stale; the oldest is ETH, last close 2023-09-30")
    assert "already up to date" not in out and "no new candles" in out
