"""The peg sampler: market price, storage per (ticker, time), retention, the job record, and
stale references at a weekend."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from pairscreen_plugins.demo_market.model import demo_reference_daily

from pairscreen import clock, hookimpl
from pairscreen.config import load_settings
from pairscreen.contracts import Asset, Candles, PegConfig
from pairscreen.db.models import JobRun, PegEvent, PegSample
from pairscreen.pegs.sampling import read_peg, sample_pegs
from pairscreen.pegs.status import PEG_JOB, peg_status, unhealthy_since
from pairscreen.universe import Universe
from tests.test_peg_sources import daily, peg_runtime

AAPLX = Asset("AAPLx", "equities", "tokenized_equity", peg=PegConfig("AAPL", ("demo",), 1.0, 1.5))


def equity_universe() -> Universe:
    # The market's daily close (24:00 UTC) and a quote during the next session are hours
    # apart: these tests allow a day's skew to look at the drift itself.
    return Universe(
        assets=(Asset("BTC", "majors"), AAPLX),
        market_source="csv",
        peg_source_options={"demo": {"max_skew_hours": 24}},
    )


def aapl_candles(through: str, premium: dict[str, float]) -> dict[str, Candles]:
    """AAPLx daily closes: AAPL's demo closes times ``1 + premium`` on the given days."""
    dates, closes = demo_reference_daily("AAPL", datetime.fromisoformat(through).date(), days=30)
    factors = np.array([1 + premium.get(str(d), 0.0) for d in dates])
    return {"AAPLx": Candles("AAPLx", dates, closes * factors, np.ones(len(dates)))}


@pytest.fixture(autouse=True)
def keep_old_samples(monkeypatch):
    """Most tests sample dates in 2025: keep them whatever today is."""
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "36500")


def test_a_weekend_of_stale_equity_references_never_raises_a_depeg(tmp_path):
    """The token drifts 8 % over the weekend while the stock market is closed: every sample
    is unknown (the last close is stale), none unhealthy; the same drift on a weekday during
    the session is unhealthy."""
    candles = aapl_candles("2025-03-10", {"2025-03-08": 0.08, "2025-03-09": 0.08})
    rt = peg_runtime(tmp_path, equity_universe(), candles=candles)
    saturday = datetime(2025, 3, 8, tzinfo=UTC)
    for hour in range(48):
        sample_pegs(rt, saturday + timedelta(hours=hour))
    statuses = {s.status for s in PegSample.select()}
    assert statuses == {"unknown"}
    assert PegEvent.select().count() == 0 and unhealthy_since("AAPLx") is None
    assert peg_status(AAPLX, rt.universe)["status"] == "unknown"
    # Monday: the market price is Sunday's close (+8 %), the reference fresh in the session
    monday = read_peg(rt, AAPLX, datetime(2025, 3, 10, 16, tzinfo=UTC), candles)
    assert monday.status == "unhealthy" and monday.drift_pct > 1.5
    assert monday.reference_source == "demo"


def test_one_sample_per_ticker_and_time_the_first_one_stays(tmp_path):
    candles = {"AAPLx": daily("AAPLx", "2025-03-05", [240.0, 241.0])}
    rt = peg_runtime(tmp_path, equity_universe(), candles=candles)
    at = datetime(2025, 3, 5, 16, 0, 30, 123456, tzinfo=UTC)
    first = sample_pegs(rt, at)
    assert first.inserted == 1 and first.sampled_at == at.replace(microsecond=0)
    rt.candles.candles = {"AAPLx": daily("AAPLx", "2025-03-05", [999.0, 241.0])}
    again = sample_pegs(rt, at)
    assert again.inserted == 0
    (row,) = PegSample.select()
    assert row.market_price == 240.0  # the first sample of that time is kept
    assert row.sampled_at == at.replace(microsecond=0)


def test_retention_deletes_old_samples(tmp_path, monkeypatch):
    monkeypatch.setattr(clock, "now", lambda: datetime(2025, 3, 5, 16, tzinfo=UTC))
    candles = {"AAPLx": daily("AAPLx", "2025-03-05", [240.0, 241.0])}
    rt = peg_runtime(tmp_path, equity_universe(), candles=candles)
    old = clock.now() - timedelta(days=3)
    PegSample.create(ticker="AAPLx", sampled_at=old, status="healthy", threshold_pct=1.5)
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "2")
    rt.settings = load_settings(data_dir=tmp_path, database_url=rt.settings.database_url)
    report = sample_pegs(rt)
    assert report.expired == 1
    assert [s.sampled_at for s in PegSample.select()] == [report.sampled_at]
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "0")
    with pytest.raises(
        ValueError,
        match="PAIRSCREEN_PEG_RETENTION_DAYS must be a whole number, at least 1, got '0'",
    ):
        load_settings()
    monkeypatch.delenv("PAIRSCREEN_PEG_RETENTION_DAYS")
    assert load_settings().peg_retention_days == 90


def test_the_run_is_recorded_for_checked_at(tmp_path):
    rt = peg_runtime(tmp_path, equity_universe())
    before = clock.now().replace(microsecond=0)
    report = sample_pegs(rt, datetime(2025, 3, 5, 16, tzinfo=UTC))
    run = JobRun.get_by_id(PEG_JOB)
    assert run.finished_at >= before  # when it ran, not the time it sampled
    assert report.readings[0].status == "unknown"  # no candles: no market price
    assert "1 unknown" in report.summary() and "active depeg events: none" in report.summary()


def test_a_tokenized_asset_without_peg_configuration_is_unknown(tmp_path):
    bare = Asset("USTB", "treasury", "tokenized_treasury")
    universe = Universe(assets=(bare,), market_source="csv")
    candles = {"USTB": daily("USTB", "2025-03-05", [10.0, 10.1])}
    rt = peg_runtime(tmp_path, universe, candles=candles)
    (reading,) = sample_pegs(rt, datetime(2025, 3, 5, 12, tzinfo=UTC)).readings
    assert (reading.status, reading.threshold_pct, reading.market_price) == ("unknown", 0.5, 10.0)


class IntradayMarket:
    """A peg source named like the market source that also knows intraday token prices."""

    name = "exchange"
    max_age = timedelta(hours=1)

    def __init__(self, price):
        self.price = price

    def reference_price(self, reference, at, options):
        return None

    def market_price(self, asset, at, options):
        if isinstance(self.price, Exception):
            raise self.price
        return self.price


class Provides:
    def __init__(self, source):
        self.source = source

    @hookimpl
    def pairscreen_register_peg_sources(self):
        return [self.source]


def test_the_market_price_is_intraday_when_the_market_source_offers_one(tmp_path, caplog):
    universe = Universe(assets=(AAPLX,), market_source="exchange")
    candles = {"AAPLx": daily("AAPLx", "2025-03-05", [240.0, 241.0])}
    at = datetime(2025, 3, 5, 16, tzinfo=UTC)
    rt = peg_runtime(tmp_path, universe, Provides(IntradayMarket(243.5)), candles=candles)
    assert read_peg(rt, AAPLX, at, candles).market_price == 243.5
    rt = peg_runtime(
        tmp_path, universe, Provides(IntradayMarket(RuntimeError("feed down"))), candles=candles
    )
    with caplog.at_level(logging.WARNING):
        assert read_peg(rt, AAPLX, at, candles).market_price == 240.0  # the last full day
    assert "feed down" in caplog.text
    rt = peg_runtime(tmp_path, universe, Provides(IntradayMarket(float("nan"))), candles=candles)
    assert read_peg(rt, AAPLX, at, candles).market_price == 240.0
