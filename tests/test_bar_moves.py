"""The implausible-move hold per bar: a bar-to-bar move beyond both 8 times the asset's
typical bar move and its class limit scaled to the bar holds the asset's new bars until
``data sync --accept TICKER:TIME``; real hourly closes sync without a hold.

The real hourly files are tests/fixtures/hourly (Binance 1h closes of March 2023, see its
README); a splice and a halving are made from them here, and a synthetic swinging series
stands for an asset whose every hour moves a lot.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pairscreen.cli import exits
from pairscreen.contracts.bars import bar_size
from pairscreen.db.connection import database, init_database
from pairscreen.market.bar_jumps import scaled_limit_pct
from pairscreen.market.bar_store import load_bars
from pairscreen.market.bar_sync import sync_bars
from tests.support.cli import newcomer_env, run_cli
from tests.test_hourly_bars import at, csv_universe, opened

HOUR = bar_size("1h")


@pytest.fixture()
def sqlite_url(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'bars.sqlite3'}"
    init_database(url)
    yield url
    database.close()


def rows_of(path: Path) -> list[tuple[str, float]]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [(stamp, float(close)) for stamp, close in (line.split(",") for line in lines)]


def write_rows(path: Path, rows: list[tuple[str, float]]) -> None:
    body = "".join(f"{stamp},{close!r}\n" for stamp, close in rows)
    path.write_text("timestamp,close\n" + body, encoding="utf-8")


def test_the_class_limit_is_scaled_by_the_square_root_of_the_span():
    limits = scaled_limit_pct(60.0, np.array([3600, 4 * 3600, 900, 86_400, 3 * 3600, 2 * 86_400]))
    np.testing.assert_allclose(
        limits,
        [60 / math.sqrt(24), 60 / math.sqrt(6), 60 / math.sqrt(96), 60, 60 * math.sqrt(3 / 24), 60],
    )
    assert round(float(limits[0]), 1) == 12.2 and round(float(limits[2]), 1) == 6.1


def test_real_hourly_closes_sync_with_no_hold_and_no_warning(sqlite_url, tmp_path):
    rt = opened(tmp_path, sqlite_url, csv_universe(tmp_path))
    report = sync_bars(rt.universe, rt.plugins)
    assert report.inserted == {"BTC": 527, "ETH": 527, "SOL": 527}
    assert report.holds == () and report.moves == () and report.accepted == ()
    assert not any(line.startswith(("held:", "warning:")) for line in report.lines())


def test_a_spliced_file_is_held_on_a_first_sync_and_nothing_of_it_is_stored(sqlite_url, tmp_path):
    universe_file = csv_universe(tmp_path)
    prices = tmp_path / "prices"
    btc, eth = rows_of(prices / "BTC.csv"), rows_of(prices / "ETH.csv")
    cut = next(i for i, (stamp, _) in enumerate(btc) if stamp == "2023-03-20T01:00:00Z")
    write_rows(prices / "BTC.csv", btc[:cut] + eth[cut:])  # ETH's closes appended to BTC's
    rt = opened(tmp_path, sqlite_url, universe_file)
    report = sync_bars(rt.universe, rt.plugins)
    assert report.needs_review == ("BTC",)
    assert report.inserted == {"ETH": 527, "SOL": 527}
    assert [h.ticker for h in report.holds] == ["BTC"]
    before, after = btc[cut - 1][1], eth[cut][1]
    move = (after / before - 1) * 100
    assert move < -90
    held = next(line for line in report.lines() if line.startswith("held:"))
    assert held.startswith(
        f"held: BTC: close moved {move:+.1f} % into the bar closing 2023-03-20T01:00:00Z "
        f"({before:.10g} -> {after:.10g}), beyond 8 x its median 1h move ("
    )
    assert (
        "over the source's 526 moves) and its class limit of 60 % a day (12.2 % over a 1h "
        "bar); its 527 new bars wait, none stored; after review 'pairscreen data sync "
        "--accept BTC:2023-03-20T01:00:00Z' adopts it"
    ) in held
    with database.connection_context():
        assert set(load_bars(HOUR)) == {"ETH", "SOL"}


def test_a_crash_is_held_then_accepted_in_one_command(tmp_path, monkeypatch):
    """On the command line: a later file whose BTC halves from one hour to the next is
    held (exit 7, nothing of BTC written), accepted by the move's key, and verified history
    afterwards."""
    universe_file = csv_universe(tmp_path, tickers=("BTC", "SOL"))
    argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(universe_file), "--quiet")
    at("2023-03-25T00:30:00Z", monkeypatch)  # newcomer_env hands the pinned clock over
    first = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert first.returncode == exits.OK, first.stderr
    assert "csv: 718 new 1h bars for 2 assets through 2023-03-25T00:00:00Z" in first.stdout

    btc_file = tmp_path / "prices" / "BTC.csv"
    rows = rows_of(btc_file)
    crash = next(i for i, (stamp, _) in enumerate(rows) if stamp == "2023-03-28T01:00:00Z")
    halved = rows[:crash] + [(stamp, close / 2) for stamp, close in rows[crash:]]
    write_rows(btc_file, halved)
    at("2023-04-01T00:30:00Z", monkeypatch)
    held = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert held.returncode == exits.DATA_CONFLICT
    before, after = halved[crash - 1][1], halved[crash][1]
    line = next(x for x in held.stdout.splitlines() if x.startswith("held: BTC"))
    assert line.startswith(
        f"held: BTC: close moved -50.0 % into the bar closing 2023-03-28T01:00:00Z "
        f"({before:.10g} -> {after:.10g}), beyond 8 x its median 1h move ("
    )
    assert "over its 358 stored moves) and its class limit of 60 % a day" in line
    assert "its 168 new bars wait, none stored" in line
    assert held.stderr.strip() == (
        "pairscreen: error: implausible moves held for BTC: nothing was written for it (see above)"
    )
    assert "csv: 168 new 1h bars for 1 asset through 2023-04-01T00:00:00Z" in held.stdout

    wrong = run_cli(*argv, "data", "sync", "--accept", "BTC:2023-03-28", env=newcomer_env(tmp_path))
    assert wrong.returncode == exits.USAGE and wrong.stderr.count("\n") == 1
    assert "is not a bar's close time" in wrong.stderr

    nothing = run_cli(
        *argv, "data", "sync", "--accept", "BTC:2023-03-28T02:00Z", env=newcomer_env(tmp_path)
    )
    assert nothing.returncode == exits.DATA_CONFLICT
    assert (
        "warning: --accept BTC:2023-03-28T02:00:00Z: no move of BTC into that bar is held; "
        "nothing accepted"
    ) in nothing.stdout.splitlines()

    accepted = run_cli(
        *argv, "data", "sync", "--accept", "btc:2023-03-28T01:00Z", env=newcomer_env(tmp_path)
    )
    assert accepted.returncode == exits.OK, accepted.stderr
    assert (
        f"accepted: BTC: close moved -50.0 % into the bar closing 2023-03-28T01:00:00Z "
        f"({before:.10g} -> {after:.10g}), accepted by --accept BTC:2023-03-28T01:00:00Z; stored"
    ) in accepted.stdout.splitlines()
    assert "csv: 168 new 1h bars for 1 asset through 2023-04-01T00:00:00Z" in accepted.stdout

    again = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert again.returncode == exits.OK, again.stdout
    assert "held:" not in again.stdout and "accepted:" not in again.stdout
    url = f"sqlite:///{tmp_path / 'data' / 'pairscreen.sqlite3'}"
    init_database(url)
    try:
        with database.connection_context():
            stored = load_bars(HOUR)["BTC"]
    finally:
        database.close()
    np.testing.assert_array_equal(stored.close, [close for _, close in halved])


def test_a_swinging_asset_above_the_scaled_limit_is_stored_and_named(sqlite_url, tmp_path):
    """An asset whose every hour moves 9 % either way (synthetic) is within its own range
    when an hour moves 15 %: above the class's 12.2 % an hour, below 8 x its typical hour;
    stored, with a warning, as a day's move is."""
    universe_file = csv_universe(tmp_path, tickers=("SOL",))
    start = int(datetime(2023, 3, 10, 1, tzinfo=UTC).timestamp())
    closes, close = [], 10.0
    for i in range(200):
        close *= 1.15 if i == 150 else (1.09 if i % 2 else 1 / 1.09)
        closes.append((f"{np.datetime64(start + 3600 * i, 's')}Z", close))
    write_rows(tmp_path / "prices" / "SOL.csv", closes)
    rt = opened(tmp_path, sqlite_url, universe_file)
    report = sync_bars(rt.universe, rt.plugins)
    assert report.inserted == {"SOL": 200} and report.holds == ()
    (moves,) = report.moves
    assert moves.count == 1
    before, after = closes[149][1], closes[150][1]
    assert report.lines()[1] == (
        f"warning: SOL: close moved +15.0 % into the bar closing {closes[150][0]} "
        f"({before:.10g} -> {after:.10g}), above its limit of 60 % a day (12.2 % over a 1h "
        "bar); stored"
    )
