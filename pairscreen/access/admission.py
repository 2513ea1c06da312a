"""Admission of a compute request: tier, in-flight slot (409), then one quota unit (429).

Two plain steps, so that each can run on whichever thread the caller likes:

* :func:`admit` checks the tier, takes an in-flight slot (or raises ``Busy``, 409) and
  reserves one unit of the day's quota (or raises ``QuotaExhausted``, 429); it returns the
  :class:`Admission` with the rate-limit headers of the 200 response.
* :func:`settle` charges the unit when the request succeeded and gives it back when it
  failed, and frees the slot either way.

Only a request that answers 200 is charged. While the request lives, :func:`keep_alive`
pushes its slot's expiry on (a heartbeat), so a long wait or a long computation keeps both
its slot and its reserved unit. A request killed between the two steps (its worker died) is
never charged: its heartbeat stops, its slot expires after the lock TTL and the unit is given
back (by the account's next request, or by ``/me``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

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


def keep_alive(admission: Admission, settings: Settings) -> bool:
    """Extend the admitted request's slot by one lock TTL from now (its heartbeat); False
    when the slot was lost (see :func:`pairscreen.access.slots.extend`)."""
    until = clock.now() + timedelta(seconds=settings.lock_ttl_seconds)
    return compute_slots.extend(admission.slot, until)


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


def settle(admission: Admission, succeeded: bool) -> bool:
    """Charge the reserved unit (``succeeded``) or give it back; the slot is freed either way.

    True only when the unit was charged: False for a failed request, and for a succeeded one
    whose reservation had expired and been given back, which must then not answer 200.
    """
    try:
        if succeeded:
            return quota.confirm(admission.slot, admission.day)
        quota.cancel(admission.slot, admission.day)
        return False
    finally:
        compute_slots.release(admission.slot)
