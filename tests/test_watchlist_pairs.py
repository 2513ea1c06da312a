"""One watchlist item per pair: ``A/B`` and ``B/A`` are one pair.

Adding the mirror of a watched pair is refused (through the service and the CLI) with a
one-line message naming the item that watches it; the database enforces it with a unique
``pair_key`` per user; migration 4 merges the mirrored items an older database may hold, so a
ratio move then queues one notification, not two. On SQLite, and on PostgreSQL when
``PAIRSCREEN_TEST_DATABASE_URL`` is set.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import peewee
import pytest
from playhouse.migrate import SchemaMigrator, migrate

from pairscreen import clock
from pairscreen.cli import main
from pairscreen.db.connection import database, init_database
from pairscreen.db.migrations import upgrade
from pairscreen.db.models import Outbox, SchemaVersion, User, WatchlistItem
from pairscreen.errors import Conflict
from pairscreen.notify import watchlist
from pairscreen.notify.run import run_notifications
from tests.support.positions import InMemoryCandles, set_position

TABLE = WatchlistItem._meta.table_name


def to_schema_3() -> None:
    """Turn the bound database back into one at schema version 3: no ``pair_key`` column, no
    index on it, migration 4 not recorded (what a database from before this change holds)."""
    migrator = SchemaMigrator.from_database(database.obj)
    for index in database.get_indexes(TABLE):
        if "pair_key" in index.columns:
            migrate(migrator.drop_index(TABLE, index.name))
    migrate(migrator.drop_column(TABLE, "pair_key"))
    SchemaVersion.delete().where(SchemaVersion.version == 4).execute()


def old_item(email: str, pair: str, created_minutes_ago: int, **columns: object) -> int:
    """A watchlist row as schema 3 wrote it (no ``pair_key``); returns its id."""
    a, b = pair.split("/")
    row_id: int = WatchlistItem.insert(
        user=User.get(User.email == email).id,
        a=a,
        b=b,
        created_at=clock.now() - timedelta(minutes=created_minutes_ago),
        **columns,
    ).execute()
    return row_id


def watchlist_schema() -> tuple[set[tuple[str, bool]], set[tuple[tuple[str, ...], bool]], set[str]]:
    """The watchlist table of the bound database: its (column, nullable), its (index columns,
    unique) and its foreign keys (a table rebuilt by the migration keeps them)."""
    columns = {(c.name, c.null) for c in database.get_columns(TABLE)}
    indexes = {(tuple(i.columns), i.unique) for i in database.get_indexes(TABLE)}
    foreign_keys = {
        f"{k.column}->{k.dest_table}.{k.dest_column}" for k in database.get_foreign_keys(TABLE)
    }
    return columns, indexes, foreign_keys


def items() -> list[tuple[str, str, str, str, bool, bool]]:
    """Every item as (owner, pair, pair_key, state, notify_approach, notify_in_zone)."""
    return [
        (
            i.user.email,
            f"{i.a}/{i.b}",
            i.pair_key,
            i.last_notified_state,
            i.notify_approach,
            i.notify_in_zone,
        )
        for i in WatchlistItem.select().order_by(WatchlistItem.id)
    ]


def test_mirrored_add_is_refused_through_the_service(runtime, keys, client):
    u = runtime.universe
    with database.connection_context():
        item = watchlist.add_item(u, "personal@example.com", "ETH/BTC", approach=False)
        for mirror in ("BTC/ETH", "btc/eth", " BTC / ETH"):
            with pytest.raises(Conflict) as refused:
                watchlist.add_item(u, "personal@example.com", mirror)
            assert refused.value.message == (
                "BTC/ETH is already on personal@example.com's watchlist as ETH/BTC "
                "(one item per pair); remove ETH/BTC first to watch it as BTC/ETH"
            )
        with pytest.raises(Conflict, match=r"^ETH/BTC is already on personal@example\.com"):
            watchlist.add_item(u, "personal@example.com", "eth/BTC")
        # Another user watches the pair in the other orientation: their own item.
        watchlist.add_item(u, "pro@example.com", "BTC/ETH")
        assert items() == [
            ("personal@example.com", "ETH/BTC", "BTC/ETH", "none", False, True),
            ("pro@example.com", "BTC/ETH", "BTC/ETH", "none", True, True),
        ]
        assert WatchlistItem.get_by_id(item.id).notify_approach is False  # untouched
    # Over HTTP (checked against openapi.yaml): the one item, as it was added.
    body = client.get("/api/v1/watchlist", key=keys.personal).json()
    assert body["count"] == 1
    assert [(i["pair"], i["notify_approach"]) for i in body["items"]] == [("ETH/BTC", False)]


def test_the_database_refuses_a_mirrored_row_the_service_did_not_check(runtime, keys):
    with database.connection_context():
        user = User.get(User.email == "personal@example.com").id
        watchlist.add_item(runtime.universe, "personal@example.com", "SOL/ADA")
        with pytest.raises(peewee.IntegrityError), database.atomic():
            WatchlistItem.create(user=user, a="ADA", b="SOL", pair_key="ADA/SOL")
        with pytest.raises(peewee.IntegrityError), database.atomic():
            WatchlistItem.insert(user=user, a="ETH", b="BTC").execute()  # no pair_key
        assert WatchlistItem.select().count() == 1


def test_mirrored_add_through_the_cli_is_a_one_line_refusal(cli):
    assert cli("users", "create", "dan@example.com", "--tier", "personal")[0] == 0
    code, out, _ = cli("watchlist", "add", "dan@example.com", "ETH/BTC", "--no-in-zone")
    assert (code, out) == (0, "watching ETH/BTC for dan@example.com\n")
    code, out, err = cli("watchlist", "add", "dan@example.com", "BTC/ETH", "--no-approach")
    assert (code, out) == (2, "")
    assert err == (
        "pairscreen: error: BTC/ETH is already on dan@example.com's watchlist as ETH/BTC "
        "(one item per pair); remove ETH/BTC first to watch it as BTC/ETH\n"
    )
    code, out, _ = cli("watchlist", "list", "dan@example.com")
    assert (code, out) == (0, "ETH/BTC\tnone\tapproach\t0 h\t-\t0.02\n")
    # The pair is removed written either way round, and can then be added the other way.
    code, out, _ = cli("watchlist", "remove", "dan@example.com", "BTC/ETH")
    assert (code, out) == (0, "removed ETH/BTC from dan@example.com's watchlist\n")
    assert cli("watchlist", "add", "dan@example.com", "BTC/ETH")[0] == 0
    assert cli("watchlist", "list", "dan@example.com")[1] == (
        "BTC/ETH\tnone\tapproach,in_zone\t0 h\t-\t0.02\n"
    )
    code, _, err = cli("watchlist", "remove", "dan@example.com", "SOL/ADA")
    assert code == 3  # not found
    assert err == "pairscreen: error: SOL/ADA is not on dan@example.com's watchlist\n"


def test_cli_help_says_a_pair_is_watched_once(capsys):
    assert main(["watchlist", "add", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "A/B and B/A are one pair" in text and "adding the mirror of a watched pair is" in text


def test_migration_merges_mirrored_items_of_an_old_database(runtime, keys, database_url):
    with database.connection_context():
        fresh = watchlist_schema()
        to_schema_3()
        assert "pair_key" not in {c for c, _ in watchlist_schema()[0]}
        first = old_item(
            "personal@example.com", "ETH/BTC", 30, notify_approach=False,
            last_notified_state="approach_bottom",
        )  # fmt: skip
        old_item(
            "personal@example.com", "BTC/ETH", 20, notify_in_zone=False,
            last_notified_state="approach_top",
        )  # fmt: skip
        old_item("personal@example.com", "SOL/ADA", 10)
        old_item("pro@example.com", "BTC/ETH", 40, notify_in_zone=False)
        old_item("pro@example.com", "ETH/BTC", 5)
        assert upgrade() == [4]
        assert items() == [
            # The first item added, with its orientation and state; it notifies what either did.
            ("personal@example.com", "ETH/BTC", "BTC/ETH", "approach_bottom", True, True),
            ("personal@example.com", "SOL/ADA", "ADA/SOL", "none", True, True),
            ("pro@example.com", "BTC/ETH", "BTC/ETH", "none", True, True),
        ]
        assert WatchlistItem.get(WatchlistItem.a == "ETH").id == first
        # The migrated table is the table a fresh database gets, key NOT NULL and unique.
        assert watchlist_schema() == fresh
        assert ("pair_key", False) in fresh[0] and fresh[2] == {"user_id->user.id"}
        assert (("user_id", "pair_key"), True) in fresh[1]
        with pytest.raises(peewee.IntegrityError), database.atomic():
            WatchlistItem.create(
                user=User.get(User.email == "pro@example.com").id,
                a="ETH",
                b="BTC",
                pair_key="BTC/ETH",
            )
        assert upgrade() == []  # applied once


def test_fresh_database_gets_the_same_watchlist_table(runtime, empty_database_url):
    with database.connection_context():
        migrated = watchlist_schema()
    database.close()
    init_database(empty_database_url)
    with database.connection_context():
        assert watchlist_schema() == migrated


def test_old_database_watching_both_orientations_queues_one_notification(runtime, keys, cli):
    with database.connection_context():
        to_schema_3()
        old_item("personal@example.com", "BTC/ETH", 30)
        old_item("personal@example.com", "ETH/BTC", 20)
    database.close()
    code, out, _ = cli("db", "upgrade")
    assert code == 0 and out.endswith("applied migrations [4]\n")
    with database.connection_context():
        runtime.candles = InMemoryCandles(runtime.candles.get())
        set_position(runtime, "ETH", "BTC", 0.1)  # ETH/BTC in the bottom zone: BTC/ETH in the top
        report = run_notifications(runtime)
        assert (report.items, report.moved, report.notifications) == (1, 1, 1)
        (row,) = Outbox.select()
        payload = json.loads(row.payload)
        assert (row.user.email, payload["pair"], payload["state"]) == (
            "personal@example.com",
            "BTC/ETH",
            "in_top",
        )
        assert run_notifications(runtime).notifications == 0
        assert Outbox.select().count() == 1


def test_concurrent_mirrored_adds_leave_one_item(runtime, keys):
    """Racing adds of A/B and B/A: one wins, every other is refused naming the winner (on
    PostgreSQL the loser's INSERT waits on the unique index, then fails)."""
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def add(pair: str) -> None:
        with database.connection_context():
            barrier.wait()
            try:
                item = watchlist.add_item(runtime.universe, "pro@example.com", pair)
                outcomes.append(f"added {item.a}/{item.b}")
            except Conflict as exc:
                outcomes.append(exc.message)

    threads = [threading.Thread(target=add, args=(p,)) for p in ["ETH/BTC", "BTC/ETH"] * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (won,) = [o.removeprefix("added ") for o in outcomes if o.startswith("added ")]
    refused = [o for o in outcomes if not o.startswith("added ")]
    assert len(refused) == 3
    assert all(o.startswith(f"{won} is already") or f"as {won} (" in o for o in refused)
    with database.connection_context():
        assert [(i[1], i[2]) for i in items()] == [(won, "BTC/ETH")]
