"""The page index stored when a screen is published: the first filtered page of ``/pairs``
and ``/screen/latest`` reads it instead of parsing the screen, and its items from the blocks
stored with it instead of the payload, and serves the same bytes as an index parsed from the
screen; a screen published without blocks, or without an index, still pages."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pairscreen import clock
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import Screen, ScreenPageBlock, ScreenPageIndex, ScreenPayload
from pairscreen.runtime import Runtime
from pairscreen.screen_store import json_items, page_blocks, page_index
from pairscreen.screen_store.payload_parts import PayloadParts
from pairscreen.screen_store.stored_pages import prepare_page_index
from pairscreen.screen_views import pairs_view
from pairscreen.screening.screen import run_screen
from tests.conftest import ContractClient

BASE = "/api/v1"
VIEWS = ("/pairs", "/screen/latest")


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every walk of a screen's JSON by the views (the parse a stored index saves), by the
    array walked; the pages and the ``/pairs`` body each walk through their own name."""
    walked: list[str] = []

    def counting(text: str, array: str) -> Iterator[json_items.Field | json_items.Element]:
        walked.append(array)
        return json_items.walk(text, array)

    monkeypatch.setattr(page_index, "walk", counting)
    monkeypatch.setattr(pairs_view, "walk", counting)
    return walked


def latest_id() -> int:
    with database.connection_context():
        return int(Screen.select(Screen.id).order_by(Screen.id.desc()).scalar())


def drop_stored_indexes(runtime: Runtime) -> None:
    """Back to a screen published before screens stored their index."""
    with database.connection_context():
        ScreenPageBlock.delete().execute()
        ScreenPageIndex.delete().execute()
    runtime.screens.forget()


def drop_stored_blocks(runtime: Runtime) -> None:
    """Back to a screen published with its index but before screens stored their items."""
    with database.connection_context():
        ScreenPageBlock.delete().execute()
    runtime.screens.forget()


@pytest.fixture()
def statements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple]]:
    """Every SQL statement the service runs from now on, with its parameters."""
    seen: list[tuple[str, tuple]] = []
    db = database.obj
    run = db.execute_sql

    def recording(sql: str, params=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((sql, tuple(params or ())))
        return run(sql, params, *args, **kwargs)

    monkeypatch.setattr(db, "execute_sql", recording)
    return seen


def test_the_first_filtered_request_after_a_publish_reads_the_stored_index(
    client: ContractClient, keys, runtime: Runtime, parses: list[str]
) -> None:
    with database.connection_context():
        published = run_screen(runtime, processes=1)
        assert ScreenPageIndex.select().where(ScreenPageIndex.screen == published.screen_id)
    parses.clear()  # the publish itself walks the payload once, to build the index
    for path in VIEWS:
        r = client.get(f"{BASE}{path}?min_score=0&limit=2", keys.personal)
        assert r.status_code == 200 and r.json()["count"] == 2, r.text
        assert r.json()["next_cursor"].startswith(f"{published.screen_id}.")
    assert parses == []

    # The same requests on the same screen without its stored index parse it: the count
    # above would have seen it.
    drop_stored_indexes(runtime)
    for path in VIEWS:
        assert client.get(f"{BASE}{path}?min_score=0&limit=2", keys.personal).status_code == 200
    assert "survivors" in parses and "pairs" in parses


def publish_crafted_screen(runtime: Runtime, copies: int = 3) -> dict:
    """Publish the template's screen grown to exercise what an index must keep: scores tied
    across survivors, survivors without a zone, a sector with a non-ASCII name. Stored as
    ``run_screen`` stores a screen: compact JSON, with its page index."""
    with database.connection_context():
        payload = json.loads(runtime.screens.latest().payload)
        grown = []
        for copy in range(copies):
            for k, s in enumerate(payload["survivors"]):
                s = json.loads(json.dumps(s))
                s["pair"] = [f"{s['pair'][0]}{copy}", f"{s['pair'][1]}{copy}"]
                if copy % 3 == 1:
                    s["sector"] = "énergie"
                if copy % 3 == 2 and k % 2:
                    s["metrics"].pop("zone", None)
                grown.append(s)  # copies 0 and 2 tie with copy 1 on every score
        payload.update(survivors=grown, n_survivors=len(grown))
        text = json.dumps(payload, allow_nan=False, separators=(",", ":"))
        with write_transaction():
            row = Screen.create(
                generated_at=clock.now(),
                n_pairs_screened=payload["n_pairs_screened"],
                n_survivors=len(grown),
                data_source=payload["data_source"],
            )
            ScreenPayload.create(screen=row.id, payload=text)
            prepare_page_index(PayloadParts.of(payload)).store(row.id)
    runtime.screens.forget()
    return payload


def queries(payload: dict) -> list[str]:
    survivors = payload["survivors"]
    sectors = sorted({s["sector"] for s in survivors})
    scores = sorted(s["score"] for s in survivors)
    asked = ["limit=1", "limit=7", "limit=1000", f"min_score={scores[len(scores) // 2]}"]
    asked += [f"sector={sector}&limit=4" for sector in sectors]
    asked += [f"zone={zone}" for zone in ("bottom", "mid", "top")]
    asked += [f"sector={sectors[0]}&zone=bottom&min_score=0", "sector=nowhere"]
    return asked


def chains(client: ContractClient, key: str, asked: list[str]) -> dict[str, list[bytes]]:
    """Every page of every query on both views, following the cursors, as bytes."""
    out: dict[str, list[bytes]] = {}
    for path in VIEWS:
        for query in asked:
            bodies, cursor = [], None
            while True:
                suffix = f"&cursor={cursor}" if cursor else ""
                r = client.get(f"{BASE}{path}?{query}{suffix}", key)
                assert r.status_code == 200, r.text
                bodies.append(r.content)
                cursor = r.json().get("next_cursor")
                if cursor is None:
                    break
            out[f"{path}?{query}"] = bodies
    return out


def test_stored_pages_are_byte_identical_to_parsed_ones(
    client: ContractClient, keys, runtime: Runtime, parses: list[str]
) -> None:
    payload = publish_crafted_screen(runtime)
    asked = queries(payload)
    parses.clear()
    stored = chains(client, keys.personal, asked)  # the items read from their blocks
    assert parses == []
    drop_stored_blocks(runtime)
    cut = chains(client, keys.personal, asked)  # the items cut from the payload
    assert parses == []
    drop_stored_indexes(runtime)
    parsed = chains(client, keys.personal, asked)
    assert parses  # the third time round the views were parsed
    assert stored.keys() == parsed.keys() == cut.keys()
    for name, bodies in stored.items():
        assert bodies == parsed[name] == cut[name], name
    # The queries reached what they are there for: ties, several pages, the unicode sector.
    many = json.loads(stored["/pairs?limit=7"][0])
    assert many["count"] == 7 and len(stored["/pairs?limit=7"]) > 3
    assert json.loads(stored["/screen/latest?sector=énergie&limit=4"][0])["count"] == 4


def test_a_screen_published_without_a_stored_index_still_pages(
    client: ContractClient, keys, runtime: Runtime, parses: list[str]
) -> None:
    drop_stored_indexes(runtime)
    whole = client.get(f"{BASE}/pairs", keys.personal).json()["pairs"]
    parses.clear()
    for path, items in (("/pairs", "pairs"), ("/screen/latest", "survivors")):
        r = client.get(f"{BASE}{path}?limit=3", keys.personal)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["count"] == 3 and body["next_cursor"] == f"{latest_id()}.3"
        names = [p if isinstance(p, str) else "/".join(p) for p in (i["pair"] for i in body[items])]
        assert names == [p["pair"] for p in whole[:3]]
    assert "survivors" in parses and "pairs" in parses


def test_a_stored_index_goes_with_its_screen(runtime: Runtime) -> None:
    with database.connection_context():
        first = run_screen(runtime, processes=1).screen_id
        indexed = {row.screen_id for row in ScreenPageIndex.select(ScreenPageIndex.screen)}
        assert first in indexed
        assert ScreenPageBlock.select().where(ScreenPageBlock.screen == first).exists()
        Screen.delete().where(Screen.id == first).execute()
        assert not ScreenPageIndex.select().where(ScreenPageIndex.screen == first).exists()
        assert not ScreenPageBlock.select().where(ScreenPageBlock.screen == first).exists()


def test_only_the_newest_screens_keep_their_blocks(
    client: ContractClient, keys, runtime: Runtime
) -> None:
    """Pages are served of the latest screen only: publishing drops the blocks of the screens
    before the one it replaces; a screen that lost them still pages, from its payload."""
    with database.connection_context():
        screens = [run_screen(runtime, processes=1).screen_id for _ in range(3)]
        blocked = {row.screen_id for row in ScreenPageBlock.select(ScreenPageBlock.screen)}
        assert blocked == set(screens[-page_blocks.KEPT_SCREENS :])
        indexed = {row.screen_id for row in ScreenPageIndex.select(ScreenPageIndex.screen)}
        assert set(screens) <= indexed
        Screen.delete().where(Screen.id.in_(screens[1:])).execute()
    runtime.screens.forget()
    r = client.get(f"{BASE}/screen/latest?limit=2", keys.personal)
    assert r.status_code == 200 and r.json()["next_cursor"] == f"{screens[0]}.2"


def upgraded_from_before(cli, version: int, table: type) -> None:  # type: ignore[no-untyped-def]
    """Make the database one from before migration ``version`` (which created ``table``),
    then ``db upgrade`` it: that migration, and only it, is applied again."""
    from pairscreen.db.models import SchemaVersion

    with database.connection_context():
        database.drop_tables([table])
        SchemaVersion.delete().where(SchemaVersion.version == version).execute()
    database.close()
    code, out, _ = cli("db", "upgrade")
    assert code == 0 and out.endswith(f"applied migrations [{version}]\n")


def test_migration_17_gives_an_old_database_the_table_and_its_screens_still_page(
    client: ContractClient, keys, runtime: Runtime, cli, parses: list[str]
) -> None:
    upgraded_from_before(cli, 17, ScreenPageIndex)
    runtime.screens.forget()
    parses.clear()
    r = client.get(f"{BASE}/screen/latest?limit=2", keys.personal)
    assert r.status_code == 200 and r.json()["count"] == 2
    assert parses == ["survivors"]  # its screen has no stored index: parsed, as before
    with database.connection_context():
        assert ScreenPageIndex.select().count() == 0
        run_screen(runtime, processes=1)
        assert ScreenPageIndex.select().count() == 1


def block_reads(statements: list[tuple[str, tuple]]) -> list[set[int]]:
    """The blocks each statement that read page items asked for (its parameters but the
    screen's id, the first)."""
    table = ScreenPageBlock._meta.table_name
    return [
        set(params[1:])
        for sql, params in statements
        if f'FROM "{table}"' in sql and '"block" IN' in sql
    ]


def test_the_first_pages_of_a_new_screen_read_their_blocks_and_never_the_payload(
    client: ContractClient,
    keys,
    runtime: Runtime,
    parses: list[str],
    statements: list[tuple[str, tuple]],
) -> None:
    payload = publish_crafted_screen(runtime, copies=24)  # several blocks of survivors
    n = len(payload["survivors"])
    screen_id = latest_id()
    with database.connection_context():
        stored = ScreenPageBlock.select().where(ScreenPageBlock.screen == screen_id).count()
    assert stored == -(-n // page_blocks.BLOCK_ITEMS) > 3
    asked = ["limit=100", "zone=bottom&min_score=0&limit=100", "sector=énergie&limit=5"]
    first: dict[str, bytes] = {}
    statements.clear()
    parses.clear()  # the publish itself walks the payload once, to build the index
    for path in VIEWS:
        for query in asked:
            r = client.get(f"{BASE}{path}?{query}", keys.personal)
            assert r.status_code == 200 and r.json()["count"] > 0, r.text
            first[f"{path}?{query}"] = r.content
    # Neither the pages nor the judgement of the screen's staleness read the payload: each
    # page read the blocks holding its items (the first 100 items: two blocks of 64), none
    # read them all.
    assert not [sql for sql, _ in statements if '"payload"' in sql]
    assert parses == []
    reads = block_reads(statements)
    assert reads[0] == {0, 1} and all(len(blocks) < stored for blocks in reads), reads

    # A payload that says nothing: the same first pages, byte for byte, from a fresh server.
    with database.connection_context():
        ScreenPayload.update(payload="{}").where(ScreenPayload.screen == screen_id).execute()
    runtime.screens.forget()
    for name, body in first.items():
        r = client.get(f"{BASE}{name}", keys.personal)
        assert r.status_code == 200 and r.content == body, name
    # Paging on through /pairs reads each block once: the server keeps the blocks it read.
    runtime.screens.forget()
    statements.clear()
    cursor, seen = None, 0
    while True:
        suffix = f"&cursor={cursor}" if cursor else ""
        body = client.get(f"{BASE}/pairs?limit=50{suffix}", keys.personal).json()
        seen += body["count"]
        cursor = body.get("next_cursor")
        if cursor is None:
            break
    assert seen == n
    read = [b for blocks in block_reads(statements) for b in blocks]
    assert sorted(read) == list(range(stored))


def test_migration_19_gives_an_old_database_the_table_and_its_screens_still_page(
    client: ContractClient, keys, runtime: Runtime, cli, statements: list[tuple[str, tuple]]
) -> None:
    upgraded_from_before(cli, 19, ScreenPageBlock)
    runtime.screens.forget()
    statements.clear()
    whole = client.get(f"{BASE}/pairs", keys.personal).json()["pairs"]
    r = client.get(f"{BASE}/pairs?limit=2", keys.personal)
    assert r.status_code == 200 and r.json()["pairs"] == whole[:2]
    # Its screen has an index but no blocks: the page is cut from the payload, as before.
    assert block_reads(statements) == []
    with database.connection_context():
        assert ScreenPageBlock.select().count() == 0
        run_screen(runtime, processes=1)
        assert ScreenPageBlock.select().count() > 0


def test_a_live_server_answers_a_new_screens_first_pages_without_its_payload(
    client: ContractClient, keys, runtime: Runtime, database_url: str
) -> None:
    """``pairscreen serve`` in its own process, as deployed: its first pages of a screen
    whose payload says nothing are those of the in-process app that read the real one, and
    it answers ``304`` to the screen's ``ETag``."""
    import httpx

    from tests.support.live_server import serving

    publish_crafted_screen(runtime, copies=24)
    firsts = ("zone=bottom&limit=100", "limit=100")
    asked = [f"{path}?{query}" for path in VIEWS for query in firsts]
    expected = {name: client.get(f"{BASE}{name}", keys.personal) for name in asked}
    with database.connection_context():
        ScreenPayload.update(payload="{}").where(ScreenPayload.screen == latest_id()).execute()
    database.close()
    auth = {"Authorization": f"Bearer {keys.personal}"}
    with serving(database_url) as server:
        for name, want in expected.items():
            r = httpx.get(f"{server.base}{name}", headers=auth, timeout=30)
            assert r.status_code == 200 and r.content == want.content, (name, server.log())
            assert r.headers["etag"] == want.headers["etag"]
            again = httpx.get(
                f"{server.base}{name}", headers={**auth, "If-None-Match": r.headers["etag"]}
            )
            assert again.status_code == 304


def test_a_server_notices_a_newer_screen_without_reading_a_payload(
    client: ContractClient,
    keys,
    runtime: Runtime,
    database_url: str,
    tmp_path,
    statements: list[tuple[str, tuple]],
) -> None:
    """A screen published by another process (the worker) is served after at most a second,
    found by one read of the newest row's id: no request reads a payload on the way."""
    import time

    from pairscreen.api.screen import RECHECK_SECONDS
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings

    before = latest_id()
    r = client.get(f"{BASE}/pairs?limit=1", keys.personal)
    assert r.json()["next_cursor"] == f"{before}.1"
    worker = build_runtime(load_settings(data_dir=tmp_path / "worker", database_url=database_url))
    with database.connection_context():
        newer = run_screen(worker, processes=1).screen_id  # this app's cache is not told
    time.sleep(RECHECK_SECONDS + 0.2)
    statements.clear()
    for path in VIEWS:
        for _ in range(3):
            r = client.get(f"{BASE}{path}?limit=1", keys.personal)
            assert r.json()["next_cursor"] == f"{newer}.1"
    assert not [sql for sql, _ in statements if '"payload"' in sql]
