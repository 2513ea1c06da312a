"""Implausible jumps wait for a person: a spliced tail and a real crash are held (nothing of
the asset's new rows stored, exit 7) until ``data sync --accept TICKER:DAY`` or ``--replace``
adopts them, while real multi-year crypto histories, March 2020 included, sync with no hold.
Real closes: tests/fixtures/csv_rows (Binance BTC and ETH 2018-2023, LINK 2020, Apple 2000, see its
README) and tests/fixtures/sync_realdata (DOGE, January to March 2021)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.cli import exits
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from tests.conftest import make_client
from tests.support.csv_world import CsvWorld, csv_world, real_rows, universe_text

NOW = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)  # 2023-12-31 is the last closed day
BASE = "/api/v1"


def _close(folder: str, ticker: str, day: str) -> float:
    (row,) = real_rows(folder, ticker, since=day, through=day)
    return float(row.split(",")[1])


@pytest.fixture()
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW)


@pytest.fixture()
def crypto(empty_database_url, tmp_path, capsys, pinned) -> Iterator[CsvWorld]:
    yield csv_world(
        empty_database_url, tmp_path, capsys, universe_text(("BTC", "crypto"), ("ETH", "crypto"))
    )
    database.close()


def _held(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("held:")]


def test_real_multi_year_crypto_histories_sync_with_no_hold(crypto):
    """BTC and ETH 2018-2023 hold -39.5 % and -44.6 % on 2020-03-12: far beyond 8 times
    their typical day, within crypto's 60 %. BTC in one first sync, ETH in two (the crash
    judged against its stored history)."""
    crypto.write("BTC", real_rows("csv_rows", "BTC"))
    crypto.write("ETH", real_rows("csv_rows", "ETH", through="2020-03-11"))
    code, out, err = crypto.run("data", "sync")
    assert code == exits.OK, out + err
    crypto.write("ETH", real_rows("csv_rows", "ETH"))
    code, out, err = crypto.run("data", "sync")
    assert code == exits.OK, out + err
    assert not _held(out) and "warning:" not in out
    assert len(crypto.stored("BTC")) == len(crypto.stored("ETH")) == 2191
    assert ("2020-03-12", _close("csv_rows", "ETH", "2020-03-12")) in crypto.stored("ETH")


def test_the_largest_real_crypto_crash_is_stored_as_a_real_day(
    empty_database_url, tmp_path, capsys, pinned
):
    """LINK's -47.8 % of 2020-03-12, the largest one-day fall of the 20 Binance majors of
    2018-2023: beyond 8 x its typical day, within crypto's 60 %."""
    world = csv_world(empty_database_url, tmp_path, capsys, universe_text(("LINK", "crypto")))
    world.write("LINK", real_rows("csv_rows", "LINK"))
    code, out, err = world.run("data", "sync")
    assert code == exits.OK, out + err
    assert not _held(out) and "warning:" not in out
    stored = dict(world.stored("LINK"))
    assert len(stored) == 182
    assert stored["2020-03-12"] / stored["2020-03-11"] - 1 == pytest.approx(-0.478, abs=5e-4)


def test_a_spliced_tail_is_held_and_the_pair_keeps_the_verified_history(crypto):
    crypto.write("BTC", real_rows("csv_rows", "BTC", through="2023-09-30"))
    crypto.write("ETH", real_rows("csv_rows", "ETH", through="2023-09-30"))
    assert crypto.run("data", "sync")[0] == exits.OK
    btc_verified = crypto.stored("BTC")
    settings = load_settings(
        data_dir=crypto.data_dir, database_url=crypto.url, universe=crypto.universe
    )
    with database.connection_context():
        accounts.create_user("trader@example.com", "personal", lifetime=True)
        key = accounts.rotate_key("trader@example.com")

    def pair_and_btc() -> tuple[dict, dict]:
        client = make_client(build_runtime(settings))
        with client.client:
            pair = client.get(f"{BASE}/pair/ETH/BTC?bt=90", key)
            assets = client.get(f"{BASE}/assets", key)
        assert pair.status_code == 200 and assets.status_code == 200, pair.text
        (btc,) = [a for a in assets.json()["assets"] if a["ticker"] == "BTC"]
        return pair.json()["metrics"], btc

    metrics_before, _ = pair_and_btc()

    # ETH's closes of October to December appended after BTC's in BTC.csv.
    spliced = real_rows("csv_rows", "ETH", since="2023-10-01")
    crypto.write("BTC", [*real_rows("csv_rows", "BTC", through="2023-09-30"), *spliced])
    crypto.write("ETH", real_rows("csv_rows", "ETH"))
    code, out, err = crypto.run("data", "sync")

    assert code == exits.DATA_CONFLICT
    before = _close("csv_rows", "BTC", "2023-09-30")
    after = _close("csv_rows", "ETH", "2023-10-01")
    move = (after / before - 1) * 100
    assert move < -90
    (held,) = _held(out)
    assert held.startswith(
        f"held: BTC: close moved {move:+.1f} % on 2023-10-01 ({before:.10g} -> {after:.10g}), "
        "beyond 8 x its median daily move (1."
    )
    assert "over its 2098 stored moves) and its class limit of 60 %" in held
    assert held.endswith(
        f"its {len(spliced)} new rows wait, none stored; after review "
        "'pairscreen data sync --accept BTC:2023-10-01' adopts it"
    )
    assert err.strip() == (
        "pairscreen: error: implausible moves held for BTC: nothing was written for it (see above)"
    )
    assert crypto.stored("BTC") == btc_verified
    assert len(crypto.stored("ETH")) == 2191  # the other asset synced

    metrics_after, btc = pair_and_btc()
    assert btc["last_close"] == "2023-09-30" and btc["latest_close"] == before
    for field in ("position", "z_score", "range_width", "hurst"):
        assert metrics_after[field] == metrics_before[field], field

    # The file repaired: BTC's own closes, synced with no hold.
    crypto.write("BTC", real_rows("csv_rows", "BTC"))
    code, out, _ = crypto.run("data", "sync")
    assert code == exits.OK and not _held(out)
    assert len(crypto.stored("BTC")) == 2191


@pytest.fixture()
def stocks(empty_database_url, tmp_path, capsys, pinned) -> Iterator[CsvWorld]:
    yield csv_world(
        empty_database_url,
        tmp_path,
        capsys,
        universe_text(("AAPL", "equity"), ("DOGE", "crypto"), volume_unit="base"),
    )
    database.close()


def test_a_real_crash_is_held_then_accepted_in_one_command(stocks, caplog):
    """Apple's -51.9 % of 2000-09-29 (a profit warning): the largest one-day fall in the
    project's real data (no crypto day of 2018-2023 fell 60 %; the largest, LINK's -47.8 % of
    2020-03-12, is within crypto's limit and is stored as a real day)."""
    stocks.write("AAPL", real_rows("csv_rows", "AAPL", through="2000-09-28"))
    assert stocks.run("data", "sync")[0] == exits.OK
    verified = stocks.stored("AAPL")
    assert len(verified) == 188

    stocks.write("AAPL", real_rows("csv_rows", "AAPL"))
    code, out, _ = stocks.run("data", "sync")
    assert code == exits.DATA_CONFLICT
    (held,) = _held(out)
    assert held.startswith(
        "held: AAPL: close moved -51.9 % on 2000-09-29 (0.8007724881 -> 0.3854182065), beyond "
        "8 x its median daily move ("
    )
    assert "over its 187 stored moves) and its class limit of 25 %; its 64 new rows wait" in held
    assert stocks.stored("AAPL") == verified

    # A day that holds no move accepts nothing, and says so.
    code, out, _ = stocks.run("data", "sync", "--accept", "AAPL:2000-09-28")
    assert code == exits.DATA_CONFLICT and len(_held(out)) == 1
    assert (
        "warning: --accept AAPL:2000-09-28: no move of AAPL into that day is held; nothing "
        "accepted" in out.splitlines()
    )
    assert stocks.stored("AAPL") == verified

    with caplog.at_level(logging.WARNING, logger="pairscreen.market.sync"):
        code, out, err = stocks.run("data", "sync", "--accept", "aapl:2000-09-29")
    assert code == exits.OK, out + err
    accepted = (
        "AAPL: close moved -51.9 % on 2000-09-29 (0.8007724881 -> 0.3854182065), accepted by "
        "--accept AAPL:2000-09-29; stored"
    )
    assert f"accepted: {accepted}" in out.splitlines()
    assert f"sync accepted after review: {accepted}" in caplog.messages
    assert len(stocks.stored("AAPL")) == 252
    assert ("2000-09-29", 0.38541820645332336) in stocks.stored("AAPL")
    code, out, _ = stocks.run("data", "sync")  # the accepted day is verified history now
    assert code == exits.OK and not _held(out) and "accepted:" not in out


def test_accept_adopts_exactly_the_named_move_and_others_stay_held(stocks):
    stocks.write("DOGE", real_rows("sync_realdata", "DOGE"))
    code, out, _ = stocks.run("data", "sync")
    assert code == exits.DATA_CONFLICT
    (held,) = _held(out)
    assert "on 2021-01-02" in held and "on 2021-01-28" in held

    code, out, _ = stocks.run("data", "sync", "--accept", "DOGE:2021-01-28")
    assert code == exits.DATA_CONFLICT
    (held,) = _held(out)
    assert held.startswith("held: DOGE: close moved +85.3 % on 2021-01-02 (")
    assert (
        "(accepted, still waiting on the rest: +392.4 % on 2021-01-28 (0.0074124 -> 0.0364995))"
        in held
    )
    assert "'pairscreen data sync --accept DOGE:2021-01-28,DOGE:2021-01-02' adopts them" in held
    assert stocks.stored("DOGE") == []

    code, out, _ = stocks.run(
        "data", "sync", "--accept", "DOGE:2021-01-28", "--accept", "doge:2021-01-02"
    )
    assert code == exits.OK, out
    (accepted,) = [line for line in out.splitlines() if line.startswith("accepted:")]
    assert accepted.startswith("accepted: DOGE: close moved +85.3 % on 2021-01-02 (")
    assert accepted.endswith(
        "; +392.4 % on 2021-01-28 (0.0074124 -> 0.0364995), accepted by "
        "--accept DOGE:2021-01-02,DOGE:2021-01-28; stored"
    )
    assert len(stocks.stored("DOGE")) == 90


def test_replace_adopts_the_held_moves_of_its_assets(stocks):
    stocks.write("DOGE", real_rows("sync_realdata", "DOGE"))
    assert stocks.run("data", "sync")[0] == exits.DATA_CONFLICT
    code, out, _ = stocks.run("data", "sync", "--replace", "DOGE")
    assert code == exits.OK, out
    (accepted,) = [line for line in out.splitlines() if line.startswith("accepted:")]
    assert accepted.startswith("accepted: DOGE: close moved +85.3 % on 2021-01-02 (")
    assert accepted.endswith("accepted by --replace; stored")
    assert len(stocks.stored("DOGE")) == 90


def test_bad_accept_arguments_are_usage_errors(stocks):
    for given, said in (
        ("AAPL", "no ticker"),
        ("NOPE:2000-09-29", "'NOPE' is not an asset of the universe"),
        ("AAPL:29.09.2000", "'29.09.2000' is not a day (YYYY-MM-DD)"),
    ):
        code, _, err = stocks.run("data", "sync", "--accept", given)
        assert code == exits.USAGE, given
        assert err.count("\n") == 1 and said in err, err


def test_a_move_beyond_the_limit_but_within_the_assets_own_range_is_stored_and_named(crypto):
    crypto.write("BTC", real_rows("csv_rows", "BTC", through="2023-10-22"))
    crypto.write("ETH", real_rows("csv_rows", "ETH", through="2023-10-22"))
    assert crypto.run("data", "sync")[0] == exits.OK
    crypto.universe.write_text(
        universe_text(("BTC", "crypto"), ("ETH", "crypto")) + "\n[move_limits]\ncrypto = 10\n",
        encoding="utf-8",
    )
    crypto.write("BTC", real_rows("csv_rows", "BTC"))
    crypto.write("ETH", real_rows("csv_rows", "ETH"))
    code, out, _ = crypto.run("data", "sync")
    # BTC's +10.3 % of 2023-10-23 is above 10 % but within 8 x its typical day (13.2 %).
    assert code == exits.OK, out
    before = _close("csv_rows", "BTC", "2023-10-22")
    after = _close("csv_rows", "BTC", "2023-10-23")
    assert (
        f"warning: BTC: close moved +10.3 % on 2023-10-23 ({before:.10g} -> {after:.10g}), "
        "above its limit of 10 %; stored" in out.splitlines()
    )
    assert len(crypto.stored("BTC")) == 2191


def test_screen_run_peg_sample_and_the_worker_go_on_with_a_held_asset(crypto):
    from pairscreen.worker import Worker, WorkerOptions

    crypto.write("BTC", real_rows("csv_rows", "BTC", through="2023-09-30"))
    crypto.write("ETH", real_rows("csv_rows", "ETH"))
    assert crypto.run("data", "sync")[0] == exits.OK
    spliced = real_rows("csv_rows", "ETH", since="2023-10-01")
    crypto.write("BTC", [*real_rows("csv_rows", "BTC", through="2023-09-30"), *spliced])

    code, out, err = crypto.run("screen", "run")
    assert code == exits.OK, err
    assert "pairscreen: warning: sync held: BTC: close moved" in err
    assert out.startswith("screen #1: 1 pair,")
    code, _, err = crypto.run("peg", "sample")
    assert code == exits.OK, err
    assert "pairscreen: warning: sync held: BTC: close moved" in err

    settings = load_settings(
        data_dir=crypto.data_dir, database_url=crypto.url, universe=crypto.universe
    )
    worker = Worker(build_runtime(settings), WorkerOptions())
    with database.connection_context():
        summary = worker._screen()
    assert "held: BTC: close moved" in summary and "screen #" in summary
    assert len(crypto.stored("BTC")) == len(real_rows("csv_rows", "BTC", through="2023-09-30"))


def test_the_plugin_test_kit_stores_given_candles_as_given_and_names_unreadable_rows(tmp_path):
    """A plugin author's candles are the market of the test: a crash in them is stored (no
    person is there to accept it); a close that is not a number stops the kit by name."""
    import numpy as np

    from pairscreen import Candles
    from pairscreen.market.sync import load_candles
    from pairscreen.testing import plugin_service

    days = np.datetime64("2024-01-01") + np.arange(60)
    close = np.full(60, 100.0)
    close[40:] = 20.0  # -80 % on day 40, beyond any class limit
    steady = Candles("AAA", days, close, np.full(60, np.nan))
    other = Candles("BBB", days, np.full(60, 50.0), np.full(60, np.nan))
    (tmp_path / "kit").mkdir()
    (tmp_path / "broken").mkdir()
    with plugin_service(tmp_path / "kit", candles={"AAA": steady, "BBB": other}):
        stored = load_candles(["AAA"])["AAA"]
    np.testing.assert_array_equal(stored.close, close)

    broken = close.copy()
    broken[10] = np.nan
    nan = Candles("AAA", days, broken, np.full(60, np.nan))
    with (
        pytest.raises(ValueError, match=r"refused: AAA: 1 row not understood: row 11 of the"),
        plugin_service(tmp_path / "broken", candles={"AAA": nan, "BBB": other}),
    ):
        pass


def test_with_too_little_history_the_class_limit_alone_holds_a_move(stocks):
    stocks.write("DOGE", real_rows("sync_realdata", "DOGE", through="2021-01-10"))
    code, out, _ = stocks.run("data", "sync")
    assert code == exits.DATA_CONFLICT
    (held,) = _held(out)
    assert held.startswith("held: DOGE: close moved +85.3 % on 2021-01-02 (")
    assert (
        "beyond its class limit of 60 % (its typical day is unknown: the source's 9 moves, "
        "30 needed); its 10 new rows wait" in held
    )
