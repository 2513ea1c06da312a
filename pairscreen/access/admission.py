"""Admission of a compute request: tier, in-flight slot (409), then one quota unit (429).

Two plain steps, so that each can run on whichever thread the caller likes:

* :func:`admit` checks the tier, takes an in-flight slot (or raises ``Busy``, 409) and
  reserves one unit of the day's quota (or raises ``QuotaExhausted``, 429); it returns the
  :class:`Admission` with the rate-limit headers of the 200 response.
* :func:`settle` charges the unit when the request succeeded and gives it back when it
  failed, and frees the slot either way.

Only a request that answers 200 is charged. A request killed between the two steps (its
worker died) is never charged: its slot expires after the lock TTL and the next request of
the account gives the reserved unit back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pairscreen import clock
from pairscreen.access import quota
from pairscreen.access import slots as compute_slots
from pairscreen.access.accounts import Principal
from pairscreen.config import Settings
from pairscreen.errors import Busy


@dataclass(frozen=True)
class Admission:
    """An admitted compute request: its slot, the day its unit is reserved on, its headers."""

    slot: compute_slots.HeldSlot
    day: date
    headers: dict[str, str]


def admit(principal: Principal, settings: Settings) -> Admission:
    """Admit one compute request or raise (403 tier, 409 busy, 429 quota); nothing is held
    when it raises."""
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
    except BaseException:
        compute_slots.release(held)
        raise
    return Admission(held, state.day, state.headers())


def settle(admission: Admission, succeeded: bool) -> None:
    """Charge the reserved unit (``succeeded``) or give it back; the slot is freed either way."""
    try:
        if succeeded:
            quota.confirm(admission.slot, admission.day)
        else:
            quota.cancel(admission.slot, admission.day)
    finally:
        compute_slots.release(admission.slot)
