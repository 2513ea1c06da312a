"""Peg sampling on an hourly universe, end to end (issue 36): a gold token synced from an
hourly csv file into the database, its reference (XAU) served by a local HTTP server through
the ``http_json`` peg source, sampled by ``sample_pegs`` as the worker does.

``PAXG.csv`` holds 40 hourly bars closing 2023-03-30T01:00Z … 2023-03-31T16:00Z, close
``2640 + k / 2``; the reference answers 2650.5 at the (pinned) time of the request.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.bar_sync import sync_bars
from pairscreen.pegs.sampling import sample_pegs
from pairscreen.runtime import Runtime
from tests.test_hourly_screen import pin
from tests.test_peg_sources import server  # noqa: F401 (the fixture, by name)

FIRST_CLOSE = datetime(2023, 3, 30, 1, tzinfo=UTC)
BARS = 40  # the last closes 2023-03-31T16:00Z


def paxg_close(k: int) -> float:
    return 2640 + k / 2


@pytest.fixture()
def gold(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: str,  # noqa: F811
    empty_database_url: str,
) -> Iterator[Runtime]:
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "36500")  # samples of 2023
    prices = tmp_path / "prices"
    prices.mkdir()
    rows = [
        f"{(FIRST_CLOSE + timedelta(hours=k)).strftime('%Y-%m-%dT%H:%M:%SZ')},{paxg_close(k)}"
        for k in range(BARS)
    ]
    (prices / "PAXG.csv").write_text("timestamp,close\n" + "\n".join(rows) + "\n")
    universe = tmp_path / "universe.toml"
    universe.write_text(
        '[market]\nbar = "1h"\n\n[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\n\n'
        f'[peg_sources.http_json]\nurl = "{server}/ok/{{reference}}"\n'
        'json_path = "data.price"\ntimestamp_path = "data.time"\n\n'
        '[[asset]]\nticker = "PAXG"\nsector = "gold"\nasset_class = "tokenized_metal"\n'
        'peg = { reference = "XAU", sources = ["http_json"] }\n',
        encoding="utf-8",
    )
    pin(monkeypatch, "2023-04-01T06:30:00Z")  # every bar of the file has closed
    rt = build_runtime(
        load_settings(
            data_dir=tmp_path,
            database_url=empty_database_url,
            universe=universe,
        )
    )
    with database.connection_context():
        assert sync_bars(rt.universe, rt.plugins).inserted == {"PAXG": BARS}
    try:
        yield rt
    finally:
        database.close()


def test_a_peg_sample_on_an_hourly_universe_takes_the_tokens_last_closed_bar(
    gold: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin(monkeypatch, "2023-03-31T15:30:00Z")  # the 16:00 bar is still forming
    with database.connection_context():
        (reading,) = sample_pegs(gold, clock.now()).readings
    assert reading.token_observed_at == datetime(2023, 3, 31, 15, tzinfo=UTC)
    assert reading.market_price == paxg_close(BARS - 2)  # the 15:00 bar, not 16:00's
    assert reading.reference_source == "http_json" and reading.reference_price == 2650.5
    assert reading.drift_pct == pytest.approx(100 * (paxg_close(BARS - 2) / 2650.5 - 1))
    assert reading.status == "healthy" and reading.reason == ""


@pytest.mark.parametrize(
    ("now", "bars"),
    [("2023-04-05T16:30:00Z", 120), ("2023-04-05T17:30:00Z", 121)],
)
def test_a_token_whose_bars_stopped_is_unknown_with_its_age_in_bars(
    gold: Runtime, monkeypatch: pytest.MonkeyPatch, now: str, bars: int
) -> None:
    """Its class allows 5 days, 120 hourly bars: reached 120 bars after its last close."""
    pin(monkeypatch, now)
    with database.connection_context():
        (reading,) = sample_pegs(gold, clock.now()).readings
    assert reading.status == "unknown" and reading.drift_pct is None
    assert reading.market_price == paxg_close(BARS - 1)
    assert reading.reason == (
        f"PAXG: token price {bars} bars ({bars} h) old (the 1h bar closing "
        "2023-03-31T16:00:00+00:00; its class allows 5 days)"
    )
