"""Persistence on an hourly universe (issue 36): ``survived_last`` counts the previous screens
that each read an earlier bar, the screens of a worker screening after each bar's close,
not screens a day apart (which on bars would count one screen in 24).

The universe and its clock are ``tests/test_hourly_screen.py``'s; the screens here run at
pinned times on 2023-03-31, inside the stored bars.
"""

from __future__ import annotations

import pytest

from pairscreen.db.connection import database
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from tests.conftest import make_client
from tests.test_hourly_screen import hourly, pin  # noqa: F401 (the fixture, by name)


def test_persistence_counts_one_screen_per_bar_on_an_hourly_universe(
    hourly: tuple[Runtime, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt, key = hourly
    for moment in (
        "2023-03-31T10:30:00Z",  # reads the bar closing 10:00
        "2023-03-31T10:50:00Z",  # the same bar: it replaces the 10:30 screen in the count
        "2023-03-31T11:10:00Z",  # 11:00, twenty minutes later: a new bar, counted
        "2023-03-31T12:05:00Z",  # the screen that counts
    ):
        pin(monkeypatch, moment)
        with database.connection_context():
            run_screen(rt)
    client = make_client(rt)
    with client.client:
        latest = client.get("/api/v1/screen/latest", key)  # validated
        assert latest.status_code == 200, latest.text
        snapshot = client.get("/api/v1/pair/ETH/ETHX", key)
        assert snapshot.status_code == 200, snapshot.text
    body = latest.json()
    assert body["persistence_screens"] == [
        "2023-03-31T11:10:00+00:00",
        "2023-03-31T10:50:00+00:00",
    ]
    survivors = {frozenset(s["pair"]): s for s in body["survivors"]}
    assert survivors[frozenset(("ETH", "ETHX"))]["survived_last"] == 2
    verdicts = snapshot.json()["recent_verdicts"]
    assert [v["generated_at"] for v in verdicts] == [
        "2023-03-31T12:05:00+00:00",
        "2023-03-31T11:10:00+00:00",
        "2023-03-31T10:50:00+00:00",
    ]
    assert all(v["survived"] for v in verdicts)
