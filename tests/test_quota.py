"""Quota exactness, the in-flight limit, failed requests, the reset boundary, rotation.

Quota, in-flight limit and key rotation, against a live server where concurrency matters.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.db.connection import database
from tests.support.live_server import live_server

BASE = "/api/v1"
RATE_LIMIT = re.compile(r'^"daily";r=(\d+);t=(\d+)$')
POLICY = re.compile(r'^"daily";q=(\d+);w=86400$')


def _hammer(base: str, key: str, clients: int, path: str) -> tuple[Counter, list[str]]:
    """``clients`` threads repeat ``path`` (retrying after 409) until each receives 429."""
    statuses: Counter = Counter()
    problems: list[str] = []
    lock = threading.Lock()

    def run() -> None:
        with httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as c:
            while True:
                r = c.get(path)
                with lock:
                    statuses[r.status_code] += 1
                    if r.status_code in (200, 409, 429):
                        if not RATE_LIMIT.match(r.headers.get("RateLimit", "")):
                            problems.append(
                                f"{r.status_code} RateLimit={r.headers.get('RateLimit')!r}"
                            )
                        if not POLICY.match(r.headers.get("RateLimit-Policy", "")):
                            problems.append(f"{r.status_code} policy")
                    if r.status_code in (409, 429) and not re.fullmatch(
                        r"\d+", r.headers.get("Retry-After", "")
                    ):
                        problems.append(f"{r.status_code} without Retry-After")
                    if "database is locked" in r.text:
                        problems.append("database is locked")
                if r.status_code == 429:
                    return
                if r.status_code not in (200, 409):
                    with lock:
                        problems.append(f"unexpected {r.status_code}: {r.text[:200]}")
                    return

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses, problems


@pytest.mark.slow
def test_thirty_clients_get_exactly_the_daily_quota(runtime, database_url):
    with database.connection_context():
        accounts.create_user("q@example.com", "personal", expires=clock.now() + timedelta(days=30))
        key = accounts.rotate_key("q@example.com")
    database.close()
    with live_server(database_url) as base:
        statuses, problems = _hammer(base, key, 30, "/pair/ETH/BTC?bt=90")
        assert problems == []
        assert statuses[200] == 200, statuses
        assert statuses[429] == 30
        assert statuses[409] > 0, "30 clients on a limit of 2 in flight must see 409s"
        assert not any(s >= 500 for s in statuses)
        me = httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {key}"}).json()
        assert me["quota"]["used_today"] == 200 and me["quota"]["remaining_today"] == 0
        print(f"\nR1 quota exactness: {dict(statuses)}")

        # Rotation is immediate: the very next request with the old key is refused.
        with database.connection_context():
            new_key = accounts.rotate_key("q@example.com")
        old = httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {key}"})
        assert old.status_code == 401
        assert (
            httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {new_key}"}).status_code
            == 200
        )
    database.close()


@pytest.mark.slow
def test_first_request_of_the_day_race(runtime, database_url):
    """50 concurrent first calls create one usage row; used equals successes."""
    from pairscreen.db.models import QuotaUsage

    with database.connection_context():
        accounts.create_user("race@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("race@example.com")
    database.close()
    with live_server(database_url) as base:
        barrier = threading.Barrier(50)
        results: list[int] = []

        def one() -> None:
            with httpx.Client(timeout=60) as c:
                barrier.wait()
                r = c.get(f"{base}/pair/SOL/ETH?bt=90", headers={"Authorization": f"Bearer {key}"})
                results.append(r.status_code)

        threads = [threading.Thread(target=one) for _ in range(50)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    with database.connection_context():
        rows = list(QuotaUsage.select())
    assert len(rows) == 1
    assert rows[0].used == results.count(200)
    assert set(results) <= {200, 409}


def test_failed_requests_consume_nothing(client, keys):
    """400, 401, 403, 404 and 409-free failures leave used_today unchanged."""
    h = keys.personal
    client.get(f"{BASE}/pair/ETH/BTC", h)
    before = client.get(f"{BASE}/me", h).json()["quota"]["used_today"]
    assert before == 1
    assert client.get(f"{BASE}/pair/NOPE/BTC", h).status_code == 404
    assert client.get(f"{BASE}/pair/BTC/BTC", h).status_code == 400
    assert client.get(f"{BASE}/pair/ETH/BTC?bt=7", h).status_code == 400
    assert client.get(f"{BASE}/pair/ETH/BTC", "rr_bad").status_code == 401
    assert client.get(f"{BASE}/pair/ETH/BTC", keys.expired).status_code == 403
    assert client.get(f"{BASE}/me", h).json()["quota"]["used_today"] == before


def test_in_flight_limit_gives_409_and_consumes_nothing(client, keys, runtime):
    """With every slot held, the next compute request gets 409 with Retry-After: 1."""
    from pairscreen.access import slots as compute_slots

    with database.connection_context():
        user = accounts.find_user("personal@example.com")
        held = [compute_slots.acquire(user.id, 2, clock.now(), 60) for _ in range(2)]
    assert all(held)
    r = client.get(f"{BASE}/pair/ETH/BTC", keys.personal)
    assert r.status_code == 409 and r.headers["Retry-After"] == "1"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert client.get(f"{BASE}/me", keys.personal).json()["quota"]["used_today"] == 0
    with database.connection_context():
        compute_slots.release(held[0])
    assert client.get(f"{BASE}/pair/ETH/BTC", keys.personal).status_code == 200


def test_crashed_holder_slot_expires(client, keys, runtime):
    """A slot whose holder died is free again after its TTL."""
    from pairscreen.access import slots as compute_slots

    with database.connection_context():
        user = accounts.find_user("personal@example.com")
        past = clock.now() - timedelta(seconds=120)
        assert compute_slots.acquire(user.id, 2, past, 60)
        assert compute_slots.acquire(user.id, 2, past, 60)
    assert client.get(f"{BASE}/pair/ETH/BTC", keys.personal).status_code == 200


def test_reset_boundary_with_frozen_clock(client, keys, monkeypatch):
    """At 23:59:59 UTC the 429 says Retry-After: 1; after midnight the quota is back."""
    from pairscreen.db.models import QuotaUsage

    frozen = datetime(2026, 11, 22, 23, 59, 59, tzinfo=UTC)
    monkeypatch.setattr(clock, "now", lambda: frozen)
    with database.connection_context():
        user = accounts.find_user("personal@example.com")
        QuotaUsage.create(user=user.id, day=frozen.date(), used=200)
    r = client.get(f"{BASE}/pair/ETH/BTC", keys.personal)
    assert r.status_code == 429
    assert r.headers["Retry-After"] == "1"
    assert RATE_LIMIT.match(r.headers["RateLimit"]).group(1) == "0"
    assert "00:00 UTC" in r.text
    later = frozen + timedelta(seconds=1)
    monkeypatch.setattr(clock, "now", lambda: later)
    r = client.get(f"{BASE}/pair/ETH/BTC", keys.personal)
    assert r.status_code == 200
    assert RATE_LIMIT.match(r.headers["RateLimit"]).groups() == ("199", "86400")


def test_concurrent_rotations_leave_one_active_key(runtime, keys):
    """20 concurrent rotations leave exactly one key that works."""
    from pairscreen.db.models import ApiKey

    issued: list[str] = []

    def rotate() -> None:
        with database.connection_context():
            issued.append(accounts.rotate_key("pro@example.com"))

    threads = [threading.Thread(target=rotate) for _ in range(20)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    working = []
    with database.connection_context():
        for key in issued:
            try:
                accounts.authenticate(key)
                working.append(key)
            except Exception:
                pass
        assert (
            ApiKey.select().where(ApiKey.user == accounts.find_user("pro@example.com").id).count()
            == 1
        )
    assert len(working) == 1
