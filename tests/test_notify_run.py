"""``notify run`` end to end on the demo market: positions moved by rewriting the last candle,
states in the database and on ``/watchlist``, exactly the expected outbox rows."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest

from pairscreen import clock
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox, WatchlistItem
from pairscreen.notify import channels, watchlist
from pairscreen.notify import run as notify_run
from pairscreen.notify.run import live_positions, run_notifications
from pairscreen.screening.snapshot import compute_snapshot
from tests.support.positions import InMemoryCandles, set_position


def rows() -> list[Outbox]:
    return list(Outbox.select().order_by(Outbox.id))


@pytest.fixture()
def world(runtime, keys):  # type: ignore[no-untyped-def]
    """The demo market with prices moved in memory (the rerun test writes the database)."""
    with database.connection_context():
        runtime.candles = InMemoryCandles(runtime.candles.get())
        yield runtime


def test_positions_are_computed_in_one_batch_and_match_the_live_snapshot(world):
    pairs = {("ETH", "BTC"), ("BTC", "ETH"), ("SOL", "ADA"), ("PAXG", "BTC"), ("BERA", "SOL")}
    positions = live_positions(world, pairs)
    assert ("BERA", "SOL") not in positions  # too little history for a position
    for a, b in pairs - {("BERA", "SOL")}:
        snap = compute_snapshot(world, *world.universe.pair(a, b), 360)
        assert positions[(a, b)].position == pytest.approx(snap["metrics"]["position"], abs=1e-12)
    # Orientation: B/A is exactly 1 - A/B.
    assert positions[("BTC", "ETH")].position == pytest.approx(
        1 - positions[("ETH", "BTC")].position, abs=1e-12
    )
    set_position(world, "ETH", "BTC", 0.123)
    assert live_positions(world, {("ETH", "BTC")})[("ETH", "BTC")].position == pytest.approx(0.123)


# position -> (expected state, notification expected)
WALK = [
    (0.50, "none", False),
    (0.25, "approach_bottom", True),
    (0.29, "approach_bottom", False),
    (0.31, "approach_bottom", False),  # hysteresis: not back in mid yet
    (0.29, "approach_bottom", False),
    (0.15, "in_bottom", True),
    (0.21, "in_bottom", False),
    (0.19, "in_bottom", False),  # flapping around 0.2: no storm
    (0.25, "in_bottom", False),
    (0.50, "none", False),  # back to mid: re-armed
    (0.75, "approach_top", True),
    (0.69, "approach_top", False),
    (0.85, "in_top", True),
    (0.10, "in_bottom", True),  # straight across: a new excursion
]


def test_walk_through_every_transition(world, client, keys):
    item = watchlist.add_item(world.universe, "personal@example.com", "ETH/BTC")
    start = clock.now().replace(microsecond=0)
    expected_rows = 0
    for step, (x, state, notifies) in enumerate(WALK):
        set_position(world, "ETH", "BTC", x)
        report = run_notifications(world, at=start + timedelta(hours=step))
        assert WatchlistItem.get_by_id(item.id).last_notified_state == state, (step, x)
        expected_rows += int(notifies)
        assert report.notifications == int(notifies), (step, x)
        assert len(rows()) == expected_rows
        if notifies:
            row = rows()[-1]
            assert (row.channel, row.address, row.status) == (
                "email",
                "personal@example.com",
                "pending",
            )
            assert row.idempotency_key == (
                f"watch.{item.id}.{state}.{(start + timedelta(hours=step)):%Y%m%dT%H%M%SZ}.email"
            )
            # The message names the pair, the new state, the position and the zone band.
            assert "ETH/BTC" in row.subject and f"{x:.3f}" in row.subject
            for part in (row.text, row.html):
                assert "ETH/BTC" in part and state in part and f"{x:.3f}" in part
            assert "zone" in row.text.lower() and "Zone band" in row.text
            payload = json.loads(row.payload)
            assert payload["pair"] == "ETH/BTC" and payload["state"] == state
            assert payload["position"] == pytest.approx(x, abs=1e-6)
            assert payload["idempotency_key"] == row.idempotency_key
            assert payload["zone_band"]["description"]
            assert "rr_" not in row.text + row.html + row.payload  # no secrets
    states = [json.loads(r.payload)["state"] for r in rows()]
    assert states == ["approach_bottom", "in_bottom", "approach_top", "in_top", "in_bottom"]
    body = client.get("/api/v1/watchlist", key=keys.personal).json()
    shown = [(i["pair"], i["last_notified_state"]) for i in body["items"]]
    assert shown == [("ETH/BTC", "in_bottom")]


def test_rerun_never_duplicates(runtime, keys):
    world = runtime  # prices moved in the candle table, read back through the candle cache
    watchlist.add_item(world.universe, "personal@example.com", "ETH/BTC")
    set_position(world, "ETH", "BTC", 0.1)
    assert run_notifications(world).notifications == 1
    for _ in range(3):
        assert run_notifications(world).notifications == 0
    assert len(rows()) == 1


def test_concurrent_runs_queue_one_row(world):
    watchlist.add_item(world.universe, "personal@example.com", "ETH/BTC")
    set_position(world, "ETH", "BTC", 0.1)
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with database.connection_context():
                barrier.wait()
                run_notifications(world)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(rows()) == 1
    assert WatchlistItem.get().last_notified_state == "in_bottom"


def test_state_change_and_outbox_row_share_one_transaction(world, monkeypatch):
    watchlist.add_item(world.universe, "personal@example.com", "ETH/BTC")
    watchlist.add_item(world.universe, "pro@example.com", "SOL/ADA")
    set_position(world, "ETH", "BTC", 0.1)
    set_position(world, "SOL", "ADA", 0.9)
    real = notify_run.enqueue
    calls = []

    def crash_on_second(messages, **kw):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("crash while queueing")
        return real(messages, **kw)

    monkeypatch.setattr(notify_run, "enqueue", crash_on_second)
    with pytest.raises(RuntimeError):
        run_notifications(world)
    # Nothing happened: neither state moved, no row was written.
    assert {i.last_notified_state for i in WatchlistItem.select()} == {"none"}
    assert rows() == []
    monkeypatch.setattr(notify_run, "enqueue", real)
    assert run_notifications(world).notifications == 2


def test_orientation_flags_channels_and_tiers(world):
    u = world.universe
    watchlist.add_item(u, "personal@example.com", "ETH/BTC", approach=False)
    watchlist.add_item(u, "pro@example.com", "BTC/ETH")
    watchlist.add_item(u, "expired@example.com", "ETH/BTC")
    channels.set_channels(
        "pro@example.com",
        addresses={"telegram": "-100123", "webhook": "https://hooks.example.com/p"},
        kinds=world.plugins.channel_kinds,
    )
    channels.disable_channel("personal@example.com", "email")
    channels.set_channels(
        "personal@example.com",
        addresses={"webhook": "https://h.example.com/x"},
        kinds=world.plugins.channel_kinds,
    )

    set_position(world, "ETH", "BTC", 0.25)  # ETH/BTC approaching bottom = BTC/ETH approaching top
    run_notifications(world)
    states = {(i.user.email, i.a): i.last_notified_state for i in WatchlistItem.select()}
    assert states == {
        ("personal@example.com", "ETH"): "approach_bottom",  # moved, but approach is off
        ("pro@example.com", "BTC"): "approach_top",
        ("expired@example.com", "ETH"): "approach_bottom",  # moved, expired tier: no message
    }
    got = sorted((r.user.email, r.channel, r.address) for r in rows())
    assert got == [
        ("pro@example.com", "email", "pro@example.com"),
        ("pro@example.com", "telegram", "-100123"),
        ("pro@example.com", "webhook", "https://hooks.example.com/p"),
    ]
    assert len({r.idempotency_key for r in rows()}) == 3

    set_position(world, "ETH", "BTC", 0.1)
    run_notifications(world)
    new = [(r.user.email, r.channel, json.loads(r.payload)["state"]) for r in rows()[3:]]
    assert sorted(new) == [
        ("personal@example.com", "webhook", "in_bottom"),  # e-mail disabled, webhook on
        ("pro@example.com", "email", "in_top"),
        ("pro@example.com", "telegram", "in_top"),
        ("pro@example.com", "webhook", "in_top"),
    ]
