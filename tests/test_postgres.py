"""On PostgreSQL, pool exhaustion and a server restart give fast plain-text 503s, never
a hung request, and the error rate is back to 0 once the server is back.

The restart is played by a TCP proxy between the service and the (shared) PostgreSQL
server: stopping it cuts the service's connections and refuses new ones, as a restarting
server does, without touching anyone else's connections. The answer to a database failure
is also checked in-process, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

import httpx
import peewee
import pytest

from pairscreen.access import accounts
from pairscreen.db.connection import database
from tests.conftest import CONTRACT
from tests.support.live_server import serving
from tests.support.probe import Probe
from tests.support.tcp_proxy import TcpProxy

TEXT = "text/plain; charset=utf-8"
FAST_SECONDS = 2.0


def with_server(url: str, *, port: int | None = None, pool: str | None = None) -> str:
    """``url`` moved to 127.0.0.1:``port`` and/or made pooled with the query ``pool``."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+")[0] + ("+pool" if pool is not None else "")
    netloc = parts.netloc if port is None else f"{parts.netloc.rsplit('@', 1)[0]}@127.0.0.1:{port}"
    return urlunsplit((scheme, netloc, parts.path, pool or parts.query, ""))


def pro_key(email: str) -> str:
    with database.connection_context():
        accounts.create_user(email, "pro", lifetime=True)
        return accounts.rotate_key(email)


def timed_get(url: str, key: str, timeout: float = 30) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout)
    return r, time.monotonic() - started


def assert_fast_503(r: httpx.Response, elapsed: float) -> None:
    assert r.status_code == 503, (r.status_code, r.text)
    assert r.headers["content-type"] == TEXT and r.headers["Retry-After"] == "1"
    assert "database" in r.text and "Traceback" not in r.text
    assert elapsed < FAST_SECONDS, f"a 503 took {elapsed:.2f} s"
    CONTRACT.check("GET", r.request.url.path, r.status_code, dict(r.headers), r.content)


@pytest.mark.slow
@pytest.mark.parametrize("pooled", [False, True], ids=["per-request", "pool"])
def test_server_restart_gives_fast_503s_then_recovers(postgres, runtime, database_url, pooled):
    key = pro_key("restart@example.com")
    database.close()
    target = urlsplit(database_url)
    proxy = TcpProxy((target.hostname or "127.0.0.1", target.port or 5432)).start()
    url = with_server(database_url, port=proxy.port, pool="max_connections=8" if pooled else None)
    try:
        with serving(url) as server:
            base = server.base
            assert Counter(timed_get(f"{base}/me", key)[0].status_code for _ in range(10)) == {
                200: 10
            }
            assert timed_get(f"{base}/pair/ETH/BTC?bt=90", key)[0].status_code == 200

            proxy.stop()  # the server goes down: open connections die, new ones are refused
            for path in ("/me", "/pairs", "/pair/SOL/ETH?bt=90", "/me", "/screen/latest"):
                assert_fast_503(*timed_get(base + path, key))

            proxy.start()  # back: not one more error
            after = Counter(
                timed_get(f"{base}{p}", key)[0].status_code
                for p in ["/me", "/pairs", "/pair/ETH/BTC?bt=90"] * 7
            )
            assert after == {200: 21}, after
            quota = httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {key}"}).json()[
                "quota"
            ]
            assert quota["used_today"] == 1 + 7, "failed requests consumed nothing"
            log = server.log()
            assert "database unavailable" in log and "Traceback" not in log
    finally:
        proxy.stop()


@pytest.mark.slow
def test_pool_exhaustion_gives_fast_503s(postgres, runtime, database_url, tmp_path):
    key = pro_key("pool@example.com")  # Pro: 4 computations in flight, more than the pool
    database.close()
    probe, env = Probe.install(tmp_path)
    env["PAIRSCREEN_COMPUTE_THREADS"] = "4"  # both held computations run (and hold a connection)
    url = with_server(database_url, pool="max_connections=2&timeout=1")
    with serving(url, env=env) as server:
        base = server.base
        assert timed_get(f"{base}/me", key)[0].status_code == 200
        probe.hold()
        held: list[int] = []
        threads = [
            threading.Thread(
                target=lambda: held.append(
                    timed_get(f"{base}/pair/ETH/BTC?bt=90", key)[0].status_code
                )
            )
            for _ in range(2)
        ]
        for t in threads:
            t.start()
        probe.wait_computing(2)  # both pooled connections are in use by held requests
        for path in ("/me", "/pairs", "/pair/SOL/ETH?bt=90"):
            assert_fast_503(*timed_get(base + path, key))
        probe.release()
        for t in threads:
            t.join()
        assert held == [200, 200]
        assert Counter(timed_get(f"{base}/me", key)[0].status_code for _ in range(10)) == {200: 10}
        used = httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {key}"}).json()["quota"][
            "used_today"
        ]
        assert used == 2


@pytest.mark.parametrize(
    "error",
    [
        peewee.OperationalError("server closed the connection unexpectedly"),
        peewee.InterfaceError("connection already closed"),
    ],
)
def test_database_errors_are_plain_503s_that_cost_nothing(client, keys, monkeypatch, error):
    """In-process, on the run's database: the database fails inside a compute request."""
    from pairscreen.api import pair

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(pair, "compute_snapshot", fail)
    r = client.get("/api/v1/pair/ETH/BTC", keys.personal)  # checked against openapi.yaml's 503
    assert r.status_code == 503 and r.headers["content-type"] == TEXT
    assert r.headers["Retry-After"] == "1" and "closed" not in r.text
    assert client.get("/api/v1/me", keys.personal).json()["quota"]["used_today"] == 0


def test_portable_upsert_and_utc_timestamps(empty_runtime):
    """On the run's database: JobRun's upsert (PostgreSQL has no REPLACE) and UTC round trips,
    whatever the session's time zone."""
    from datetime import UTC, datetime, timedelta, timezone

    from pairscreen.db.connection import is_sqlite
    from pairscreen.db.models import JobRun

    first = datetime(2026, 3, 29, 0, 30, 15, 123456, tzinfo=UTC)  # a DST night in Europe
    later = first.astimezone(timezone(timedelta(hours=-5))) + timedelta(hours=1)  # not UTC
    with database.connection_context():
        if not is_sqlite():
            database.execute_sql("SET TIME ZONE 'Europe/Berlin'")
        JobRun.replace(name="screen", finished_at=first).execute()
        assert JobRun.get_by_id("screen").finished_at == first
        JobRun.replace(name="screen", finished_at=later).execute()
        rows = list(JobRun.select())
    assert len(rows) == 1
    assert rows[0].finished_at == later and rows[0].finished_at.tzinfo == UTC
