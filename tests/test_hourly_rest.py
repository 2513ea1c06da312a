"""The rest of the service on an hourly universe (issue 36): the verdict endpoint, the CSV
export, ``screen run --as-of`` with a timestamp, notifications and the Dask executor.

The universe and its clock are ``tests/test_hourly_screen.py``'s (Binance BTC, ETH, SOL
hourly closes of tests/fixtures/hourly plus a seeded mean-reverting ``ETHX``, the clock pinned
at 2023-04-01T06:30Z, six and a half hours after the last bar's close).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.contracts import Candles
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox, Screen, WatchlistItem
from pairscreen.notify import watchlist
from pairscreen.notify.run import live_positions, run_notifications
from pairscreen.pegs.sampling import read_peg
from pairscreen.screening.screen import compute_screen, run_screen
from pairscreen.screening.snapshot import compute_snapshot
from tests.conftest import make_client
from tests.support.cli import newcomer_env, run_cli
from tests.test_hourly_screen import hourly, pin  # noqa: F401 (the fixture, by name)

# A screen run mid-afternoon: its last bar closes at 15:00, not at a day's 00:00, so a close
# time said as a day would show.
AFTERNOON = "2023-03-31T15:30:00Z"
LAST_CLOSE = "2023-03-31T15:00:00+00:00"


def test_a_pairs_verdict_on_an_hourly_screen_gives_its_last_bars_close_time(
    hourly,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # type: ignore[no-untyped-def]
    rt, key = hourly
    pin(monkeypatch, AFTERNOON)
    with database.connection_context():
        run_screen(rt)
    client = make_client(rt)
    with client.client:
        survivor = client.get("/api/v1/screen/latest/pairs/ETHX/ETH", key)  # validated
        assert survivor.status_code == 200, survivor.text
        rejected = client.get("/api/v1/screen/latest/pairs/BTC/SOL", key)
        assert rejected.status_code == 200, rejected.text
    body = survivor.json()
    assert body["passes_filter"] is True and body["reversed"] is True
    assert body["data_time"] == LAST_CLOSE  # the last bar's close time, not its day
    assert body["bar"] == "1h"
    assert body["data_behind"] is False and body["data_behind_days"] == 0
    other = rejected.json()
    assert other["data_time"] == LAST_CLOSE and other["bar"] == "1h"


def test_the_csv_of_an_hourly_screen_dates_each_survivor_by_its_last_bars_close(
    hourly,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # type: ignore[no-untyped-def]
    rt, key = hourly
    pin(monkeypatch, AFTERNOON)
    with database.connection_context():
        run_screen(rt)
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/screen/latest", key, headers={"Accept": "text/csv"})
        assert r.status_code == 200, r.text
        latest = client.get("/api/v1/screen/latest", key).json()
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [row["pair"] for row in rows] == ["/".join(s["pair"]) for s in latest["survivors"]]
    assert rows and {row["data_time"] for row in rows} == {LAST_CLOSE}
    exported = _cli(rt, "screen", "export", "-")  # the CLI writes the same table
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == r.text.replace("\r\n", "\n")  # read back in text mode
    assert {row["backtest_history_days"] for row in rows} == {"7"}


def _cli(rt, *args: str) -> Any:  # type: ignore[no-untyped-def]
    """``pairscreen`` on the fixture's universe and database, as a newcomer would run it."""
    folder = Path(rt.settings.data_dir)
    env = {**newcomer_env(folder), "DATABASE_URL": rt.settings.database_url}
    argv = ("--data-dir", str(folder), "--universe", str(folder / "universe.toml"), "--quiet")
    return run_cli(*argv, *args, env=env)


def test_screen_run_as_of_a_time_screens_the_bars_closed_by_then(hourly) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    rt, key = hourly
    at_noon = _cli(rt, "screen", "run", "--as-of", "2023-03-30T12:30")  # UTC: no offset given
    assert at_noon.returncode == 0, at_noon.stderr
    assert "as of 2023-03-30T12:00:00+00:00: 6 pairs" in at_noon.stdout, at_noon.stdout
    # a bare date: the bars closed by its end, the last one closing at 00:00 of the next day
    day = _cli(rt, "screen", "run", "--as-of", "2023-03-30")
    assert day.returncode == 0, day.stderr
    assert "as of 2023-03-31T00:00:00+00:00: 6 pairs" in day.stdout, day.stdout
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/screens?at=2023-03-30T13:00:00Z", key)  # validated
        assert r.status_code == 200, r.text
        past = r.json()
        later = client.get("/api/v1/screens?at=2023-03-31T00:00:00Z", key).json()
    assert past["generated_at"] == past["as_of_close"] == "2023-03-30T12:00:00+00:00"
    assert past["as_of"] == "2023-03-30"
    assert past["data_time"]["newest"] == "2023-03-30T12:00:00+00:00"  # no bar after it read
    assert later["as_of_close"] == "2023-03-31T00:00:00+00:00" and later["as_of"] == "2023-03-30"
    # again as of the same bar replaces that screen only
    again = _cli(rt, "screen", "run", "--as-of", "2023-03-30T12:00:00+00:00")
    assert again.returncode == 0, again.stderr
    with database.connection_context():
        closes = sorted(s.generated_at for s in Screen.select().where(Screen.as_of.is_null(False)))
    assert [clock.iso(c.replace(tzinfo=UTC)) for c in closes] == [
        "2023-03-30T12:00:00+00:00",
        "2023-03-31T00:00:00+00:00",
    ]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            "2023-03-30T25:00",
            "--as-of '2023-03-30T25:00' is neither a date (YYYY-MM-DD) nor a UTC time",
        ),
        ("soon", "--as-of 'soon' is neither a date (YYYY-MM-DD) nor a UTC time"),
        ("2023-04-01T07:00Z", "--as-of 2023-04-01T07:00:00+00:00 has not come yet"),
        ("2023-04-01", "--as-of 2023-04-02T00:00:00+00:00 has not come yet"),
        ("2020-01-01", "--as-of 2020-01-02T00:00:00+00:00 is before the first day with stored"),
    ],
)
def test_screen_run_as_of_refuses_nonsense_on_an_hourly_universe_in_one_line(
    hourly,  # noqa: F811
    given: str,
    said: str,
) -> None:  # type: ignore[no-untyped-def]
    rt, _ = hourly
    refused = _cli(rt, "screen", "run", "--as-of", given)
    assert refused.returncode != 0 and refused.stderr.count("\n") == 1, refused.stderr
    assert said in refused.stderr, refused.stderr


def test_a_watched_hourly_pair_entering_a_zone_queues_a_notification_dated_by_its_bar(
    hourly,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # type: ignore[no-untyped-def]
    rt, _ = hourly
    with database.connection_context():
        item = watchlist.add_item(rt.universe, "hourly@example.com", "ETH/ETHX")
        pin(monkeypatch, "2023-03-31T03:30:00Z")  # the ratio mid-band at the 03:00 bar
        mid = live_positions(rt, {("ETH", "ETHX")})[("ETH", "ETHX")]
        assert 0.3 < mid.position < 0.7
        assert run_notifications(rt, at=clock.now()).notifications == 0
        pin(monkeypatch, "2023-03-31T15:30:00Z")  # twelve bars later, near the top
        top = live_positions(rt, {("ETH", "ETHX")})[("ETH", "ETHX")]
        snapshot = compute_snapshot(rt, *rt.universe.pair("ETH", "ETHX"), 7)
        assert top.position == pytest.approx(snapshot["metrics"]["position"], abs=1e-12)
        assert top.data_time.isoformat() == "2023-03-31T15:00:00+00:00" and top.bar == "1h"
        report = run_notifications(rt, at=clock.now())
        assert report.notifications == 1, report.summary()
        assert WatchlistItem.get_by_id(item.id).last_notified_state == "approach_top"
        row = Outbox.get()
    assert "ETH/ETHX is approaching the top zone" in row.text
    assert "Data:      1h bar closing 2023-03-31 15:00 (UTC)" in row.text
    payload = json.loads(row.payload)
    assert payload["data_time"] == "2023-03-31T15:00:00+00:00"
    assert payload["position"] == pytest.approx(top.position, abs=1e-6)


def test_the_dask_executor_screens_an_hourly_universe_as_the_local_one(hourly) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    rt, _ = hourly
    at = clock.now()
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        database.connection_context(),
    ):
        local = compute_screen(rt, at, processes=1)
        on_dask = compute_screen(
            rt, at, chunk_rows=2, executor="dask", scheduler=cluster.scheduler_address
        )
    assert local["bar"] == "1h" and local["n_pairs_screened"] == 6 and local["n_survivors"] > 0
    assert json.dumps(on_dask) == json.dumps(local)


def test_a_peg_reading_on_an_hourly_universe_takes_the_tokens_last_closed_bar(
    tmp_path: Path,
) -> None:
    from tests.test_peg_sampling import AAPLX, equity_universe
    from tests.test_peg_sources import peg_runtime

    universe = replace(equity_universe(), bar="1h")
    dates = np.datetime64("2025-03-05T17", "h") - np.arange(5)[::-1]  # 13:00 ... 17:00 closes
    closes = np.array([240.0, 240.5, 241.0, 241.5, 999.0])
    candles = {"AAPLx": Candles("AAPLx", dates, closes, np.ones(5))}
    rt = peg_runtime(tmp_path, universe, candles=candles)
    at = datetime(2025, 3, 5, 16, 30, tzinfo=UTC)
    reading = read_peg(rt, AAPLX, at, candles)
    # the 16:00 bar: the 17:00 one has not closed at 16:30, a daily reading would take 03-04
    assert reading.market_price == 241.5
    assert reading.token_observed_at == datetime(2025, 3, 5, 16, tzinfo=UTC)
    assert reading.reference_source == "demo" and reading.drift_pct is not None


def test_a_stale_hourly_screen_says_how_many_bars_and_hours_behind_it_is(
    hourly,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # type: ignore[no-untyped-def]
    rt, key = hourly
    with database.connection_context():
        run_screen(rt)  # at 2023-04-01T06:30Z: fresh
    pin(monkeypatch, "2023-04-04T06:30:00Z")  # three days on, no new bar
    client = make_client(rt)
    with client.client:
        r = client.get("/api/v1/screen/latest", key)  # validated
        assert r.status_code == 200, r.text
    body = r.json()
    assert body["stale"] is True
    assert body["stale_reason"] == (
        "This screen's data is stale: its last 1h bar closed 2023-04-01T00:00:00+00:00, "
        "78 bars (78 h) before the last closed bar (the universe allows 2 days for its most "
        "traded assets)."
    )
