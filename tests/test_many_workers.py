"""Keys, quota and the in-flight lock across processes: ``pairscreen serve --workers 4``.

Quota exactness, the in-flight limit and key rotation against a live server with four uvicorn
worker processes, on the database of the run (SQLite by default, PostgreSQL with
``PAIRSCREEN_TEST_DATABASE_URL``).

The probe plugin (:mod:`tests.support.probe`) records which worker process computed each
request and holds computations on demand: that is how the tests see the spread over workers,
keep requests in flight on purpose, and find the worker to kill in the middle of a request.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.db.connection import database
from tests.support.live_server import LiveServer, serving
from tests.support.probe import Probe

# Each test counts one UTC day's quota on live servers.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_quota_day")]

WORKERS = 4
LOCK_TTL_SECONDS = 8
PAIR = "/pair/ETH/BTC?bt=90"


@dataclass
class World:
    server: LiveServer
    probe: Probe

    def get(self, path: str, key: str) -> httpx.Response:
        """One request on a fresh connection (so any worker may accept it)."""
        return httpx.get(
            self.server.base + path, headers={"Authorization": f"Bearer {key}"}, timeout=60
        )

    def used_today(self, key: str) -> tuple[int, int]:
        quota = self.get("/me", key).json()["quota"]
        return quota["used_today"], quota["remaining_today"]


@pytest.fixture()
def world(runtime, database_url: str, tmp_path: Path) -> Iterator[World]:
    probe, env = Probe.install(tmp_path)
    database.close()
    env["PAIRSCREEN_LOCK_TTL"] = str(LOCK_TTL_SECONDS)
    # Two compute threads per worker: one worker may hold both of an account's slots.
    env["PAIRSCREEN_COMPUTE_THREADS"] = "2"
    with serving(database_url, workers=WORKERS, env=env) as server:
        deadline = time.monotonic() + 90
        # Every worker built its own runtime (the app factory) and loaded the plugins.
        while not (
            len(server.worker_pids()) == WORKERS and server.worker_pids() <= set(probe.loaded)
        ):
            assert time.monotonic() < deadline, (
                f"workers {server.worker_pids()}, loaded {probe.loaded}"
            )
            time.sleep(0.1)
        try:
            yield World(server, probe)
        finally:
            probe.release()
    database.close()


def new_key(email: str, tier: str = "personal") -> str:
    with database.connection_context():
        accounts.create_user(email, tier, expires=clock.now() + timedelta(days=30))
        return accounts.rotate_key(email)


def test_sixty_clients_on_four_workers_get_exactly_the_daily_quota(world: World):
    """60 clients, one 200/day key, retrying after 409 until 429: exactly 200 successes."""
    key = new_key("r1@example.com")
    statuses: Counter = Counter()
    problems: list[str] = []
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(
            base_url=world.server.base, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as c:
            while True:
                r = c.get(PAIR)
                with lock:
                    statuses[r.status_code] += 1
                    if r.status_code not in (200, 409, 429):
                        problems.append(f"{r.status_code}: {r.text[:200]}")
                if r.status_code == 429:
                    if not r.headers.get("Retry-After", "").isdigit():
                        with lock:
                            problems.append("429 without Retry-After")
                    return
                if r.status_code == 409:
                    time.sleep(random.uniform(0.01, 0.05))  # retry after a 409, jittered
                elif r.status_code != 200:
                    return

    threads = [threading.Thread(target=client) for _ in range(60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    assert statuses[200] == 200, statuses
    assert statuses[429] == 60
    assert statuses[409] > 0, "60 clients on an in-flight limit of 2 must see 409s"
    assert world.used_today(key) == (200, 0)
    by_worker = Counter(world.probe.computed)
    assert sum(by_worker.values()) == 200
    assert len(by_worker) >= 2, f"the successes came from one worker only: {by_worker}"
    print(
        f"\nR1 on {WORKERS} workers: {dict(statuses)}; "
        f"successes per worker {sorted(by_worker.values())}"
    )


def test_rotated_key_is_refused_by_every_worker(world: World):
    """After rotation, 200 requests with the old key over fresh connections: 0 successes."""
    old = new_key("r7@example.com")
    assert all(world.get("/me", old).status_code == 200 for _ in range(20))  # every worker saw it
    with database.connection_context():
        new = accounts.rotate_key("r7@example.com")
    refused = Counter(world.get("/me", old).status_code for _ in range(200))
    assert refused == Counter({401: 200}), refused
    assert Counter(world.get("/me", new).status_code for _ in range(40)) == Counter({200: 40})


def test_in_flight_limit_holds_across_workers(world: World):
    """A Personal key (2 in flight) with computations held open on 4 workers."""
    key = new_key("r6@example.com")
    results: list[tuple[int, float, float]] = []

    def one() -> None:
        started = time.monotonic()
        r = world.get(PAIR, key)
        results.append((r.status_code, started, time.monotonic()))

    for _wave in range(3):
        world.probe.hold()
        before, answered = len(world.probe.computed), len(results)
        threads = [threading.Thread(target=one) for _ in range(12)]
        for t in threads:
            t.start()
        world.probe.wait_computing(before + 2)
        deadline = time.monotonic() + 30
        while len(results) < answered + 10:  # the other ten are answered while two are held
            assert time.monotonic() < deadline, f"{len(results) - answered} of 10 answered"
            time.sleep(0.02)
        assert len(world.probe.computed) == before + 2, "a third computation got past the lock"
        world.probe.release()
        for t in threads:
            t.join()
    statuses = Counter(status for status, _, _ in results)
    assert statuses == Counter({200: 6, 409: 30}), statuses
    successes = sorted((start, end) for status, start, end in results if status == 200)
    most = max(sum(1 for s, e in successes if s <= moment < e) for moment, _ in successes)
    assert most <= 2
    assert world.used_today(key) == (6, 194)
    print(
        f"\nR6 across {WORKERS} workers: {dict(statuses)}; held computations ran on "
        f"{len(set(world.probe.computed))} worker(s)"
    )


def test_killed_worker_leaks_no_quota_and_its_slot_expires(world: World):
    """SIGKILL the worker in the middle of a request: no quota spent, slot back after TTL."""
    key = new_key("kill@example.com")
    world.probe.hold()
    outcome: list[object] = []

    def doomed() -> None:
        try:
            outcome.append(world.get(PAIR, key).status_code)
        except httpx.HTTPError as exc:
            outcome.append(type(exc).__name__)

    thread = threading.Thread(target=doomed)
    thread.start()
    [victim] = world.probe.wait_computing(1)
    killed_at = time.monotonic()
    assert victim in world.server.worker_pids()
    os.kill(victim, signal.SIGKILL)
    thread.join(timeout=30)
    assert outcome and outcome[0] != 200, outcome
    world.probe.release()

    # Nothing was charged; the dead request's unit stays reserved until its slot expires.
    assert world.used_today(key) == (0, 199)
    # Its slot is still held: one more held request fills the limit of 2, the next gets 409.
    world.probe.hold()
    held = threading.Thread(target=lambda: outcome.append(world.get(PAIR, key).status_code))
    held.start()
    world.probe.wait_computing(2)
    assert time.monotonic() < killed_at + LOCK_TTL_SECONDS - 1, "too slow to see the held slot"
    refused = world.get(PAIR, key)
    assert refused.status_code == 409 and refused.headers["Retry-After"] == "1"
    world.probe.release()
    held.join()
    assert outcome[-1] == 200

    # After the lock TTL the dead request's slot is free again and its unit comes back.
    time.sleep(max(0.0, killed_at + LOCK_TTL_SECONDS + 0.5 - time.monotonic()))
    world.probe.hold()
    pair = [
        threading.Thread(target=lambda: outcome.append(world.get(PAIR, key).status_code))
        for _ in range(2)
    ]
    for t in pair:
        t.start()
    world.probe.wait_computing(4)  # both held at once: two free slots
    world.probe.release()
    for t in pair:
        t.join()
    assert outcome[-2:] == [200, 200]
    assert world.used_today(key) == (3, 197)
