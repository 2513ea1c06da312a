"""Asset classes traders screen besides crypto and tokens: spot metals, equities, ETFs,
indices and currencies. They parse with their own staleness, have no peg (so no peg sample
and no row on the website's Pegs page) and their calendars' pauses are not staleness. Real
closes from tests/fixtures/sync_realdata (see its README)."""

from __future__ import annotations

import itertools
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from pairscreen import ASSET_CLASSES, Asset
from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.freshness import leg_freshness
from pairscreen.market.sync import sync_candles
from pairscreen.pegs.sampling import sample_pegs
from pairscreen.universe import UniverseError, load_universe_file
from tests.conftest import make_client

REAL = Path(__file__).parent / "fixtures" / "sync_realdata"
NEW_CLASSES = ("spot_metal", "equity", "etf", "index", "fx")

UNIVERSE = """
[components]
market_source = "csv"

[plugins.csv_source]
path = "prices"
volume_unit = "base"

[[asset]]
ticker = "PAXG"
sector = "gold"
asset_class = "tokenized_metal"
peg = { reference = "XAU", sources = ["demo"] }

[[asset]]
ticker = "GLD"
sector = "gold"
asset_class = "etf"

[[asset]]
ticker = "AAPL"
sector = "gold"
asset_class = "equity"

[[asset]]
ticker = "XAU"
sector = "gold"
asset_class = "spot_metal"

[[asset]]
ticker = "SPX"
sector = "gold"
asset_class = "index"

[[asset]]
ticker = "EURUSD"
sector = "gold"
asset_class = "fx"
"""


def _universe(tmp_path: Path, text: str = UNIVERSE) -> Path:
    path = tmp_path / "universe.toml"
    path.write_text(text, encoding="utf-8")
    prices = tmp_path / "prices"
    prices.mkdir(exist_ok=True)
    for ticker in ("PAXG", "GLD", "AAPL"):
        shutil.copy(REAL / f"{ticker}.csv", prices / f"{ticker}.csv")
    return path


def test_the_new_classes_parse_with_their_staleness_and_no_peg(tmp_path):
    assert set(NEW_CLASSES) < set(ASSET_CLASSES)
    universe = load_universe_file(_universe(tmp_path))
    classes = {a.ticker: a.asset_class for a in universe.assets}
    assert classes == {
        "PAXG": "tokenized_metal",
        "GLD": "etf",
        "AAPL": "equity",
        "XAU": "spot_metal",
        "SPX": "index",
        "EURUSD": "fx",
    }
    assert [a.ticker for a in universe.assets if a.is_tokenized] == ["PAXG"]
    staleness = {a.ticker: universe.staleness_days(a) for a in universe.assets}
    assert staleness == {"PAXG": 5, "GLD": 5, "AAPL": 5, "XAU": 6, "SPX": 5, "EURUSD": 4}
    limits = {a.ticker: universe.move_limit_pct(a) for a in universe.assets}
    assert limits["AAPL"] == 25.0 and limits["XAU"] == 25.0
    assert universe.move_limit_pct(Asset("BTC", "majors")) == 60.0


@pytest.mark.parametrize("asset_class", NEW_CLASSES)
def test_only_tokenized_assets_have_a_peg(tmp_path, asset_class):
    text = UNIVERSE.replace(
        'asset_class = "etf"', f'asset_class = "{asset_class}"\npeg = {{ reference = "XAU" }}'
    )
    with pytest.raises(UniverseError, match=r"GLD\): only tokenized assets .* have a peg"):
        load_universe_file(_universe(tmp_path, text))


def test_move_limits_and_staleness_tables_take_the_new_classes(tmp_path):
    text = UNIVERSE + "\n[staleness]\nequity = 7\n\n[move_limits]\nfx = 3.5\n"
    universe = load_universe_file(_universe(tmp_path, text))
    assert universe.staleness_days(universe.asset("AAPL")) == 7
    assert universe.move_limit_pct(universe.asset("EURUSD")) == 3.5
    with pytest.raises(UniverseError, match=r"\[move_limits\]: 'bond' is not an asset class"):
        load_universe_file(_universe(tmp_path, UNIVERSE + "\n[move_limits]\nbond = 5\n"))
    with pytest.raises(UniverseError, match="a percent above 0"):
        load_universe_file(_universe(tmp_path, UNIVERSE + "\n[move_limits]\nfx = 0\n"))


def test_weekends_and_holidays_never_read_stale_for_an_equity(tmp_path):
    """Every gap in six years of Apple's real closes (weekends, Good Fridays, a Monday
    holiday after a weekend: Friday to Tuesday), even with the source a day late: on each
    day until the next close is stored, the last close is within the equity default."""
    universe = load_universe_file(_universe(tmp_path))
    aapl = universe.asset("AAPL")
    days = [
        date.fromisoformat(line[:10]) for line in (REAL / "AAPL.csv").read_text().splitlines()[1:]
    ]
    worst = 0
    for last, following in itertools.pairwise(days):
        # the next close is final at 24:00 UTC of its day; a day-late source stores it a
        # day after that
        today = last + timedelta(days=1)
        while today <= following + timedelta(days=1):
            fresh = leg_freshness(universe, aapl, last, today)
            worst = max(worst, fresh.age_days or 0)
            assert not fresh.stale, (last, today)
            today += timedelta(days=1)
    assert worst == 5  # Friday close, Monday holiday, Tuesday's close stored on Thursday
    # A week without a close is stale.
    assert leg_freshness(universe, aapl, days[-1], days[-1] + timedelta(days=6)).stale


def test_non_tokenized_assets_have_no_peg_status_and_are_not_sampled(empty_database_url, tmp_path):
    universe = _universe(tmp_path)
    settings = load_settings(data_dir=tmp_path, database_url=empty_database_url, universe=universe)
    rt = build_runtime(settings)
    try:
        report = sync_candles(rt.universe, rt.plugins)
        assert report.missing == ("XAU", "SPX", "EURUSD")  # no file: nothing stored
        rt.candles.invalidate()
        sampled = sample_pegs(rt)
        assert [r.ticker for r in sampled.readings] == ["PAXG"]
        with database.connection_context():
            accounts.create_user("gold@example.com", "personal", lifetime=True)
            key = accounts.rotate_key("gold@example.com")
        client = make_client(rt)
        with client.client:
            body = client.get("/api/v1/assets", key).json()
        by_ticker = {a["ticker"]: a for a in body["assets"]}
        assert by_ticker["PAXG"]["peg"] is not None
        for ticker in ("GLD", "AAPL", "XAU", "SPX", "EURUSD"):
            assert by_ticker[ticker]["peg"] is None, ticker
        assert by_ticker["GLD"]["asset_class"] == "etf"
        assert by_ticker["AAPL"]["asset_class"] == "equity"
    finally:
        database.close()
