"""The implausible-move hold per bar: a 24-hour move beyond both 8 times the asset's typical
24-hour move and its class limit (percent a day) holds the asset's new bars, the largest
bar-to-bar move inside it named, until ``data sync --accept TICKER:TIME``; real hourly
closes sync without a hold.

The real hourly files are tests/fixtures/hourly (Binance 1h closes of March 2023, see its
README); a splice and a crash are made from them here. Two synthetic series (a seeded random
walk of 2 % a day, a swing of about 50 % a day) stand for histories longer than the
fixtures' 22 days, which a typical move needs (30 days).
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
from pairscreen.market.bar_jumps import window_starts
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


def test_a_window_starts_at_the_last_bar_a_day_before_gaps_included():
    hour = 3600
    times = np.array([0, 1, 2, 23, 24, 25, 30, 60], dtype=np.int64) * hour
    # 24 h before 24 h is 0 h; before 25 h, 1 h; before 30 h, 6 h: the last bar at or before
    # it is 2 h; before 60 h, 36 h: 30 h. Younger than a day: the first bar.
    assert window_starts(times).tolist() == [0, 0, 0, 0, 0, 1, 2, 6]


def write_walk(path: Path, days: int, seed: int) -> list[tuple[str, float]]:
    """A seeded hourly random walk of about 2 % a day, closing from 2023-01-01T01:00Z."""
    rng = np.random.default_rng(seed)
    start = int(datetime(2023, 1, 1, 1, tzinfo=UTC).timestamp())
    closes = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02 / math.sqrt(24), days * 24)))
    rows = [(f"{np.datetime64(start + 3600 * i, 's')}Z", float(c)) for i, c in enumerate(closes)]
    write_rows(path, rows)
    return rows


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
    window_before = btc[cut - 24][1]
    window = (after / window_before - 1) * 100
    assert held == (
        f"held: BTC: close moved {move:+.1f} % into the bar closing 2023-03-20T01:00:00Z "
        f"({before:.10g} -> {after:.10g}), {window:+.1f} % over the 24 h to "
        f"2023-03-20T01:00:00Z ({window_before:.10g} -> {after:.10g}), beyond its class limit "
        "of 60 % a day (its typical 24 h move is unknown: the source's 503 24 h moves span "
        "less than 30 days); its 527 new bars wait, none stored; after review 'pairscreen "
        "data sync --accept BTC:2023-03-20T01:00:00Z' adopts it"
    )
    with database.connection_context():
        assert set(load_bars(HOUR)) == {"ETH", "SOL"}


def test_a_crash_is_held_then_accepted_in_one_command(tmp_path, monkeypatch):
    """On the command line: a later file whose BTC loses three quarters from one hour to the
    next is held (exit 7, nothing of BTC written), accepted by the move's key, and verified
    history afterwards."""
    universe_file = csv_universe(tmp_path, tickers=("BTC", "SOL"))
    argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(universe_file), "--quiet")
    at("2023-03-25T00:30:00Z", monkeypatch)  # newcomer_env hands the pinned clock over
    first = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert first.returncode == exits.OK, first.stderr
    assert "csv: 718 new 1h bars for 2 assets through 2023-03-25T00:00:00Z" in first.stdout

    btc_file = tmp_path / "prices" / "BTC.csv"
    rows = rows_of(btc_file)
    crash = next(i for i, (stamp, _) in enumerate(rows) if stamp == "2023-03-28T01:00:00Z")
    crashed = rows[:crash] + [(stamp, close / 4) for stamp, close in rows[crash:]]
    write_rows(btc_file, crashed)
    at("2023-04-01T00:30:00Z", monkeypatch)
    held = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert held.returncode == exits.DATA_CONFLICT
    before, after = crashed[crash - 1][1], crashed[crash][1]
    day_before = crashed[crash - 24][1]
    bar_move = (
        f"{(after / before - 1) * 100:+.1f} % into the bar closing 2023-03-28T01:00:00Z "
        f"({before:.10g} -> {after:.10g}), "
        f"{(after / day_before - 1) * 100:+.1f} % over the 24 h to 2023-03-28T01:00:00Z "
        f"({day_before:.10g} -> {after:.10g})"
    )
    held_line = next(x for x in held.stdout.splitlines() if x.startswith("held:"))
    assert held_line == (
        f"held: BTC: close moved {bar_move}, beyond its class limit of 60 % a day (its typical "
        "24 h move is unknown: its 503 stored and new 24 h moves span less than 30 days); its "
        "168 new bars wait, none stored; after review 'pairscreen data sync --accept "
        "BTC:2023-03-28T01:00:00Z' adopts it"
    )
    assert held.stderr.strip().splitlines()[-1] == (
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
        f"accepted: BTC: close moved {bar_move}, accepted by --accept BTC:2023-03-28T01:00:00Z; "
        "stored"
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
    np.testing.assert_array_equal(stored.close, [close for _, close in crashed])


def test_a_jump_beyond_the_typical_day_of_a_long_history_is_held_and_accepted(
    sqlite_url, tmp_path, monkeypatch
):
    """40 stored days: the typical 24-hour move is known, and the held line says so."""
    universe_file = csv_universe(tmp_path, tickers=("SOL",))
    sol = tmp_path / "prices" / "SOL.csv"
    rows = write_walk(sol, 42, seed=7)
    stored_rows, later = rows[: 40 * 24], rows[40 * 24 :]
    write_rows(sol, stored_rows)
    at("2023-03-01T00:00:00Z", monkeypatch)
    rt = opened(tmp_path, sqlite_url, universe_file)
    first = sync_bars(rt.universe, rt.plugins)
    assert first.inserted == {"SOL": 960} and first.holds == () and first.moves == ()
    jump = 10  # the 11th new bar closes three times higher, and stays there
    tripled = later[:jump] + [(stamp, close * 3) for stamp, close in later[jump:]]
    write_rows(sol, stored_rows + tripled)
    report = sync_bars(rt.universe, rt.plugins)
    assert report.inserted == {} and report.needs_review == ("SOL",)
    (hold,) = report.holds
    (move,) = hold.moves
    assert move.key == f"SOL:{tripled[jump][0]}" and round(move.move_pct) == 200
    stored_closes = np.array([c for _, c in stored_rows])
    day_moves = np.abs(np.log(stored_closes[24:]) - np.log(stored_closes[:-24]))
    typical = float(np.expm1(np.median(day_moves))) * 100
    assert (
        f"beyond 8 x its median 24 h move ({typical:.2f} % over its 936 stored 24 h moves) and "
        "its class limit of 60 % a day; its 48 new bars wait"
    ) in hold.describe()
    accepted = sync_bars(rt.universe, rt.plugins, accept=[move.key])
    assert accepted.inserted == {"SOL": 48} and accepted.holds == ()
    (adopted,) = accepted.accepted
    assert adopted.describe().endswith(f"accepted by --accept {move.key}; stored")


def test_a_swinging_asset_above_the_limit_is_stored_and_named(sqlite_url, tmp_path, monkeypatch):
    """An asset that swings about 50 % a day (synthetic, 40 days) is within its own range
    when a day moves 65 %: above the class's 60 %, below 8 x its typical day; stored, with a
    warning, as a day's move is."""
    universe_file = csv_universe(tmp_path, tickers=("SOL",))
    start = int(datetime(2023, 1, 1, 1, tzinfo=UTC).timestamp())
    hours = np.arange(40 * 24)
    closes = 10.0 * np.exp(0.25 * np.sin(2 * np.pi * hours / 48))  # 24 h moves up to +65 %
    rows = [
        (f"{np.datetime64(start + 3600 * int(i), 's')}Z", float(c))
        for i, c in zip(hours, closes, strict=True)
    ]
    write_rows(tmp_path / "prices" / "SOL.csv", rows)
    at("2023-03-01T00:00:00Z", monkeypatch)
    rt = opened(tmp_path, sqlite_url, universe_file)
    report = sync_bars(rt.universe, rt.plugins)
    assert report.inserted == {"SOL": 960} and report.holds == ()
    (moves,) = report.moves
    assert len(moves.moves) > 1
    warning = next(line for line in report.lines() if line.startswith("warning: SOL"))
    assert warning.startswith("warning: SOL: close moved ")
    assert warning.endswith(
        f"and {len(moves.moves) - 1} more, above its limit of 60 % a day; stored"
    )
    largest = max(moves.moves, key=lambda m: abs(m.window_pct))
    assert 60 < largest.window_pct < 65


def test_replace_adopts_a_held_history_and_names_its_moves_as_accepted(sqlite_url, tmp_path):
    universe_file = csv_universe(tmp_path, tickers=("BTC", "ETH"))
    prices = tmp_path / "prices"
    btc, eth = rows_of(prices / "BTC.csv"), rows_of(prices / "ETH.csv")
    cut = next(i for i, (stamp, _) in enumerate(btc) if stamp == "2023-03-20T01:00:00Z")
    write_rows(prices / "BTC.csv", btc[:cut] + eth[cut:])
    rt = opened(tmp_path, sqlite_url, universe_file)
    assert [h.ticker for h in sync_bars(rt.universe, rt.plugins).holds] == ["BTC"]
    adopted = sync_bars(rt.universe, rt.plugins, replace=["BTC"])
    assert adopted.inserted == {"BTC": 527} and adopted.holds == ()
    assert adopted.replaced == ("BTC",)
    (acceptance,) = adopted.accepted
    assert acceptance.describe().startswith(
        "BTC: close moved " + f"{(eth[cut][1] / btc[cut - 1][1] - 1) * 100:+.1f} % into the bar "
        "closing 2023-03-20T01:00:00Z"
    )
    assert acceptance.describe().endswith("accepted by --replace; stored")
    assert f"accepted: {acceptance.describe()}" in adopted.lines()
