"""The implausible-move hold per bar: a UTC day's move, or a single bar's, beyond both 8
times the asset's typical day and its class limit (percent a day) holds the asset's new
bars, a bar-to-bar move named, until ``data sync --accept TICKER:TIME``; real hourly closes
sync without a hold.

The real hourly files are tests/fixtures/hourly (Binance 1h closes of March 2023, see its
README); a splice and a crash are made from them here. Two synthetic series (a seeded random
walk of 2 % a day, a swing of 35 % a day) stand for histories longer than the fixtures' 22
days, which a typical day needs (30 daily moves).
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
from pairscreen.market.bar_jumps import day_ends
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


def test_a_day_ends_at_its_last_bar_when_the_midnight_bar_is_missing():
    hour = 3600
    # Bars closing 22:00, 23:00 and 24:00 of day 0, then 01:00 of day 1 after a gap at
    # 24:00 of day 1 (a missing midnight bar): day 1 ends at 23:00, day 2's first bar follows.
    times = np.array([22, 23, 24, 25, 47, 49], dtype=np.int64) * hour
    assert day_ends(times).tolist() == [False, False, True, False, True, True]


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
    assert held == (
        f"held: BTC: close moved {move:+.1f} % into the bar closing 2023-03-20T01:00:00Z "
        f"({before:.10g} -> {after:.10g}), beyond its class limit of 60 % a day (its typical "
        "day is unknown: the source's 21 daily moves, 30 needed); its 527 new bars wait, none "
        "stored; after review 'pairscreen data sync --accept BTC:2023-03-20T01:00:00Z' "
        "adopts it"
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
    bar_move = (
        f"{(after / before - 1) * 100:+.1f} % into the bar closing 2023-03-28T01:00:00Z "
        f"({before:.10g} -> {after:.10g})"
    )
    held_line = next(x for x in held.stdout.splitlines() if x.startswith("held:"))
    assert held_line == (
        f"held: BTC: close moved {bar_move}, beyond its class limit of 60 % a day (its typical "
        "day is unknown: its 21 stored and new daily moves, 30 needed); its 168 new bars wait, "
        "none stored; after review 'pairscreen data sync --accept BTC:2023-03-28T01:00:00Z' "
        "adopts it"
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
    daily_closes = np.array([c for _, c in stored_rows])[23::24]  # the bars closing at 00:00Z
    typical = float(np.expm1(np.median(np.abs(np.diff(np.log(daily_closes)))))) * 100
    assert (
        f"beyond 8 x its median daily move ({typical:.2f} % over its 39 stored daily moves) "
        "and its class limit of 60 % a day; its 48 new bars wait"
    ) in hold.describe()
    accepted = sync_bars(rt.universe, rt.plugins, accept=[move.key])
    assert accepted.inserted == {"SOL": 48} and accepted.holds == ()
    (adopted,) = accepted.accepted
    assert adopted.describe().endswith(f"accepted by --accept {move.key}; stored")


def test_a_swinging_asset_above_the_limit_is_stored_and_named(sqlite_url, tmp_path, monkeypatch):
    """An asset that moves 35 % every day, up then down (synthetic, 40 days, each day's move
    spread evenly over its hours), is within its own range when a day moves 65 %: above the
    class's 60 %, below 8 x its typical day; stored, with a warning, as a day's move is."""
    universe_file = csv_universe(tmp_path, tickers=("SOL",))
    day_moves = [0.3 if day % 2 else -0.3 for day in range(40)]
    day_moves[20] = 0.5  # +64.9 % in a day
    hourly = np.repeat(np.array(day_moves) / 24, 24)
    closes = 10.0 * np.exp(np.cumsum(hourly))
    start = int(datetime(2023, 1, 1, 1, tzinfo=UTC).timestamp())
    rows = [(f"{np.datetime64(start + 3600 * i, 's')}Z", float(c)) for i, c in enumerate(closes)]
    write_rows(tmp_path / "prices" / "SOL.csv", rows)
    at("2023-03-01T00:00:00Z", monkeypatch)
    rt = opened(tmp_path, sqlite_url, universe_file)
    report = sync_bars(rt.universe, rt.plugins)
    assert report.inserted == {"SOL": 960} and report.holds == ()
    (moves,) = report.moves
    (move,) = moves.moves
    assert move.window_end == start + 3600 * (21 * 24 - 1)  # the day's last bar, 00:00Z
    assert round(move.window_pct, 1) == 64.9
    warning = next(line for line in report.lines() if line.startswith("warning: SOL"))
    assert warning == (
        f"warning: SOL: close moved {move.describe()}, above its limit of 60 % a day; stored"
    )
    assert ", +64.9 % over the UTC day to 2023-01-22T00:00:00Z (" in warning


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


def test_a_sync_whose_source_stops_before_the_clock_names_its_newest_bar(tmp_path, monkeypatch):
    """The files end at 2023-04-01T00:00Z and the clock has closed bars to 05:00Z: the
    count line says how far the sync asked and, apart, how far the stored bars reach, so
    "through 05:00" is not read as data to 05:00."""
    universe_file = csv_universe(tmp_path, tickers=("BTC", "SOL"))
    argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(universe_file), "--quiet")
    at("2023-04-01T05:30:00Z", monkeypatch)
    done = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert done.returncode == exits.OK, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("csv: "))
    assert line.startswith("csv: ") and "bars for 2 assets through 2023-04-01T05:00:00Z" in line
    assert line.endswith("; the newest stored bar closed 2023-04-01T00:00:00Z"), line
    at("2023-04-01T00:30:00Z", monkeypatch)  # up to date: nothing more to say
    again = run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path))
    assert "newest stored bar" not in again.stdout, again.stdout
