"""Exact accounting under overload, against a live ``pairscreen serve``.

The sleeper plugin (:mod:`tests.support.sleeper`) makes every computation take its time and
records when each ran; a lock TTL of one second makes computations and queue waits outlive
their reservation quickly. Every 200 must be charged, no account may run more computations
than its in-flight limit, a request queued too long answers 503 with Retry-After, and a
client that leaves before its answer costs nothing.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.db.connection import database
from tests.conftest import CONTRACT
from tests.support.live_server import LiveServer, serving
from tests.support.sleeper import Sleeper

# Each test counts one UTC day's quota on live servers.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_quota_day")]

PAIR = "/pair/ETH/BTC?bt=90"
DAILY_LIMIT = 6
IN_FLIGHT = 2
QUEUE_SECONDS = 1.5


def checked(response: httpx.Response) -> httpx.Response:
    """``response``, validated against the contract."""
    path = response.request.url.path
    CONTRACT.check("GET", path, response.status_code, dict(response.headers), response.content)
    return response


@dataclass
class World:
    server: LiveServer
    sleeper: Sleeper
    database_url: str
    env: dict[str, str]

    def get(self, path: str, key: str) -> httpx.Response:
        return checked(
            httpx.get(
                self.server.base + path, headers={"Authorization": f"Bearer {key}"}, timeout=60
            )
        )

    def quota(self, key: str) -> tuple[int, int]:
        """``used_today`` and ``remaining_today`` as ``/me`` tells them."""
        figures = self.get("/me", key).json()["quota"]
        return figures["used_today"], figures["remaining_today"]


@pytest.fixture()
def world(runtime, database_url: str, tmp_path: Path) -> Iterator[World]:
    sleeper, env = Sleeper.install(tmp_path, seconds=2.5)
    database.close()
    env |= {
        "PAIRSCREEN_LOCK_TTL": "1",
        "PAIRSCREEN_COMPUTE_THREADS": "2",
        "PAIRSCREEN_COMPUTE_QUEUE_TIMEOUT": str(QUEUE_SECONDS),
        "PAIRSCREEN_DAILY_LIMIT_PERSONAL": str(DAILY_LIMIT),
        "PAIRSCREEN_IN_FLIGHT_PERSONAL": str(IN_FLIGHT),
        "PAIRSCREEN_IN_FLIGHT_PRO": "50",
    }
    with serving(database_url, env=env) as server:
        yield World(server, sleeper, database_url, env)
    database.close()


def new_key(email: str, tier: str = "personal") -> str:
    with database.connection_context():
        accounts.create_user(email, tier, expires=clock.now() + timedelta(days=30))
        return accounts.rotate_key(email)


def hammer(world: World, key: str, clients: int) -> Counter[int]:
    """``clients`` threads retrying after 409 and 503 until the quota answers 429."""
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(
            base_url=world.server.base, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as c:
            while True:
                r = checked(c.get(PAIR))
                with lock:
                    statuses[r.status_code] += 1
                if r.status_code in (409, 503):
                    assert r.headers["Retry-After"].isdigit()
                    time.sleep(0.05)
                elif r.status_code != 200:
                    return

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_computations_outliving_the_lock_ttl_are_charged_and_limited(world: World):
    """2.5 s computations on a 1 s TTL: the daily limit exactly, never more than 2 at once."""
    key = new_key("overrun@example.com")
    statuses = hammer(world, key, clients=5)
    assert statuses[200] == DAILY_LIMIT, statuses
    assert set(statuses) <= {200, 409, 429}, statuses
    assert world.quota(key) == (DAILY_LIMIT, 0)
    assert len(world.sleeper.spans()) == DAILY_LIMIT
    assert world.sleeper.most_at_once() == IN_FLIGHT
    print(f"\nR21 overrun (2.5 s computes, 1 s TTL): {dict(statuses)}")


def test_requests_queued_too_long_answer_503_and_cost_nothing(world: World):
    """Eight admitted requests on two compute threads, one second each: the ones that would
    wait more than 1.5 s answer 503 with Retry-After; every 200 is charged, nothing else."""
    world.sleeper.sleep(1.0)
    keys = [new_key(f"queue{i}@example.com") for i in range(4)]
    results: list[httpx.Response] = []
    lock = threading.Lock()

    def one(key: str) -> None:
        r = world.get(PAIR, key)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=one, args=(k,)) for k in keys for _ in range(IN_FLIGHT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = Counter(r.status_code for r in results)
    assert set(statuses) == {200, 503}, statuses
    for r in results:
        if r.status_code == 503:
            assert r.headers["Retry-After"].isdigit() and "nothing was charged" in r.text
    assert sum(world.quota(k)[0] for k in keys) == statuses[200]
    assert all(world.quota(k)[1] == DAILY_LIMIT - world.quota(k)[0] for k in keys)
    assert world.sleeper.most_at_once() <= 2
    print(f"\nR21 queue bound ({QUEUE_SECONDS} s, 8 requests on 2 threads): {dict(statuses)}")


def test_clients_that_disconnect_mid_computation_cost_nothing(world: World):
    """50 clients close their socket 100 ms into a one-second computation: 0 units charged,
    and every slot is free again once the computations are over."""
    world.sleeper.sleep(1.0)
    key = new_key("vanish@example.com", tier="pro")
    address = urlsplit(world.server.base)
    request = (
        f"GET {address.path}{PAIR} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
    ).encode()
    sockets = []
    for _ in range(50):
        s = socket.create_connection((address.hostname, address.port))
        s.sendall(request)
        sockets.append(s)
    time.sleep(0.1)
    for s in sockets:
        s.close()
    time.sleep(3.0)  # the computations that had started run out
    used, remaining = world.quota(key)
    assert used == 0
    limit = remaining
    ok = world.get(PAIR, key)
    assert ok.status_code == 200
    assert world.quota(key) == (1, limit - 1)
    print(f"\nR22 vanished clients: 50 left mid-computation, {used} units charged")


def test_a_crashed_requests_unit_comes_back_without_another_compute(world: World):
    """SIGKILL the server mid-computation: after the TTL, ``/me`` of a new server shows the
    unit back, though the account made no compute request since."""
    world.sleeper.sleep(10.0)
    key = new_key("crash@example.com")
    outcome: list[object] = []

    def request() -> None:
        try:
            outcome.append(world.get(PAIR, key).status_code)
        except httpx.HTTPError as exc:
            outcome.append(type(exc).__name__)

    doomed = threading.Thread(target=request)
    doomed.start()
    deadline = time.monotonic() + 10
    while world.quota(key) != (0, DAILY_LIMIT - 1):  # reserved: the computation runs
        assert time.monotonic() < deadline
        time.sleep(0.05)
    world.server.process.kill()
    doomed.join()
    assert outcome and outcome[0] != 200, outcome
    with serving(world.database_url, env=world.env) as again:
        time.sleep(1.5)  # past the TTL of the dead request's slot
        r = checked(
            httpx.get(f"{again.base}/me", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        )
    assert (r.json()["quota"]["used_today"], r.json()["quota"]["remaining_today"]) == (
        0,
        DAILY_LIMIT,
    )
