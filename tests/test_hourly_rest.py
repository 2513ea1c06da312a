"""The rest of the service on an hourly universe (issue 36): the verdict endpoint, the CSV
export, ``screen run --as-of`` with a timestamp, notifications and the Dask executor.

The universe and its clock are ``tests/test_hourly_screen.py``'s (Binance BTC, ETH, SOL
hourly closes of tests/fixtures/hourly plus a seeded mean-reverting ``ETHX``, the clock pinned
at 2023-04-01T06:30Z, six and a half hours after the last bar's close).
"""

from __future__ import annotations

import csv
import io

import pytest

from pairscreen.db.connection import database
from pairscreen.screening.screen import run_screen
from tests.conftest import make_client
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
    assert {row["backtest_history_days"] for row in rows} == {"7"}
