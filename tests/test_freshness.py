"""Every number says how old it is, and stale prices are rejected rather than ranked.

A csv universe whose exports end on different days, read on a Sunday: a fresh crypto pair,
a crypto asset whose file stopped 40 days ago, and a tokenized stock whose last close is
Friday's (not stale over a weekend). Everything is checked over HTTP against the contract.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.cli import main
from pairscreen.config import load_settings
from pairscreen.db.connection import database, init_database
from pairscreen.market.sync import load_candles, sync_candles
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from pairscreen.universe import UniverseError, load_universe_file
from tests.conftest import ContractClient, Keys, make_client

SUNDAY = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
FRIDAY = date(2026, 11, 20)
YESTERDAY = date(2026, 11, 21)
OLD_END = date(2026, 10, 13)  # 40 days before SUNDAY
DAYS = 400
STALE_REASON = "stale: OLD has no close since 2026-10-13 (40 days)"


def _series(end: date, seed: int) -> str:
    """``DAYS`` daily closes ending on ``end``, plus a row for SUNDAY itself (still forming)."""
    rng = np.random.default_rng(seed)
    n = DAYS
    log_price = np.cumsum(rng.normal(0, 0.02, n)) + 5
    rows = [
        f"{end - timedelta(days=n - 1 - i)},{np.exp(v):.6f},{1000 + i}\n"
        for i, v in enumerate(log_price)
    ]
    if end == YESTERDAY:
        rows.append(f"{SUNDAY.date()},1.0,1\n")  # today's forming candle: never stored
    return "date,close,volume\n" + "".join(rows)


@pytest.fixture()
def universe_file(tmp_path: Path) -> Path:
    prices = tmp_path / "prices"
    prices.mkdir()
    (prices / "BASE.csv").write_text(_series(YESTERDAY, 1), encoding="utf-8")
    (prices / "WAVE.csv").write_text(_series(YESTERDAY, 2), encoding="utf-8")
    (prices / "OLD.csv").write_text(_series(OLD_END, 3), encoding="utf-8")
    (prices / "EQX.csv").write_text(_series(FRIDAY, 4), encoding="utf-8")
    path = tmp_path / "universe.toml"
    path.write_text(
        '[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\nvolume_unit = "quote"\n\n'
        '[[asset]]\nticker = "BASE"\nsector = "x"\n\n'
        '[[asset]]\nticker = "WAVE"\nsector = "x"\n\n'
        '[[asset]]\nticker = "OLD"\nsector = "x"\n\n'
        '[[asset]]\nticker = "EQX"\nsector = "x"\nasset_class = "tokenized_equity"\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture()
def frozen(monkeypatch: pytest.MonkeyPatch) -> datetime:
    monkeypatch.setattr(clock, "now", lambda: SUNDAY)
    return SUNDAY


@pytest.fixture()
def rt(universe_file: Path, tmp_path: Path, frozen: datetime) -> Iterator[Runtime]:
    settings = load_settings(
        data_dir=tmp_path,
        database_url=f"sqlite:///{tmp_path / 'f.sqlite3'}",
        universe=universe_file,
    )
    init_database(settings.database_url)
    runtime = build_runtime(settings)
    sync_candles(runtime.universe, runtime.plugins)
    with database.connection_context():
        run_screen(runtime)
    yield runtime
    database.close()


@pytest.fixture()
def personal_key(rt: Runtime) -> str:
    from pairscreen.access import accounts

    with database.connection_context():
        accounts.create_user("p@example.com", "personal", expires=SUNDAY + timedelta(days=30))
        return accounts.rotate_key("p@example.com")


@pytest.fixture()
def http(rt: Runtime) -> Iterator[ContractClient]:
    c = make_client(rt)
    with c.client:
        yield c


def test_only_closed_days_are_stored(rt: Runtime) -> None:
    candles = load_candles()
    assert candles["BASE"].dates[-1] == np.datetime64(YESTERDAY, "D")
    assert all(c.dates[-1] < np.datetime64(SUNDAY.date(), "D") for c in candles.values())


def test_stale_pairs_are_rejected_and_counted(
    rt: Runtime, http: ContractClient, personal_key: str
) -> None:
    screen = http.get("/api/v1/screen/latest", personal_key).json()
    assert screen["rejected"]["stale"] == 3  # OLD with each of the three others
    assert next(iter(screen["rejected"])) == "stale"
    assert all("OLD" not in s["pair"] for s in screen["survivors"])
    assert screen["data_time"] == {
        "newest": "2026-11-21T00:00:00+00:00",
        "oldest": "2026-10-13T00:00:00+00:00",
    }


def test_every_survivor_says_how_old_its_numbers_are(client: ContractClient, keys: Keys) -> None:
    """The demo screen: the survivors' numbers end on the last closed day."""
    screen = client.get("/api/v1/screen/latest", keys.personal).json()
    last_closed = clock.today() - timedelta(days=1)
    assert screen["survivors"]
    for survivor in screen["survivors"]:
        assert survivor["data_time"] == f"{last_closed}T00:00:00+00:00"
    assert screen["data_time"]["newest"] == f"{last_closed}T00:00:00+00:00"


def test_snapshot_of_a_stale_pair_answers_with_the_reason(
    http: ContractClient, personal_key: str
) -> None:
    stale = http.get("/api/v1/pair/OLD/BASE", personal_key)
    assert stale.status_code == 200
    body = stale.json()
    assert body["passes_filter"] is False
    assert body["filter_reason"] == STALE_REASON
    assert body["data_time"] == "2026-10-13T00:00:00+00:00"
    weekend = http.get("/api/v1/pair/EQX/BASE", personal_key).json()
    assert not weekend["filter_reason"].startswith("stale")
    assert weekend["data_time"] == "2026-11-20T00:00:00+00:00"


def test_asset_list_says_how_old_each_asset_is(
    http: ContractClient, personal_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    response = http.get("/api/v1/assets", personal_key)
    assert response.status_code == 200
    body = response.json()
    by_ticker = {a["ticker"]: a for a in body["assets"]}
    assert list(by_ticker) == ["BASE", "WAVE", "OLD", "EQX"] and body["count"] == 4
    assert by_ticker["OLD"]["stale"] is True and by_ticker["OLD"]["last_close"] == "2026-10-13"
    assert by_ticker["OLD"]["age_days"] == 40
    eqx = by_ticker["EQX"]
    assert eqx["stale"] is False and eqx["last_close"] == "2026-11-20"
    assert eqx["stale_after_days"] == 5 and eqx["peg"]["status"] == "unknown"
    base = by_ticker["BASE"]
    assert base["last_close"] == "2026-11-21" and base["history_days"] == DAYS
    assert base["first_close"] == str(YESTERDAY - timedelta(days=DAYS - 1))
    assert base["peg"] is None and base["stale"] is False
    monday = SUNDAY + timedelta(days=1)
    monkeypatch.setattr(clock, "now", lambda: monday)  # a new UTC day: rendered again
    again = {a["ticker"]: a for a in http.get("/api/v1/assets", personal_key).json()["assets"]}
    assert again["OLD"]["age_days"] == 41 and again["EQX"]["age_days"] == 3
    unknown = http.get("/api/v1/pair/NOPE/BASE", personal_key)
    assert unknown.status_code == 404 and "/assets" in unknown.text


def test_data_sync_names_the_stale_asset(
    universe_file: Path, tmp_path: Path, frozen: datetime, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    try:
        assert main(["--database-url", url, "--universe", str(universe_file), "data", "sync"]) == 0
    finally:
        database.close()
    out = capsys.readouterr().out
    assert "newest close 2026-11-21, oldest last close 2026-10-13" in out
    assert "stale: OLD (last close 2026-10-13)" in out
    assert "EQX" not in out.split("stale:")[1]


def test_staleness_table_is_validated(universe_file: Path) -> None:
    text = universe_file.read_text(encoding="utf-8")
    universe_file.write_text(text + "\n[staleness]\ncrypto = 3\n", encoding="utf-8")
    universe = load_universe_file(universe_file)
    assert universe.staleness["crypto"] == 3 and universe.staleness["tokenized_metal"] == 5
    for bad, message in (("stocks = 3", "not an asset class"), ("crypto = 0", "at least 1")):
        universe_file.write_text(text + f"\n[staleness]\n{bad}\n", encoding="utf-8")
        with pytest.raises(UniverseError, match=message):
            load_universe_file(universe_file)


def test_serve_says_how_fresh_the_data_is_at_start_up(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pairscreen.cli import listening, serving

    served: list[int] = []
    monkeypatch.setattr(serving, "export_settings", lambda settings: None)
    monkeypatch.setattr(
        serving, "run_server", lambda listener, workers=1, **_options: served.append(workers)
    )
    # Any free port: the default one may be taken on this machine.
    monkeypatch.setattr(serving, "bind_port", lambda host, port: listening.bind_port(host, 0))
    argv = [
        "--database-url",
        rt.settings.database_url,
        "--universe",
        str(rt.settings.universe_path),
    ]
    try:
        assert main([*argv, "serve"]) == 0
    finally:
        database.close()
    out = capsys.readouterr().out
    assert served
    assert (
        "prices: csv: newest close 2026-11-21, oldest last close 2026-10-13; "
        "stale: OLD (last close 2026-10-13)"
    ) in out
