"""The per-account limit of compute requests in flight (the spec's 409).

Each account has ``limit`` slot rows; a request takes a free or expired slot with a
conditional UPDATE and frees it when done. The rows live in the database, so the limit holds
across worker processes, and a slot whose holder died expires after its TTL.

A slot also carries its holder's unconfirmed quota reservation (``reserved_day``, see
:mod:`pairscreen.access.quota`). Such a slot is never taken over or freed here: it stays held
until :func:`pairscreen.access.quota.reclaim_expired` has given the unit back, so no
reservation is ever lost with its slot.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from pairscreen.db.models import ComputeSlot


@dataclass(frozen=True)
class HeldSlot:
    user_id: int
    slot: int
    holder: str


def acquire(user_id: int, limit: int, at: datetime, ttl_seconds: float) -> HeldSlot | None:
    """Take a slot, or return None when all ``limit`` slots are held and fresh.

    The account's slot rows are created on its first request. A scan that found no free slot
    makes sure they exist and scans once more: the rows may have been missing, or created by
    a concurrent first request just after this scan passed them (taking it for "all held"
    answered 409 to first requests of a new account while its slots were free).
    """
    holder = uuid.uuid4().hex
    expires = at + timedelta(seconds=ttl_seconds)
    for attempt in range(2):
        for slot in range(limit):
            taken = (
                ComputeSlot.update(holder=holder, expires_at=expires)
                .where(
                    (ComputeSlot.user == user_id)
                    & (ComputeSlot.slot == slot)
                    & (
                        ComputeSlot.holder.is_null()
                        | ((ComputeSlot.expires_at < at) & ComputeSlot.reserved_day.is_null())
                    )
                )
                .execute()
            )
            if taken:
                return HeldSlot(user_id, slot, holder)
        if attempt == 0:
            _ensure_slots(user_id, limit)
    return None


def extend(held: HeldSlot, until: datetime) -> bool:
    """Push the slot's expiry to ``until`` while its computation lives (the heartbeat).

    False when the slot is no longer ``held``'s: it expired and was reclaimed, so the
    request's reserved unit was given back and it must not answer 200.
    """
    return bool(
        ComputeSlot.update(expires_at=until)
        .where(
            (ComputeSlot.user == held.user_id)
            & (ComputeSlot.slot == held.slot)
            & (ComputeSlot.holder == held.holder)
        )
        .execute()
    )


def release(held: HeldSlot) -> None:
    """Free the slot, unless it still carries a reservation (then it frees on expiry)."""
    ComputeSlot.update(holder=None, expires_at=None).where(
        (ComputeSlot.user == held.user_id)
        & (ComputeSlot.slot == held.slot)
        & (ComputeSlot.holder == held.holder)
        & ComputeSlot.reserved_day.is_null()
    ).execute()


def _ensure_slots(user_id: int, limit: int) -> None:
    """Create the account's missing slot rows."""
    existing = (
        ComputeSlot.select()
        .where((ComputeSlot.user == user_id) & (ComputeSlot.slot < limit))
        .count()
    )
    if existing < limit:
        rows = [{"user": user_id, "slot": s} for s in range(limit)]
        ComputeSlot.insert_many(rows).on_conflict_ignore().execute()
