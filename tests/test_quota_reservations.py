"""The two-phase quota reservation: charged on success, given back on failure or expiry.

Service level, on the database of the run (SQLite or PostgreSQL); the live, multi-process
version of the crash case is in ``test_many_workers.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from pairscreen import clock
from pairscreen.access import accounts, quota
from pairscreen.access import slots as compute_slots
from pairscreen.access.admission import admit, settle
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.db.models import ComputeSlot, QuotaUsage
from pairscreen.errors import QuotaExhausted

TTL = 60


@pytest.fixture()
def user_id(empty_runtime) -> Iterator[int]:  # type: ignore[no-untyped-def]
    with database.connection_context():
        user = accounts.create_user(
            "r@example.com", "personal", expires=clock.now() + timedelta(days=9)
        )
        yield user.id


def counters(user_id: int) -> tuple[int, int]:
    row = QuotaUsage.get((QuotaUsage.user == user_id) & (QuotaUsage.day == clock.today()))
    return row.used, row.pending


def marks(user_id: int) -> list:
    return [
        s.reserved_day
        for s in ComputeSlot.select().where(ComputeSlot.user == user_id).order_by(ComputeSlot.slot)
    ]


def test_a_reserved_unit_is_pending_until_confirmed_exactly_once(user_id: int):
    at = clock.now()
    held = compute_slots.acquire(user_id, 2, at, TTL)
    state = quota.reserve(held, 200, at)
    assert (state.used, state.pending, state.remaining) == (0, 1, 199)
    assert counters(user_id) == (0, 1) and marks(user_id) == [at.date(), None]
    assert quota.confirm(held, state.day) is True
    assert counters(user_id) == (1, 0) and marks(user_id) == [None, None]
    assert quota.confirm(held, state.day) is False  # settled once only
    quota.cancel(held, state.day)
    assert counters(user_id) == (1, 0)
    compute_slots.release(held)
    assert compute_slots.acquire(user_id, 1, at, TTL) is not None


def test_a_cancelled_unit_costs_nothing(user_id: int):
    at = clock.now()
    held = compute_slots.acquire(user_id, 2, at, TTL)
    quota.reserve(held, 200, at)
    quota.cancel(held, clock.today(at))
    assert counters(user_id) == (0, 0)
    assert quota.usage(user_id, 200, at).remaining == 200


def test_pending_units_count_against_the_limit(user_id: int):
    at = clock.now()
    first, second, third = (compute_slots.acquire(user_id, 3, at, TTL) for _ in range(3))
    quota.reserve(first, 2, at)
    quota.reserve(second, 2, at)
    with pytest.raises(QuotaExhausted) as refused:
        quota.reserve(third, 2, at)
    assert refused.value.headers["Retry-After"].isdigit()
    assert counters(user_id) == (0, 2)
    assert marks(user_id)[2] is None, "a refused reservation leaves no mark"


def test_a_dead_holders_unit_comes_back_when_its_slot_expires(user_id: int):
    at = clock.now()
    dead = compute_slots.acquire(user_id, 2, at, TTL)
    quota.reserve(dead, 200, at)  # ... and the process dies here
    compute_slots.release(dead)  # a release without settling does not free the slot
    assert marks(user_id)[0] == at.date()

    before_expiry = at + timedelta(seconds=TTL - 1)
    assert quota.reclaim_expired(user_id, before_expiry) == 0
    other = compute_slots.acquire(user_id, 2, before_expiry, TTL)
    assert other is not None and other.slot == 1
    assert compute_slots.acquire(user_id, 2, before_expiry, TTL) is None

    after_expiry = at + timedelta(seconds=TTL + 1)
    assert compute_slots.acquire(user_id, 2, after_expiry, TTL) is None, (
        "an expired slot still carrying a reservation is not taken before it is reclaimed"
    )
    assert quota.reclaim_expired(None, after_expiry) == 1, "the sweep of every account"
    assert quota.reclaim_expired(user_id, after_expiry) == 0  # returned exactly once
    assert counters(user_id) == (0, 0)
    assert compute_slots.acquire(user_id, 2, after_expiry, TTL).slot == 0
    assert quota.confirm(dead, clock.today(at)) is False, "a reclaimed unit is never charged"
    assert counters(user_id) == (0, 0)


def test_a_heartbeat_keeps_a_long_requests_slot_and_unit(user_id: int):
    at = clock.now()
    held = compute_slots.acquire(user_id, 1, at, TTL)
    quota.reserve(held, 200, at)
    later = at + timedelta(seconds=TTL + 1)
    assert compute_slots.extend(held, later + timedelta(seconds=TTL))
    assert quota.reclaim_expired(None, later) == 0, "a renewed slot is not reclaimed"
    assert compute_slots.acquire(user_id, 1, later, TTL) is None
    assert quota.confirm(held, clock.today(at)) is True
    assert counters(user_id) == (1, 0)
    compute_slots.release(held)
    assert quota.reclaim_expired(user_id, later) == 0
    lost = compute_slots.acquire(user_id, 1, later, TTL)
    assert lost is not None
    compute_slots.release(lost)
    assert not compute_slots.extend(lost, later), "a freed slot is not renewed"


def test_admission_charges_only_completed_requests(user_id: int, tmp_path):
    settings = load_settings(data_dir=tmp_path)
    principal = accounts.authenticate(accounts.rotate_key("r@example.com"))
    admitted = admit(principal, settings)
    assert admitted.headers["RateLimit"].startswith('"daily";r=199;')
    assert counters(user_id) == (0, 1), "reserved, not yet charged"
    settle(admitted, succeeded=True)
    assert counters(user_id) == (1, 0)
    failed = admit(principal, settings)
    assert failed.headers["RateLimit"].startswith('"daily";r=198;')
    settle(failed, succeeded=False)
    assert counters(user_id) == (1, 0)
    assert all(s.holder is None for s in ComputeSlot.select().where(ComputeSlot.user == user_id))


def test_first_concurrent_requests_of_an_account_all_get_a_slot(user_id: int):
    """As many concurrent first requests as slots: every one gets a slot, none a 409, even
    while the account's slot rows are being created by one of them."""
    import threading

    from pairscreen.db.models import User

    limit = 8
    for round_ in range(6):
        with database.atomic():
            user = User.create(email=f"race{round_}@example.com", tier="pro", is_lifetime=True)
        barrier = threading.Barrier(limit)
        got: list[object] = []

        # Bound as defaults: each round's threads use that round's barrier and list.
        def take(
            uid: int = user.id, barrier: threading.Barrier = barrier, got: list[object] = got
        ) -> None:
            with database.connection_context():
                barrier.wait()
                got.append(compute_slots.acquire(uid, limit, clock.now(), TTL))

        threads = [threading.Thread(target=take) for _ in range(limit)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert None not in got, f"round {round_}: {got.count(None)} of {limit} refused"
        assert sorted(h.slot for h in got) == list(range(limit))
