"""Admission of a compute request: tier, in-flight slot (409), then one quota unit (429).

Only a request that answers 200 is charged: the unit is reserved on admission, charged when
the guarded block completes, and given back when it raises. A request killed in between
(its worker died) is never charged: its slot expires after the lock TTL and the next request
of the account gives the reserved unit back. The slot is always freed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pairscreen import clock
from pairscreen.access import quota
from pairscreen.access import slots as compute_slots
from pairscreen.access.accounts import Principal
from pairscreen.config import Settings
from pairscreen.errors import Busy


@contextmanager
def compute_request(principal: Principal, settings: Settings) -> Iterator[dict[str, str]]:
    """Guard one compute request; yields the rate-limit headers for the 200 response."""
    at = clock.now()
    principal.require_tier("personal", at)
    tier = principal.tier or "personal"
    limit = settings.daily_limits[tier]
    quota.reclaim_expired(principal.user_id, at)
    held = compute_slots.acquire(
        principal.user_id, settings.in_flight_limits[tier], at, settings.lock_ttl_seconds
    )
    if held is None:
        raise Busy(
            f"Another computation of this account is in progress (at most "
            f"{settings.in_flight_limits[tier]} at once). Retry in a second.",
            headers={"Retry-After": "1", **quota.usage(principal.user_id, limit, at).headers()},
        )
    try:
        state = quota.reserve(held, limit, at)
        try:
            yield state.headers()
        except BaseException:
            quota.cancel(held, state.day)
            raise
        quota.confirm(held, state.day)
    finally:
        compute_slots.release(held)
