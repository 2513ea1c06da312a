"""Lags in bars on an hourly universe (issue 36): staleness and ``data_behind`` measured from
a last bar's close to the newest close, in bars and time, whatever UTC day either falls on.

The universe is ``tests/test_hourly_screen.py``'s (real Binance BTC, ETH, SOL hourly closes
and the seeded ``ETHX``) with ``ETHX``'s file cut after the bar closing 2023-03-31T10:00Z:
five bars before the others at 15:00 the same day, 14 bars before their last bar
(2023-04-01T00:00Z). Crypto's limit is 2 days, 48 hourly bars.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.bar_sync import sync_bars
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from tests.conftest import make_client
from tests.test_hourly_screen import pin, write_universe

ETHX_LAST = "2023-03-31T10:00:00+00:00"


def cut_ethx(folder: Path) -> None:
    """Drop ``ETHX``'s rows after its bar closing 2023-03-31T10:00Z."""
    path = folder / "prices" / "ETHX.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [lines[0]] + [row for row in lines[1:] if row[:19] <= "2023-03-31T10:00:00"]
    assert kept[-1].startswith("2023-03-31T10:00:00")
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")


@pytest.fixture()
def lagging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_database_url: str
) -> Iterator[tuple[Runtime, str]]:
    """The universe with ``ETHX`` cut, synced (at the suite's hourly clock) into a fresh
    database (PostgreSQL when the suite has a server)."""
    pin(monkeypatch)
    write_universe(tmp_path)
    cut_ethx(tmp_path)
    rt = build_runtime(
        load_settings(
            data_dir=tmp_path,
            database_url=empty_database_url,
            universe=tmp_path / "universe.toml",
        )
    )
    with database.connection_context():
        assert not sync_bars(rt.universe, rt.plugins).needs_review
        accounts.create_user("lags@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("lags@example.com")
    try:
        yield rt, key
    finally:
        database.close()


def _get(rt: Runtime, key: str, path: str, **headers: str) -> Any:
    client = make_client(rt)
    with client.client:
        r = client.get(f"/api/v1{path}", key, headers=headers or None)  # validated
    assert r.status_code == 200, r.text
    return r


def test_a_survivor_five_bars_behind_on_the_same_day_is_behind_in_bars_and_seconds(
    lagging: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, key = lagging
    pin(monkeypatch, "2023-03-31T15:30:00Z")  # the newest close is 15:00, ETHX's 10:00
    with database.connection_context():
        run_screen(rt)
    latest = _get(rt, key, "/screen/latest").json()
    assert latest["data_time"]["newest"] == "2023-03-31T15:00:00+00:00"
    by_pair = {"/".join(sorted(s["pair"])): s for s in latest["survivors"]}
    lagged = by_pair["ETH/ETHX"]
    assert lagged["data_time"] == ETHX_LAST
    assert lagged["data_behind"] is True and lagged["data_behind_days"] == 0  # the same UTC day
    assert lagged["data_behind_bars"] == 5 and lagged["data_behind_seconds"] == 5 * 3600
    current = [s for s in latest["survivors"] if "ETHX" not in s["pair"]]
    for s in current:  # the pairs without ETHX end at the newest close
        assert (s["data_behind"], s["data_behind_bars"], s["data_behind_seconds"]) == (False, 0, 0)

    pairs = _get(rt, key, "/pairs").json()["pairs"]
    listed = next(p for p in pairs if {p["a"], p["b"]} == {"ETH", "ETHX"})
    assert (listed["data_behind"], listed["data_behind_days"]) == (True, 0)
    assert (listed["data_behind_bars"], listed["data_behind_seconds"]) == (5, 18000)

    a, b = lagged["pair"]
    verdict = _get(rt, key, f"/screen/latest/pairs/{a}/{b}").json()
    assert verdict["data_time"] == ETHX_LAST and verdict["bar"] == "1h"
    assert verdict["data_behind"] is True and verdict["data_behind_days"] == 0
    assert (verdict["data_behind_bars"], verdict["data_behind_seconds"]) == (5, 18000)

    text = _get(rt, key, "/screen/latest", Accept="text/csv").text
    header = text.splitlines()[0].split(",")
    at = header.index("data_behind_days")
    assert header[at + 1 : at + 3] == ["data_behind_bars", "data_behind_seconds"]
    row = next(r for r in csv.DictReader(io.StringIO(text)) if r["pair"] == f"{a}/{b}")
    assert (row["data_behind"], row["data_behind_days"]) == ("true", "0")
    assert (row["data_behind_bars"], row["data_behind_seconds"]) == ("5", "18000")


@pytest.mark.parametrize(
    ("now", "bars", "stale"),
    [
        ("2023-04-02T09:30:00Z", 47, False),  # 47 h: within crypto's 2 days
        ("2023-04-02T10:30:00Z", 48, True),  # 2 days of bars: the limit reached
        ("2023-04-02T11:30:00Z", 49, True),
    ],
)
def test_an_hourly_asset_is_stale_once_its_bars_behind_reach_its_class_limit_in_time(
    lagging: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch, now: str, bars: int, stale: bool
) -> None:
    rt, key = lagging
    pin(monkeypatch, now)
    assets = {a["ticker"]: a for a in _get(rt, key, "/assets").json()["assets"]}
    ethx, btc = assets["ETHX"], assets["BTC"]
    assert ethx["bar"] == "1h" and ethx["last_bar_close"] == ETHX_LAST
    assert ethx["bars_behind"] == bars and ethx["behind_seconds"] == bars * 3600
    assert ethx["stale"] is stale and ethx["stale_after_days"] == 2
    # BTC's last bar (2023-04-01T00:00Z) belongs to the same UTC day as ETHX's, 14 bars later:
    # a rule in whole days could not tell them apart
    assert ethx["last_close"] == btc["last_close"] == "2023-03-31"
    assert ethx["age_days"] == btc["age_days"] == 2
    assert btc["bars_behind"] == bars - 14 and btc["stale"] is False
    assert btc["first_close"] == "2023-03-10" and btc["history_days"] == 22

    with database.connection_context():
        run_screen(rt)
    verdict = _get(rt, key, "/screen/latest/pairs/ETH/ETHX").json()
    snapshot = _get(rt, key, "/pair/ETH/ETHX").json()
    said = f"stale: ETHX has no 1h bar since {ETHX_LAST} ({bars} bars, {bars} h)"
    if stale:
        assert verdict["filter_reason"] == said
        assert snapshot["filter_reason"] == said and snapshot["passes_filter"] is False
    else:
        assert not verdict["filter_reason"].startswith("stale")
        assert not snapshot["filter_reason"].startswith("stale")
