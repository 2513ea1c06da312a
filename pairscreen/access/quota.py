"""The daily quota of compute requests: reserved atomically, charged only on success.

Never read-then-write: a unit is reserved by one conditional UPDATE of the day's row
(``used + pending < limit``) and the affected row count says whether it was granted, so
concurrent requests in any number of processes can never spend more than the limit
(PostgreSQL re-checks the WHERE clause after a row-lock wait; SQLite serialises writers).

A reservation is two-phase, so that a request killed mid-computation costs nothing:

1. :func:`reserve` moves one unit into ``pending`` and writes its day on the request's
   compute slot (``ComputeSlot.reserved_day``), in one transaction;
2. :func:`confirm` (the request answered 200) moves it from ``pending`` to ``used``;
   :func:`cancel` (the request failed) gives it back. Both clear the slot's mark first and
   touch the counters only if they cleared it, so a unit is settled exactly once.

A holder that died leaves its mark on a slot that expires after the lock TTL (a live one
renews it); :func:`reclaim_expired` gives such units back (again only if it clears the
mark), on the account's next compute request or ``/me`` and for every account from the
worker's heartbeat, and the slot is free again. ``used`` therefore only ever counts requests
that answered 200, while ``pending`` keeps in-flight (or crashed, until their TTL) units out
of everyone's reach.

Statements lock the slot row before the quota row in every transaction here, so two of them
can never deadlock on PostgreSQL.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime

from pairscreen import clock
from pairscreen.access.slots import HeldSlot
from pairscreen.db import rows
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import ComputeSlot, QuotaUsage
from pairscreen.errors import Busy, QuotaExhausted

log = logging.getLogger(__name__)

DAY_SECONDS = 86_400


@dataclass(frozen=True)
class QuotaState:
    limit: int
    used: int
    at: datetime
    pending: int = 0

    @property
    def day(self) -> date:
        return clock.today(self.at)

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used - self.pending)

    @property
    def resets_at(self) -> datetime:
        return clock.next_midnight(self.at)

    def headers(self) -> dict[str, str]:
        """The IETF draft's structured rate-limit headers for this state."""
        return {
            "RateLimit-Policy": f'"daily";q={self.limit};w={DAY_SECONDS}',
            "RateLimit": f'"daily";r={self.remaining};t={clock.seconds_to_midnight(self.at)}',
        }


def usage(user_id: int, limit: int, at: datetime | None = None) -> QuotaState:
    at = at or clock.now()
    row = QuotaUsage.get_or_none((QuotaUsage.user == user_id) & (QuotaUsage.day == clock.today(at)))
    if row is None:
        return QuotaState(limit=limit, used=0, at=at)
    return QuotaState(limit=limit, used=row.used, at=at, pending=row.pending)


class _NotGranted(Exception):
    """Rolls back the slot mark of a reservation the quota refused."""


class _SlotLost(Exception):
    """The slot expired (and was taken) between its acquisition and the reservation."""


def reserve(held: HeldSlot, limit: int, at: datetime) -> QuotaState:
    """Reserve one unit of today's quota for the request holding ``held``, or raise
    :class:`QuotaExhausted` (with Retry-After)."""
    day = clock.today(at)
    QuotaUsage.insert(user=held.user_id, day=day, used=0).on_conflict_ignore().execute()
    try:
        with write_transaction():
            if not _mark(held, day):
                raise _SlotLost
            granted = (
                QuotaUsage.update(pending=QuotaUsage.pending + 1)
                .where(
                    (QuotaUsage.user == held.user_id)
                    & (QuotaUsage.day == day)
                    & (QuotaUsage.used + QuotaUsage.pending < limit)
                )
                .execute()
            )
            if not granted:
                raise _NotGranted
    except _SlotLost:
        raise Busy(
            "This request's computation slot expired before it started. Retry in a second.",
            headers={"Retry-After": "1", **usage(held.user_id, limit, at).headers()},
        ) from None
    except _NotGranted:
        state = usage(held.user_id, limit, at)
        wait = clock.seconds_to_midnight(at)
        raise QuotaExhausted(
            f"The daily quota of {limit} compute requests is used up. It resets at "
            f"00:00 UTC, in {wait} seconds.",
            headers={"Retry-After": str(wait), **state.headers()},
        ) from None
    return usage(held.user_id, limit, at)


def confirm(held: HeldSlot, day: date) -> bool:
    """Charge the reserved unit (the request answered 200).

    False when the reservation was already given back because the request outlived the
    lock TTL; it is then not charged, so the limit still holds.
    """
    with write_transaction():
        if not _unmark(held, day):
            log.warning(
                "a compute request outlived the lock TTL and its reserved unit was given "
                "back; it is not charged (raise PAIRSCREEN_LOCK_TTL above the longest request)"
            )
            return False
        _settle(held.user_id, day, used=1)
    return True


def cancel(held: HeldSlot, day: date) -> None:
    """Give the reserved unit back (the request failed)."""
    with write_transaction():
        if _unmark(held, day):
            _settle(held.user_id, day, used=0)


def reclaim_expired(user_id: int | None, at: datetime) -> int:
    """Give back the units of the account's (None: every account's) expired slots whose
    holders never settled them (a killed worker), and free those slots. Returns how many
    units came back."""
    expired = ComputeSlot.reserved_day.is_null(False) & (ComputeSlot.expires_at < at)
    if user_id is not None:
        expired &= ComputeSlot.user == user_id
    stale = rows.tuples(
        ComputeSlot.select(
            ComputeSlot.id, ComputeSlot.user, ComputeSlot.holder, ComputeSlot.reserved_day
        ).where(expired)
    )
    returned = 0
    for slot_id, owner, holder, day in list(stale):
        with write_transaction():
            cleared = (
                ComputeSlot.update(holder=None, expires_at=None, reserved_day=None)
                .where(
                    (ComputeSlot.id == slot_id)
                    & (ComputeSlot.holder == holder)
                    & (ComputeSlot.reserved_day == day)
                    & (ComputeSlot.expires_at < at)
                )
                .execute()
            )
            if cleared:
                _settle(owner, day, used=0)
                returned += 1
    return returned


def _mark(held: HeldSlot, day: date) -> bool:
    return bool(
        ComputeSlot.update(reserved_day=day)
        .where(
            (ComputeSlot.user == held.user_id)
            & (ComputeSlot.slot == held.slot)
            & (ComputeSlot.holder == held.holder)
        )
        .execute()
    )


def _unmark(held: HeldSlot, day: date) -> bool:
    """Clear the slot's reservation mark; True only for the one caller that cleared it."""
    return bool(
        ComputeSlot.update(reserved_day=None)
        .where(
            (ComputeSlot.user == held.user_id)
            & (ComputeSlot.slot == held.slot)
            & (ComputeSlot.holder == held.holder)
            & (ComputeSlot.reserved_day == day)
        )
        .execute()
    )


def _settle(user_id: int, day: date, *, used: int) -> None:
    """Move one unit out of ``pending``: into ``used`` (1) or back to the pool (0)."""
    QuotaUsage.update(pending=QuotaUsage.pending - 1, used=QuotaUsage.used + used).where(
        (QuotaUsage.user == user_id) & (QuotaUsage.day == day) & (QuotaUsage.pending > 0)
    ).execute()
