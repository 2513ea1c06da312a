"""Where a screen's payload is stored (its own table, migration 20) and what storing a big
one costs in memory: a 2,000-asset screen's payload is about 440 MB of JSON, so publishing
must never hold it more than once (it held it up to five times before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pairscreen.db.connection import database
from pairscreen.db.models import SchemaVersion, Screen, ScreenPayload
from pairscreen.runtime import Runtime
from pairscreen.screen_store.payload_parts import PayloadParts
from tests.conftest import ContractClient

BASE = "/api/v1"

PUBLISH_BIG_SCREEN = """
import json, random, resource, sys
from datetime import date
from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.screen_store.published import stored_payload
from pairscreen.screen_store.payload_parts import PayloadParts
from pairscreen.screen_store.publish import ComputedScreen
from pairscreen.screen_store.survivor_blobs import SurvivorCodec

rng = random.Random(7)
codec = SurvivorCodec()
def survivor(i):  # compressed as it is made, as a screen's workers send survivors
    metrics = {f"m{k}": rng.random() for k in range(60)}
    text = json.dumps({"pair": [f"A{i}", f"B{i}"], "score": rng.random(), "metrics": metrics})
    return codec.pack(text.encode()), ""
survivors = [survivor(i) for i in range(int(sys.argv[1]))]
parts = PayloadParts('{"generated_at":"2026-11-27T00:00:00+00:00","survivors":[', survivors, "]}")
rt = build_runtime(load_settings(), migrate=True)
screen = ComputedScreen(clock.now(), parts, 1, parts.n_survivors, {}, "test")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
with database.connection_context():
    summary = rt.screens.publish(rt.settings, screen, as_of=date(2026, 11, 26))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
with database.connection_context():
    stored = stored_payload(summary.screen_id)
assert stored == parts.with_as_of(date(2026, 11, 26)).text()
print(json.dumps({"size": len(stored), "peak_growth": after - before}))
"""


def test_publishing_a_big_screen_on_sqlite_never_holds_its_text_whole(tmp_path: Path) -> None:
    """A fresh process publishes a screen of about 70 MB of JSON into a new SQLite file: its
    peak memory grows by less than a fifth of the text (before: the joined text, then twice
    its size inside SQLite, as a placeholder in the middle of the row)."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'big.sqlite3'}",
        "PAIRSCREEN_DATA_DIR": str(tmp_path),
        "PAIRSCREEN_LOAD_PLUGINS": "",
    }
    done = subprocess.run(
        [sys.executable, "-c", PUBLISH_BIG_SCREEN, "50000"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    assert measured["size"] > 60e6
    assert measured["peak_growth"] < measured["size"] / 5, measured


def test_migration_20_moves_every_payload_to_its_own_table(
    client: ContractClient, keys, runtime: Runtime, cli
) -> None:
    """An old database kept each payload in a column of ``screen``: after ``db upgrade`` the
    payloads are in ``screen_payload``, the column is gone and the same screen is served."""
    before = client.get(f"{BASE}/screen/latest", keys.personal)
    assert before.status_code == 200
    table, moved = Screen._meta.table_name, ScreenPayload._meta.table_name
    with database.connection_context():  # a database from before migration 20
        texts = {r.screen_id: r.payload for r in ScreenPayload.select()}
        assert texts
        database.execute_sql(f"ALTER TABLE {table} ADD COLUMN payload TEXT")
        for screen_id, text in texts.items():
            database.execute_sql(
                f"UPDATE {table} SET payload = {database.param} WHERE id = {database.param}",
                (text, screen_id),
            )
        database.drop_tables([ScreenPayload])
        SchemaVersion.delete().where(SchemaVersion.version == 20).execute()
    database.close()
    code, out, _ = cli("db", "upgrade")
    assert code == 0 and out.endswith("applied migrations [20]\n")
    with database.connection_context():
        assert {r.screen_id: r.payload for r in ScreenPayload.select()} == texts
        assert "payload" not in {c.name for c in database.get_columns(table)}
        assert moved in database.get_tables()
    runtime.screens.forget()
    after = client.get(f"{BASE}/screen/latest", keys.personal)
    assert after.status_code == 200 and after.json() == before.json()


def test_the_parts_of_a_payload_are_its_compact_json() -> None:
    """What publishing writes piece by piece is exactly the payload's compact JSON, wherever
    its survivors stand among its fields, with none or many."""
    bodies = [
        {"generated_at": "t", "survivors": [{"a": 1}, {"b": [1.5, None]}], "tail": "é"},
        {"survivors": []},
        {"survivors": [{"s": 1}], "z": None},
        {"q": 2, "survivors": []},
    ]
    for body in bodies:
        parts = PayloadParts.of(body)
        assert parts.text() == json.dumps(body, allow_nan=False, separators=(",", ":"))
        assert "".join(parts.pieces()) == parts.text()
        assert parts.fields() == {k: v for k, v in body.items() if k != "survivors"}
