"""``PUT`` and ``DELETE /watchlist/{a}/{b}``: the watchlist edited over the API, free of quota.

The same service as the CLI's ``watchlist add/remove`` (one item per pair, the mirror refused
with a sentence naming the item, a per-tier item limit), every response checked against
``openapi.yaml``.
"""

from __future__ import annotations

from pairscreen.db.connection import database
from pairscreen.db.models import WatchlistItem
from pairscreen.notify.watchlist import ITEM_LIMITS

BASE = "/api/v1"


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def put(client, key: str, pair: str, query: str = ""):  # type: ignore[no-untyped-def]
    return client.request("PUT", f"{BASE}/watchlist/{pair}{query}", headers=auth(key))


def delete(client, key: str, pair: str):  # type: ignore[no-untyped-def]
    return client.request("DELETE", f"{BASE}/watchlist/{pair}", headers=auth(key))


def remaining(client, key: str) -> int:  # type: ignore[no-untyped-def]
    return int(client.get(f"{BASE}/me", key).json()["quota"]["remaining_today"])


def test_put_creates_then_updates_and_delete_removes(client, keys):
    before = remaining(client, keys.personal)
    created = put(client, keys.personal, "eth/BTC", "?notify_approach=false")
    assert created.status_code == 201, created.text
    assert created.json()["pair"] == "ETH/BTC"
    assert (created.json()["notify_approach"], created.json()["notify_in_zone"]) == (False, True)
    updated = put(client, keys.personal, "ETH/BTC", "?notify_in_zone=false")
    assert updated.status_code == 200
    # A switch left out keeps its value.
    assert (updated.json()["notify_approach"], updated.json()["notify_in_zone"]) == (False, False)
    listed = client.get(f"{BASE}/watchlist", keys.personal).json()
    assert [(i["pair"], i["notify_in_zone"]) for i in listed["items"]] == [("ETH/BTC", False)]
    assert client.get(f"{BASE}/watchlist", keys.pro).json()["count"] == 0
    # Removed written either way round; a second removal is a 404 with a sentence.
    assert delete(client, keys.personal, "BTC/ETH").status_code == 204
    gone = delete(client, keys.personal, "ETH/BTC")
    assert gone.status_code == 404 and gone.text == "ETH/BTC is not on your watchlist\n"
    assert client.get(f"{BASE}/watchlist", keys.personal).json()["count"] == 0
    assert remaining(client, keys.personal) == before


def test_mirror_unknown_same_leg_and_tier_are_refused_in_words(client, keys):
    assert put(client, keys.personal, "ETH/BTC").status_code == 201
    mirror = put(client, keys.personal, "BTC/ETH", "?notify_approach=true")
    assert mirror.status_code == 409
    assert mirror.text == (
        "BTC/ETH is already on your watchlist as ETH/BTC (one item per pair); "
        "remove ETH/BTC first to watch it as BTC/ETH\n"
    )
    unknown = put(client, keys.personal, "NOPE/BTC")
    assert unknown.status_code == 404 and "Unknown ticker 'NOPE'" in unknown.text
    same = delete(client, keys.personal, "BTC/btc")
    assert same.status_code == 400 and "two different assets" in same.text
    for refused in (keys.expired, keys.no_tier):
        assert put(client, refused, "SOL/ETH").status_code == 403
    bad = put(client, keys.personal, "SOL/ETH", "?notify_approach=maybe")
    assert bad.status_code == 400 and "notify_approach" in bad.text
    assert put(client, "rr_" + "x" * 32, "SOL/ETH").status_code == 401


def test_a_full_watchlist_refuses_one_more_item(client, keys, runtime):
    tickers = sorted(runtime.universe.tickers)
    pairs = [(a, b) for i, a in enumerate(tickers) for b in tickers[i + 1 :]]
    limit = ITEM_LIMITS["personal"]
    with database.connection_context():
        user = WatchlistItem.user.rel_model.get(email="personal@example.com")
        for a, b in pairs[:limit]:
            WatchlistItem.create(user=user.id, a=a, b=b, pair_key=f"{a}/{b}")
    a, b = pairs[limit]
    full = put(client, keys.personal, f"{a}/{b}")
    assert full.status_code == 409
    assert full.text == (
        f"Your watchlist is full: {limit} items, the personal tier's limit is {limit}. "
        "Remove an item first.\n"
    )
    # Updating an item already there still works; Pro has room.
    first = "/".join(pairs[0])
    assert put(client, keys.personal, first, "?notify_in_zone=false").status_code == 200
    assert put(client, keys.pro, f"{a}/{b}").status_code == 201


def test_the_state_change_time_is_kept_and_migrated_in(client, keys, runtime):
    from playhouse.migrate import SchemaMigrator, migrate

    from pairscreen import clock
    from pairscreen.db.migrations import upgrade
    from pairscreen.db.models import SchemaVersion
    from pairscreen.notify.run import run_notifications
    from tests.support.positions import InMemoryCandles, set_position

    assert put(client, keys.personal, "ETH/BTC").json()["state_changed_at"] is None
    at = clock.now().replace(microsecond=0)
    with database.connection_context():
        runtime.candles = InMemoryCandles(runtime.candles.get())
        set_position(runtime, "ETH", "BTC", 0.1)
        run_notifications(runtime, at=at)
    (item,) = client.get(f"{BASE}/watchlist", keys.personal).json()["items"]
    assert item["last_notified_state"] == "in_bottom"
    assert item["state_changed_at"] == clock.iso(at)
    # A database from before the column: migration 7 adds it, empty.
    table = WatchlistItem._meta.table_name
    with database.connection_context():
        migrate(SchemaMigrator.from_database(database.obj).drop_column(table, "state_changed_at"))
        SchemaVersion.delete().where(SchemaVersion.version == 7).execute()
    assert upgrade() == [7]
    with database.connection_context():
        assert "state_changed_at" in {c.name for c in database.get_columns(table)}
        assert WatchlistItem.get().state_changed_at is None


def test_other_methods_are_405_naming_the_paths_methods(client, keys):
    for method in ("POST", "GET", "HEAD", "PATCH"):
        r = client.request(method, f"{BASE}/watchlist/ETH/BTC", headers=auth(keys.personal))
        assert r.status_code == 405, method
        assert r.headers["allow"] == "PUT, DELETE"
    r = client.request("DELETE", f"{BASE}/watchlist", headers=auth(keys.personal))
    assert r.status_code == 405 and r.headers["allow"] == "GET"
    assert client.get(f"{BASE}/watchlist", keys.personal).json()["count"] == 0
