"""Point-in-time screens: ``screen run --as-of D`` reads nothing after ``D``, is stored as
history beside the latest screen, and ``/screens?at=`` serves the screen current at a time."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from urllib.parse import quote

import numpy as np
import peewee
import pytest
from playhouse.migrate import SchemaMigrator, migrate

from pairscreen.db.connection import database
from pairscreen.db.models import (
    Candle,
    DataVersion,
    PegEvent,
    SchemaVersion,
    Screen,
    survivor_keys,
)
from pairscreen.errors import BadRequest
from pairscreen.market.cutoff import candles_until, close_of
from pairscreen.pegs.status import active_depegs
from pairscreen.screen_store.published import stored_payload as stored_text
from pairscreen.screen_views.moments import parse_moment
from pairscreen.screening import screen as screening
from pairscreen.screening.point_in_time import run_screen_as_of

BASE = "/api/v1"


def an_as_of_day(runtime) -> date:  # type: ignore[no-untyped-def]
    """A day 150 days before the newest candle: long enough history, much data after it."""
    with database.connection_context():
        newest = max(c.dates[-1] for c in runtime.candles.get().values())
    return date.fromisoformat(str(newest)) - timedelta(days=150)


def stored_payload(screen_id: int) -> dict:
    with database.connection_context():
        return json.loads(stored_text(screen_id))


def test_candles_until_cuts_every_asset_at_the_day(runtime):
    with database.connection_context():
        candles = runtime.candles.get()
    day = an_as_of_day(runtime)
    cut = candles_until(candles, day)
    assert set(cut) <= set(candles) and cut
    for ticker, series in cut.items():
        assert series.dates[-1] <= np.datetime64(day)
        full = candles[ticker]
        n = len(series.dates)
        assert np.array_equal(full.dates[:n], series.dates)
        assert n == len(full.dates) or full.dates[n] > np.datetime64(day)


def test_prices_after_the_day_do_not_change_the_screen(runtime):
    """No lookahead: every price after D replaced, the same screen as of D, byte for byte."""
    day = an_as_of_day(runtime)
    before = run_screen_as_of(runtime, day, processes=1)
    assert before.n_survivors > 0, "a screen without survivors proves little"
    first = stored_payload(before.screen_id)
    # stored as computed, with ``as_of`` last, in the compact form every screen is stored in:
    # the same fields in the same order, every number the same double (the survivors' JSON
    # is orjson's, which spells a float under 1e-4 without an exponent)
    computed = screening.compute_screen(runtime, close_of(day), processes=1, as_of=day)
    with database.connection_context():
        text = stored_text(before.screen_id)
        keys = Screen.get_by_id(before.screen_id).survivor_keys
    stored = json.loads(text)
    assert stored == {**computed, "as_of": day.isoformat()}
    assert list(stored) == [*computed, "as_of"]
    assert ", " not in text and '": ' not in text  # compact separators
    assert keys == survivor_keys([tuple(s["pair"]) for s in computed["survivors"]])
    rng = np.random.default_rng(7)
    with database.connection_context(), database.atomic():
        later = list(Candle.select().where(Candle.day > day))
        assert len(later) > 1000
        for candle in later:
            Candle.update(close=float(np.exp(rng.uniform(-20, 20)))).where(
                (Candle.ticker == candle.ticker) & (Candle.day == candle.day)
            ).execute()
        DataVersion.update(version=DataVersion.version + 1).where(
            DataVersion.name == "candles"
        ).execute()
    runtime.candles.invalidate()
    after = run_screen_as_of(runtime, day, processes=1)
    assert stored_payload(after.screen_id) == first
    with database.connection_context():
        assert Screen.select().where(Screen.as_of == day).count() == 1  # replaced, not added


def test_as_of_screen_is_history_and_screens_at_serves_it(client, keys, runtime):
    latest = client.get(f"{BASE}/screen/latest", keys.personal).json()
    day = an_as_of_day(runtime)
    summary = run_screen_as_of(runtime, day, processes=1)
    # the latest screen is still the regular one
    assert client.get(f"{BASE}/screen/latest", keys.personal).json() == latest
    historical = client.get(f"{BASE}/screens?at={day.isoformat()}", keys.personal)
    assert historical.status_code == 200
    body = historical.json()
    assert body == stored_payload(summary.screen_id)
    assert body["as_of"] == day.isoformat()
    assert body["generated_at"].startswith((day + timedelta(days=1)).isoformat() + "T00:00:00")
    assert body["data_time"]["newest"].startswith(day.isoformat())
    # just before D's close was final, no screen existed yet
    before = client.get(f"{BASE}/screens?at={day.isoformat()}T23:59:59Z", keys.personal)
    assert before.status_code == 404
    assert "No screen had been published by" in before.text
    at = quote(latest["generated_at"])  # its "+00:00" must not become a space
    now = client.get(f"{BASE}/screens?at={at}", keys.personal).json()
    assert now == latest
    bad = client.get(f"{BASE}/screens?at=yesterday", keys.personal)
    assert bad.status_code == 400 and "query parameter 'at'" in bad.text


def test_screens_at_takes_a_date_time_in_every_common_spelling(client, keys):
    latest = client.get(f"{BASE}/screen/latest", keys.personal).json()
    generated = datetime.fromisoformat(latest["generated_at"]).astimezone(UTC)
    after = generated + timedelta(minutes=2)
    in_paris = after.astimezone(timezone(timedelta(hours=1)))
    spellings = [
        after.strftime("%Y-%m-%dT%H:%M:%SZ"),
        after.strftime("%Y-%m-%dT%H:%M:%S+00:00"),  # unencoded: its "+" arrives as a space
        after.strftime("%Y-%m-%dT%H:%M:%S.250000z"),
        after.strftime("%Y-%m-%d %H:%M:%SZ"),
        after.strftime("%Y-%m-%dT%H:%M"),  # no seconds, no offset: UTC
        in_paris.strftime("%Y-%m-%dT%H:%M:%S") + quote("+01:00"),
        in_paris.strftime("%Y-%m-%dT%H:%M:%S+0100"),
        (after + timedelta(hours=1)).strftime("%Y-%m-%dT%HZ"),  # the hour alone
    ]
    for at in spellings:
        r = client.get(f"{BASE}/screens?at={at}", keys.personal)
        assert r.status_code == 200, (at, r.text)
        assert r.json() == latest, at
    before = (generated - timedelta(days=3650)).strftime("%Y-%m-%dT%H:%M:%S-05:00")
    r = client.get(f"{BASE}/screens?at={before}", keys.personal)
    assert r.status_code == 404 and "No screen had been published by" in r.text
    for bad in ("2025-03-01T25:00:00Z", "2025-03-01T12:00:00+24:00", "20250301T120000Z"):
        r = client.get(f"{BASE}/screens?at={quote(bad)}", keys.personal)
        assert r.status_code == 400 and "query parameter 'at'" in r.text, bad


def test_regular_screens_never_prune_history(runtime):
    day = an_as_of_day(runtime)
    summary = run_screen_as_of(runtime, day, processes=1)
    for _ in range(runtime.settings.screens_kept + 1):
        with database.connection_context():
            screening.run_screen(runtime, processes=1)
    with database.connection_context():
        assert Screen.get_or_none(Screen.id == summary.screen_id) is not None
        regular = Screen.select().where(Screen.as_of.is_null()).count()
    assert regular == runtime.settings.screens_kept


def test_cli_screens_as_of_a_day(cli, runtime):
    day = an_as_of_day(runtime)
    code, out, err = cli("screen", "run", "--as-of", day.isoformat())
    assert code == 0, err
    assert f"as of {day}" in out
    code, _, err = cli("screen", "run", "--as-of", "2099-01-01")
    assert code == 2 and "has not closed yet" in err
    # A day before every stored close is refused in one line, and stores nothing: an empty
    # screen "as of" it would answer /screens?at= for days no screen could have been made.
    with database.connection_context():
        oldest = Candle.select(peewee.fn.MIN(Candle.day)).scalar()
        stored = Screen.select().count()
    before = oldest - timedelta(days=1)
    code, _, err = cli("screen", "run", "--as-of", before.isoformat())
    assert code == 2 and err.count("\n") == 1, err
    assert f"--as-of {before} is before the first stored close, {oldest}" in err
    with database.connection_context():
        assert Screen.select().count() == stored


def test_depegs_are_those_active_at_the_time(runtime):
    """A depeg event counts at a past time when it had begun and was not yet closed."""
    day = an_as_of_day(runtime)
    close = close_of(day)
    with database.connection_context():
        PegEvent.delete().execute()
        past = dict(asset_class="gold", median_drift_pct=2.0, sample_count=10)
        PegEvent.create(  # over before the day's close
            ticker="OLD", first_unhealthy=close - timedelta(days=9),
            last_unhealthy=close - timedelta(days=8), active=False,
            closed_at=close - timedelta(days=8), **past,
        )  # fmt: skip
        PegEvent.create(  # around the day's close, closed since
            ticker="ETH", first_unhealthy=close - timedelta(days=2),
            last_unhealthy=close + timedelta(days=1), active=False,
            closed_at=close + timedelta(days=1), **past,
        )  # fmt: skip
        PegEvent.create(  # began after the day, still active
            ticker="NEW", first_unhealthy=close + timedelta(days=5),
            last_unhealthy=close + timedelta(days=6), **past,
        )  # fmt: skip
        assert set(active_depegs()) == {"NEW"}
        assert set(active_depegs(close)) == {"ETH"}
        assert set(active_depegs(close - timedelta(days=8, hours=12))) == {"OLD"}
    summary = run_screen_as_of(runtime, day, processes=1)
    payload = stored_payload(summary.screen_id)
    assert payload["rejected"]["depeg"] > 0
    assert all("ETH" not in s["pair"] for s in payload["survivors"])


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2025-03-01", datetime(2025, 3, 2, tzinfo=UTC)),  # the end of that UTC day
        ("2025-03-01T12:30:00Z", datetime(2025, 3, 1, 12, 30, tzinfo=UTC)),
        ("2025-03-01T12:30:00", datetime(2025, 3, 1, 12, 30, tzinfo=UTC)),
        ("2025-03-01T12:30:00.5+02:00", datetime(2025, 3, 1, 10, 30, 0, 500000, tzinfo=UTC)),
        ("9999-12-31", datetime.max.replace(tzinfo=UTC)),
    ],
)
def test_at_is_a_date_or_a_date_time(text, moment):
    assert parse_moment(text) == moment


@pytest.mark.parametrize("text", ["yesterday", "2025-13-01", "2025-02-30T00:00:00Z", "2025-3-1"])
def test_a_malformed_at_is_a_bad_request(text):
    with pytest.raises(BadRequest, match="query parameter 'at'"):
        parse_moment(text)


def test_migration_6_adds_as_of_to_an_old_database(runtime, cli):
    """A database from before point-in-time screens: its screens stay the regular ones."""
    table = Screen._meta.table_name
    with database.connection_context():
        migrator = SchemaMigrator.from_database(database.obj)
        fresh = {(c.name, c.null) for c in database.get_columns(table)}
        for index in database.get_indexes(table):
            if "as_of" in index.columns:
                migrate(migrator.drop_index(table, index.name))
        migrate(migrator.drop_column(table, "as_of"))
        SchemaVersion.delete().where(SchemaVersion.version == 6).execute()
        before = Screen.select().count()
    database.close()
    code, out, _ = cli("db", "upgrade")
    assert code == 0 and out.endswith("applied migrations [6]\n")
    with database.connection_context():
        assert {(c.name, c.null) for c in database.get_columns(table)} == fresh
        assert any(i.columns == ["as_of"] for i in database.get_indexes(table))
        assert Screen.select().where(Screen.as_of.is_null()).count() == before > 0
