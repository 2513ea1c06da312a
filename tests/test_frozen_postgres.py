"""A frozen PostgreSQL server (SIGSTOP: no refusal, no answer) against a live server.

Every request must answer 503 with Retry-After within the connect timeout plus a second,
however many arrive together: no process-wide lock may be held while one connect waits.
Once the server thaws, requests succeed again within a second. The server is the test's own
(:mod:`tests.support.own_postgres`), started with ``pg_ctl``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from pairscreen.access import accounts
from pairscreen.db.connection import database, init_database
from tests.conftest import CONTRACT
from tests.support.databases import TEST_DATABASE_URL
from tests.support.live_server import serving
from tests.support.own_postgres import own_postgres

# The server is the test's own, whatever the run's database: once, in the PostgreSQL pass.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not TEST_DATABASE_URL, reason="PostgreSQL pass only"),
]

CONNECT_TIMEOUT = 2


def timed_me(base: str, key: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    r = httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    CONTRACT.check("GET", "/api/v1/me", r.status_code, dict(r.headers), r.content)
    return r, time.monotonic() - started


@pytest.mark.parametrize("pooled", [False, True], ids=["per-request", "pool"])
def test_eight_requests_on_a_frozen_postgres_all_answer_in_time(tmp_path: Path, pooled: bool):
    with own_postgres() as pg:
        query = f"connect_timeout={CONNECT_TIMEOUT}" + ("&max_connections=20" if pooled else "")
        scheme = "postgresql+pool" if pooled else "postgresql"
        url = pg.url().replace("postgresql", scheme, 1) + f"?{query}"
        init_database(url)
        with database.connection_context():
            accounts.create_user("frozen@example.com", "pro", lifetime=True)
            key = accounts.rotate_key("frozen@example.com")
        database.close()
        env = {"PAIRSCREEN_DATA_DIR": str(tmp_path)}
        with serving(url, env=env) as server:
            assert all(timed_me(server.base, key)[0].status_code == 200 for _ in range(3))
            os.kill(pg.pid, signal.SIGSTOP)
            try:
                answers: list[tuple[httpx.Response, float]] = []
                lock = threading.Lock()

                def one() -> None:
                    answer = timed_me(server.base, key)
                    with lock:
                        answers.append(answer)

                threads = [threading.Thread(target=one) for _ in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            finally:
                os.kill(pg.pid, signal.SIGCONT)
            thawed = time.monotonic()
            while timed_me(server.base, key)[0].status_code != 200:
                assert time.monotonic() - thawed < 1.0, "not healthy within 1 s of SIGCONT"
                time.sleep(0.05)
            recovered = time.monotonic() - thawed
    statuses = Counter(r.status_code for r, _ in answers)
    slowest = max(elapsed for _, elapsed in answers)
    assert set(statuses) <= {200, 503} and (pooled or set(statuses) == {503}), statuses
    for r, _ in answers:
        if r.status_code == 503:
            assert r.headers["Retry-After"].isdigit() and "database" in r.text
    assert slowest < CONNECT_TIMEOUT + 1, f"the slowest answer took {slowest:.2f} s"
    print(
        f"\nR23 frozen PostgreSQL ({'pool' if pooled else 'per request'}): 8 requests "
        f"{dict(statuses)}, slowest {slowest:.2f} s (connect timeout {CONNECT_TIMEOUT} s); "
        f"healthy {recovered:.2f} s after SIGCONT"
    )
