"""Honest pegs: a token price is compared with a reference only when both are fresh and were
observed at (nearly) the same moment; otherwise the status is ``unknown`` with a reason and
no depeg event can open. ``/peg-events`` says when pegs were last really checked, or that
they never were; a backfill beyond the retention is refused.

The token prices are real PAXG daily closes (Binance PAXG/USDT, see
``tests/fixtures/stale_closes/README.md``), last one 2023-06-30. The reference quotes are
written by each test: they are the inputs whose moments the tests are about.
"""

from __future__ import annotations

import csv
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.contracts import Asset, Candles, PegConfig
from pairscreen.db.models import PegEvent, PegSample
from pairscreen.pegs.sampling import BeyondRetention, backfill_pegs, read_peg, sample_pegs
from pairscreen.pegs.status import peg_status
from pairscreen.universe import Universe
from tests.conftest import make_client
from tests.test_peg_sources import peg_runtime, write

CLOSES = Path(__file__).parent / "fixtures" / "stale_closes"
PAXG = Asset("PAXG", "gold", "tokenized_metal", peg=PegConfig("XAU", ("csv",), 1.0, 1.0))
LAST_CLOSE = date(2023, 6, 30)  # the fixture's last PAXG close


def real_closes(ticker: str) -> Candles:
    with (CLOSES / f"{ticker}.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    dates = np.array([r["date"] for r in rows], dtype="datetime64[D]")
    closes = np.array([float(r["close"]) for r in rows])
    return Candles(ticker, dates, closes, np.full(len(rows), np.nan))


def gold_universe(refs: Path, **csv_options: object) -> Universe:
    return Universe(
        assets=(Asset("BTC", "majors"), PAXG),
        market_source="csv",
        peg_source_options={"csv": {"folder": str(refs), **csv_options}},
    )


def quotes(path: Path, rows: list[tuple[datetime, float]]) -> None:
    write(path, "timestamp,price\n" + "".join(f"{t.isoformat()},{p}\n" for t, p in rows))


def test_a_token_price_years_old_is_unknown_with_its_age_and_opens_no_event(tmp_path, monkeypatch):
    """The last PAXG close (2023-06-30) against a fresh hourly gold quote 28 % away: before,
    that read as an unhealthy drift and three days of it opened a depeg event. The close is
    one observation: it is stored once, not once an hour."""
    now = datetime(2026, 11, 20, 9, tzinfo=UTC)
    monkeypatch.setattr(clock, "now", lambda: now)
    hours = [now - timedelta(hours=h) for h in range(80, -1, -1)]
    quotes(tmp_path / "refs" / "XAU.csv", [(t, 2650.0) for t in hours])
    candles = {"PAXG": real_closes("PAXG")}
    rt = peg_runtime(tmp_path, gold_universe(tmp_path / "refs"), candles=candles)

    reports = backfill_pegs(rt, 72, now)

    observed = datetime(2023, 7, 1, tzinfo=UTC)  # the close of 2023-06-30: 24:00 UTC
    for report in reports:
        (reading,) = report.readings
        # the age every page says: whole days from the close's day to the sample's UTC day
        age = (report.sampled_at.date() - LAST_CLOSE).days
        expected = f"PAXG: token price {age:,} days old (the close of {LAST_CLOSE}"
        assert reading.status == "unknown" and reading.drift_pct is None
        assert reading.market_price == 1902.0  # the real close, shown but never compared
        assert reading.token_observed_at == observed
        assert reading.reason.startswith(expected), reading.reason
        assert "its class allows 5 days" in reading.reason
    assert [r.inserted for r in reports] == [1] + [0] * 72  # the same close, 73 times
    (row,) = PegSample.select()
    assert row.status == "unknown" and row.sampled_at == now - timedelta(hours=72)
    assert row.token_observed_at == observed and row.reference_observed_at is None
    assert PegEvent.select().count() == 0
    status = peg_status(PAXG, rt.universe)
    assert status["status"] == "unknown" and status["reason"] == (
        f"PAXG: token price last observed 2023-07-01T00:00:00+00:00, "
        f"{(now.date() - LAST_CLOSE).days:,} days ago (its class allows 5 days)"
    )  # the same age as the sample's reason, /assets and the sync: days from the close's day
    assert status["token_observed_at"] == "2023-07-01T00:00:00+00:00"
    assert status["reference_observed_at"] is None
    assert status["active_event"] is False and status["unhealthy_since"] is None
    assert reports[-1].unknown_reasons() == [reports[-1].readings[0].reason]


def test_a_reference_observed_hours_from_the_token_close_is_unknown(tmp_path, monkeypatch):
    """PAXG's close of 2023-06-30 is the price at 24:00 UTC; a gold quote of 21:00 UTC that
    day is another moment (3 hours apart), so nothing is compared. A quote of 24:00 is."""
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "36500")
    candles = {"PAXG": real_closes("PAXG")}
    close_moment = datetime(2023, 7, 1, tzinfo=UTC)
    at = close_moment + timedelta(hours=2)
    monkeypatch.setattr(clock, "now", lambda: at)
    refs = tmp_path / "refs"
    quotes(refs / "XAU.csv", [(close_moment - timedelta(hours=3), 1880.0)])
    rt = peg_runtime(tmp_path, gold_universe(refs), candles=candles)

    skewed = read_peg(rt, PAXG, at, candles)
    assert skewed.status == "unknown" and skewed.drift_pct is None
    assert skewed.reason.startswith("PAXG: no comparable reference price for XAU (csv: ")
    assert "are 3.0 h apart (at most 1.0 h)" in skewed.reason, skewed.reason
    assert "the close of 2023-06-30" in skewed.reason

    quotes(refs / "XAU.csv", [(close_moment, 1880.0)])  # the same moment: compared
    same = read_peg(rt, PAXG, at, candles)
    assert same.status == "unhealthy" and same.reason == ""
    assert same.drift_pct == pytest.approx(100 * (1902.0 / 1880.0 - 1))

    # A source may allow more skew (max_skew_hours): then the 21:00 quote is compared.
    quotes(refs / "XAU.csv", [(close_moment - timedelta(hours=3), 1880.0)])
    rt = peg_runtime(tmp_path, gold_universe(refs, max_skew_hours=4), candles=candles)
    assert read_peg(rt, PAXG, at, candles).status == "unhealthy"

    # Stored with its reason, and shown by the snapshot's peg status.
    rt = peg_runtime(tmp_path, gold_universe(refs), candles=candles)
    sample_pegs(rt, at)
    (row,) = PegSample.select()
    assert row.status == "unknown" and "3.0 h apart" in row.reason
    assert "3.0 h apart" in peg_status(PAXG, rt.universe)["reason"]


def test_a_market_close_time_makes_a_close_comparable_with_a_quote_of_that_time(
    tmp_path, monkeypatch
):
    """``[market] close_time`` declares when the market's daily close is observed: with
    "21:00" the 21:00 quote is the same moment."""
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "36500")
    candles = {"PAXG": real_closes("PAXG")}
    refs = tmp_path / "refs"
    quotes(refs / "XAU.csv", [(datetime(2023, 6, 30, 21, tzinfo=UTC), 1880.0)])
    universe = Universe(
        assets=(PAXG,),
        market_source="csv",
        market_options={"close_time": "21:00"},
        peg_source_options={"csv": {"folder": str(refs)}},
    )
    rt = peg_runtime(tmp_path, universe, candles=candles)
    reading = read_peg(rt, PAXG, datetime(2023, 7, 1, 1, tzinfo=UTC), candles)
    assert reading.status == "unhealthy" and reading.reason == ""


def test_a_backfill_beyond_the_retention_is_refused_and_samples_nothing(tmp_path, monkeypatch):
    now = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
    monkeypatch.setattr(clock, "now", lambda: now)
    quotes(tmp_path / "refs" / "XAU.csv", [(now, 2650.0)])
    rt = peg_runtime(
        tmp_path, gold_universe(tmp_path / "refs"), candles={"PAXG": real_closes("PAXG")}
    )
    assert rt.settings.peg_retention_days == 90
    with pytest.raises(BeyondRetention, match="before the 90-day retention of peg samples"):
        backfill_pegs(rt, 24 * 91, now)
    with pytest.raises(BeyondRetention, match="would be deleted as soon as they were written"):
        sample_pegs(rt, now - timedelta(days=91))
    assert PegSample.select().count() == 0
    # Within the retention: what the run wrote is what it reports, and nothing it wrote goes.
    report = sample_pegs(rt, now - timedelta(days=89))
    assert (report.inserted, report.expired) == (1, 0)
    assert PegSample.select().count() == 1
    assert "1 new sample, 0 expired" in report.summary()


def test_the_backfill_refusal_is_one_line_on_the_command_line(cli):
    code, out, err = cli("peg", "sample", "--no-sync", "--backfill-hours", "2400")
    assert code != 0 and out == ""
    [line] = err.splitlines()
    assert "--backfill-hours 2400 reaches back to" in line
    assert "before the 90-day retention of peg samples" in line


def test_peg_events_on_a_database_that_never_sampled_says_never_checked(empty_runtime):
    from pairscreen.access import accounts
    from pairscreen.db.connection import database

    with database.connection_context():
        accounts.create_user("pro@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("pro@example.com")
    client = make_client(empty_runtime)
    with client.client:
        body = client.get("/api/v1/peg-events", key).json()
    assert body["events"] == []
    assert body["checked_at"] is None and body["compared_at"] is None
    assert body["note"] == (
        "Pegs have never been checked on this service: no peg sample was ever taken."
    )


def test_peg_events_say_when_pegs_were_last_really_compared(runtime, client, keys):
    """After a sampling run ``checked_at`` is that run, ``compared_at`` the newest sample
    that compared a price with a reference (none when every sample was unknown)."""
    from pairscreen.db.connection import database

    with database.connection_context():
        report = sample_pegs(runtime)
    body = client.get("/api/v1/peg-events", keys.pro).json()
    assert body["checked_at"] is not None
    assert body["note"].startswith(f"Pegs were last checked at {body['checked_at']}")
    if any(r.status != "unknown" for r in report.readings):
        assert body["compared_at"] == clock.iso(report.sampled_at)
    else:
        assert body["compared_at"] is None
        assert "no token price was ever compared" in body["note"]
