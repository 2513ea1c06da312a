"""A peg sample is one new observation, and nothing stays active after its data ends.

On real daily closes (``tests/fixtures/peg_observations/README.md``: Binance PAXG/USDT
against the GLD gold ETF, 10.72 GLD shares per PAXG), sampled every hour with the clock at
each hour as the worker would: a day's close is one sample however often it is read, so one
day beyond the threshold (2023-09-29) or five (2023-07-17 to 21) open no event and a sixth
does; an event whose reference stops is over as ``stale`` once the older price passes the
class's 5-day limit, in the database, ``/peg-events``, ``/assets`` and the depeg e-mail; a
price from a bar that has not closed is never used; a backfill says how many samples it
wrote.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.contracts import Asset, Candles, PegConfig
from pairscreen.db.connection import connect, database
from pairscreen.db.models import Outbox, PegEvent, PegSample
from pairscreen.notify import channels
from pairscreen.notify.depeg_alerts import DepegAlertsPlugin
from pairscreen.pegs.sampling import SamplingReport, read_peg, sample_pegs
from pairscreen.runtime import Runtime
from pairscreen.universe import Universe
from pairscreen.wording import plural
from tests.conftest import make_client
from tests.test_peg_sources import peg_runtime

FIXTURES = Path(__file__).parent / "fixtures" / "peg_observations"
SHARES_PER_PAXG = 10.72  # see the fixture's README: the market's ratio of 2023-H1
PAXG = Asset("PAXG", "gold", "tokenized_metal", peg=PegConfig("GLD", ("csv",), SHARES_PER_PAXG))
H = timedelta(hours=1)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def paxg_closes(replaced: dict[str, float] | None = None) -> Candles:
    """The real PAXG closes; ``replaced`` puts a constructed close on a day (a test says so)."""
    with (FIXTURES / "PAXG.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    closes = [float((replaced or {}).get(r["date"], r["close"])) for r in rows]
    dates = np.array([r["date"] for r in rows], dtype="datetime64[D]")
    return Candles("PAXG", dates, np.array(closes), np.full(len(rows), np.nan))


def gld_closes() -> dict[str, float]:
    with (FIXTURES / "refs" / "GLD.csv").open(encoding="utf-8") as handle:
        return {r["timestamp"]: float(r["price"]) for r in csv.DictReader(handle)}


def gld_reference(folder: Path, through: str = "2023-12-31") -> Path:
    """The real GLD rows up to ``through`` in ``folder``/GLD.csv (a reference that ends)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [(day, price) for day, price in gld_closes().items() if day <= through]
    text = "timestamp,price\n" + "".join(f"{day},{price!r}\n" for day, price in rows)
    (folder / "GLD.csv").write_text(text, encoding="utf-8")
    return folder


def gold_runtime(
    tmp_path: Path, refs: Path, candles: Candles, *extra: object, **csv_options: object
) -> Runtime:
    universe = Universe(
        assets=(Asset("BTC", "majors"), PAXG),
        market_source="csv",
        peg_source_options={"csv": {"folder": str(refs), **csv_options}},
    )
    return peg_runtime(tmp_path, universe, *extra, candles={"PAXG": candles})


def hourly(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch, start: datetime, end: datetime
) -> list[SamplingReport]:
    """Sample every hour from ``start`` to ``end``, the clock at each hour, as the worker."""
    reports = []
    moment = start
    while moment <= end:
        monkeypatch.setattr(clock, "now", lambda moment=moment: moment)
        reports.append(sample_pegs(rt, moment))
        moment += H
    return reports


def unhealthy_samples() -> list[PegSample]:
    return list(
        PegSample.select().where(PegSample.status == "unhealthy").order_by(PegSample.sampled_at)
    )


def test_one_day_of_real_drift_is_read_24_times_stored_once_and_opens_no_event(
    tmp_path, monkeypatch
):
    """GLD closed 2023-09-29 1.42 % below PAXG's close. Every hour of the Saturday compares
    those two closes again: 24 unhealthy readings, one sample, no event (before, they were
    24 samples over 23 hours, a "sustained" depeg)."""
    rt = gold_runtime(tmp_path, gld_reference(tmp_path / "refs"), paxg_closes())
    reports = hourly(rt, monkeypatch, at("2023-09-25T00:00"), at("2023-10-02T23:00"))

    readings = [r.readings[0] for r in reports]
    unhealthy = [r for r in readings if r.status == "unhealthy"]
    assert len(readings) == 192 and len(unhealthy) == 24
    assert len({r.drift_pct for r in unhealthy}) == 1  # the same two closes every time
    assert unhealthy[0].drift_pct == pytest.approx(1.418, abs=0.001)
    (sample,) = unhealthy_samples()
    assert sample.sampled_at == at("2023-09-30T00:00")
    # the close of 2023-09-29 (24:00 UTC) against GLD's bar of that day, observed at its end
    assert sample.token_observed_at == sample.reference_observed_at == at("2023-09-30T00:00")
    # one sample per new close: 8 days, 8 samples (the weekend's are unknown: GLD is shut)
    assert PegSample.select().count() == 8
    assert sum(r.inserted for r in reports) == 8
    assert PegEvent.select().count() == 0


def test_five_days_of_real_drift_open_no_event_and_a_sixth_does(tmp_path, monkeypatch):
    """2023-07-17 to 21: five trading days 1.28 to 1.52 % below GLD, five samples: no event.
    Then a constructed sixth day (PAXG's close of Monday 2023-07-24 put 1.5 % below GLD; it
    was 0.47 % below) makes six samples over seven days: the event opens."""
    refs = gld_reference(tmp_path / "refs")
    rt = gold_runtime(tmp_path, refs, paxg_closes())
    hourly(rt, monkeypatch, at("2023-07-12T00:00"), at("2023-07-26T00:00"))
    assert [s.sampled_at.date() for s in unhealthy_samples()] == [
        date(2023, 7, d) for d in (18, 19, 20, 21, 22)
    ]
    assert PegEvent.select().count() == 0

    monday = gld_closes()["2023-07-24"] * SHARES_PER_PAXG * 0.985
    rt = gold_runtime(tmp_path / "b", refs, paxg_closes({"2023-07-24": monday}))
    reports = hourly(rt, monkeypatch, at("2023-07-12T00:00"), at("2023-07-26T00:00"))
    changes = [(r.sampled_at, c) for r in reports for c in r.changes]
    assert [(t, c.change, c.ended) for t, c in changes] == [
        (at("2023-07-25T00:00"), "opened", ""),
        (at("2023-07-26T00:00"), "closed", "recovered"),  # the real 07-25 close: -0.56 %
    ]
    event = changes[0][1]
    assert (event.first_unhealthy, event.last_unhealthy) == (
        at("2023-07-18T00:00"),
        at("2023-07-25T00:00"),
    )
    assert event.sample_count == 6
    assert event.median_drift_pct == pytest.approx(-1.49, abs=0.02)
    (row,) = PegEvent.select()
    assert not row.active and row.ended == "recovered" and row.end_reason == ""


def test_an_event_whose_reference_ends_is_stale_not_active(tmp_path, monkeypatch):
    """The six-day event above, but GLD's rows end with 2023-07-24 (observed 07-25 00:00)
    while PAXG keeps trading: the event stays active within the class's 5 days, then is over
    as ``stale``, with the reason, in the database, ``/peg-events``, ``/assets`` and the
    e-mail of the Pro user who asked for every depeg alert; never "back on its peg"."""
    monday = gld_closes()["2023-07-24"] * SHARES_PER_PAXG * 0.985
    refs = gld_reference(tmp_path / "refs", through="2023-07-24")
    rt = gold_runtime(tmp_path, refs, paxg_closes({"2023-07-24": monday}), DepegAlertsPlugin())
    monkeypatch.setattr(clock, "now", lambda: at("2023-07-12T00:00"))
    accounts.create_user("pro@example.com", "pro", lifetime=True)
    key = accounts.rotate_key("pro@example.com")
    channels.set_channels("pro@example.com", depeg_alerts=True)
    database.close()

    hourly(rt, monkeypatch, at("2023-07-12T00:00"), at("2023-07-29T23:00"))
    (row,) = PegEvent.select()
    assert row.active  # 07-29 23:00: the reference is 4 days 23 hours old
    client = make_client(rt)
    with client.client:
        events = client.get("/api/v1/peg-events", key).json()["events"]
        assert [e["ticker"] for e in events] == ["PAXG"]
        assert events[0]["reference_observed_at"] == "2023-07-25T00:00:00+00:00"
        assert events[0]["token_observed_at"] == "2023-07-29T00:00:00+00:00"

        reports = hourly(rt, monkeypatch, at("2023-07-30T00:00"), at("2023-07-31T00:00"))
        closed = [(r.sampled_at, c) for r in reports for c in r.changes]
        reason = (  # the close of 07-24 on 07-30: 6 days, as /assets counts a close's age
            "PAXG: reference GLD last observed 2023-07-25T00:00:00+00:00, 6 days ago "
            "(its class allows 5 days)"
        )
        assert [(t, c.change, c.ended, c.end_reason) for t, c in closed] == [
            (at("2023-07-30T01:00"), "closed", "stale", reason)
        ]
        row = PegEvent.get()
        assert (row.active, row.ended, row.end_reason) == (False, "stale", reason)
        assert row.closed_at == at("2023-07-30T00:00")  # when its reference passed 5 days

        body = client.get("/api/v1/peg-events", key).json()
        assert body["events"] == []
        assets = client.get("/api/v1/assets", key).json()["assets"]
        peg = {a["ticker"]: a["peg"] for a in assets}["PAXG"]
        assert peg["status"] == "unknown" and peg["active_event"] is False
        assert peg["drift_pct"] is None and peg["unhealthy_since"] is None
        assert peg["reason"] == (  # read on 07-31
            "PAXG: reference GLD last observed 2023-07-25T00:00:00+00:00, 7 days ago "
            "(its class allows 5 days)"
        )
        assert peg["reference_observed_at"] == "2023-07-25T00:00:00+00:00"
        assert peg["token_observed_at"] == "2023-07-31T00:00:00+00:00"

    with database.connection_context():
        rows = Outbox.select().order_by(Outbox.id)
        mails = [(json.loads(r.payload), r.subject, r.text) for r in rows]
    assert [m[0]["event"] for m in mails] == ["depeg.opened", "depeg.closed"]
    payload, subject, text = mails[1]
    assert payload["ended"] == "stale" and payload["end_reason"] == reason
    assert subject.startswith("Depeg alert: PAXG's depeg can no longer be checked")
    assert not text.startswith("PAXG is back on its peg")
    assert "Whether it is back on its peg is unknown." in text and reason in text


def test_a_price_from_a_bar_that_has_not_closed_is_not_used(tmp_path, monkeypatch):
    """At 2023-09-29 15:00 the reference file already has a row dated that day and the
    candles a close dated that day: neither bar has closed, so the comparison is of
    2023-09-28's closes (the row dated today would have read +1.42 %, a false alarm)."""
    now = at("2023-09-29T15:00")
    monkeypatch.setattr(clock, "now", lambda: now)
    refs = gld_reference(tmp_path / "refs", through="2023-09-29")
    candles = paxg_closes()
    rt = gold_runtime(tmp_path, refs, candles)

    reading = read_peg(rt, PAXG, now, {"PAXG": candles})
    gld = gld_closes()
    assert reading.market_price == 1871.0  # the close of 2023-09-28, not 1864 of the 29th
    assert reading.reference_price == pytest.approx(gld["2023-09-28"] * SHARES_PER_PAXG)
    assert reading.token_observed_at == reading.reference_observed_at == at("2023-09-29T00:00")
    assert reading.status == "healthy"

    # Even a source that allows a day of skew never pairs the open bar with yesterday's close.
    rt = gold_runtime(tmp_path / "skew", refs, candles, max_skew_hours=24)
    skewed = read_peg(rt, PAXG, now, {"PAXG": candles})
    assert skewed.reference_price == pytest.approx(gld["2023-09-28"] * SHARES_PER_PAXG)
    assert skewed.status == "healthy"


def test_a_backfill_says_how_many_samples_it_wrote(cli, database_url, monkeypatch):
    """``peg sample --backfill-hours 24`` on the demo database: the count it prints is the
    number of rows the whole backfill added (26 sampling times of the demo's tokens, whose
    intraday prices are new every hour), not the last run's; sampling a time again adds
    none and says so."""
    now = at("2026-11-20T09:30")
    monkeypatch.setattr(clock, "now", lambda: now)

    def stored() -> int:
        connect(database_url)
        try:
            return PegSample.select().count()
        finally:
            database.close()

    before = stored()
    argv = (
        "peg",
        "sample",
        "--no-sync",
        "--quiet",
        "--backfill-hours",
        "24",
        "--at",
        "2026-11-20T09:30",
    )
    code, out, err = cli(*argv)
    assert code == 0, err
    written = stored() - before
    tokens = sum(1 for line in out.splitlines() if " drift " in line)
    assert tokens > 1 and written == 26 * tokens
    assert out.splitlines()[-1].startswith(
        "peg backfill of 26 sampling times from 2026-11-19T09:00:00+00:00 to "
        f"2026-11-20T09:30:00+00:00: {written} new samples, 0 expired; "
    )

    code, out, err = cli("peg", "sample", "--no-sync", "--quiet", "--at", "2026-11-20T09:30")
    assert code == 0, err
    assert f"{tokens} tokenized assets (" in out and ", 0 new samples, 0 expired" in out
    assert stored() == before + written
    assert (plural(1, "new sample"), plural(2, "sample")) == ("1 new sample", "2 samples")


def test_migration_21_adds_the_moments_and_an_older_sample_counts_as_observed_when_taken(
    tmp_path, monkeypatch
):
    from playhouse.migrate import SchemaMigrator, migrate

    from pairscreen.db.migrations import upgrade
    from pairscreen.db.models import SchemaVersion

    rt = gold_runtime(tmp_path, gld_reference(tmp_path / "refs"), paxg_closes())
    migrator = SchemaMigrator.from_database(database.obj)
    added = {
        PegSample._meta.table_name: ["token_observed_at", "reference_observed_at"],
        PegEvent._meta.table_name: ["ended", "end_reason"],
    }
    for table, columns in added.items():  # a database from before migration 21
        for column in columns:
            migrate(migrator.drop_column(table, column))
    SchemaVersion.delete().where(SchemaVersion.version == 21).execute()
    assert upgrade() == [21]
    for table, columns in added.items():
        assert set(columns) <= {c.name for c in database.get_columns(table)}

    # A sample stored before the migration has no moments: it counts as observed when taken,
    # so the close it already compared (2023-09-25's, final at 09-26 00:00) is not new.
    PegSample.create(
        ticker="PAXG", sampled_at=at("2023-09-26T05:00"), status="healthy", threshold_pct=1.0
    )
    monkeypatch.setattr(clock, "now", lambda: at("2023-09-26T06:00"))
    assert sample_pegs(rt, at("2023-09-26T06:00")).inserted == 0
    monkeypatch.setattr(clock, "now", lambda: at("2023-09-27T00:00"))
    assert sample_pegs(rt, at("2023-09-27T00:00")).inserted == 1
    assert PegSample.select().count() == 2
