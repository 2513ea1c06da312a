"""The notification outbox: queue in the deciding transaction, deliver at least once.

Writers (:mod:`pairscreen.notify.run`, :mod:`pairscreen.notify.depeg_alerts`) call
:func:`enqueue` inside the transaction that decides to notify, so a notification exists if
and only if its decision was committed. ``idempotency_key`` is unique: queueing the same
event twice inserts one row.

:func:`deliver_pending` delivers due rows one at a time:

1. **claim** the row with one conditional UPDATE (``status = 'pending'`` and no live claim)
   that sets ``claimed_by`` / ``claimed_until`` and counts the attempt. Two workers can never
   hold the same row: only one UPDATE matches (PostgreSQL re-checks the WHERE clause after
   a lock wait; SQLite serialises writers).
2. **send** it through the notifier plugin of its channel kind
   (``rt.plugins.notifiers.get(kind)``); every notifier passes the idempotency key to the
   receiver (e-mail ``Message-ID`` / ``X-Idempotency-Key``, webhook header and JSON field).
3. **mark** it sent.

A crash between 2 and 3 leaves the claim to expire after ``lease``; the row is then sent
again with the same key (at-least-once; the receiver drops the duplicate). A
:class:`~pairscreen.contracts.DeliveryError` schedules a retry after the receiver's
``retry_after`` or an exponential backoff; a permanent error, or ``max_attempts`` attempts,
marks the row ``failed`` with the last error.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import peewee

from pairscreen import clock
from pairscreen.config import Settings
from pairscreen.contracts import DeliveryError, Notification
from pairscreen.db import rows
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import Outbox
from pairscreen.plugin_system.channel_kinds import ChannelKinds, undeclared_masked
from pairscreen.plugin_system.registry import PluginError

if TYPE_CHECKING:
    from pairscreen.runtime import Runtime

log = logging.getLogger(__name__)

KEY_RE = re.compile(r"^[A-Za-z0-9._-]{1,200}$")


@dataclass(frozen=True)
class OutboxPolicy:
    """Retry policy; the service's comes from its settings (see :meth:`of`)."""

    max_attempts: int = 10
    backoff_base: float = 30.0  # seconds before the 2nd attempt; doubles after each failure
    backoff_cap: float = 3600.0  # longest backoff (a receiver's Retry-After may ask for more)
    retry_after_cap: float = 86400.0
    lease: float = 120.0  # how long a claim holds; a crashed worker's rows return after it
    batch: int = 100

    @classmethod
    def of(cls, settings: Settings) -> OutboxPolicy:
        return cls(
            max_attempts=settings.outbox_max_attempts,
            backoff_base=settings.outbox_backoff,
            backoff_cap=settings.outbox_backoff_cap,
            lease=settings.outbox_lease,
        )

    def backoff(self, attempts: int) -> float:
        """Seconds to wait after the ``attempts``-th failed attempt (1, 2, ...)."""
        return min(self.backoff_cap, self.backoff_base * 2.0 ** max(0, attempts - 1))


@dataclass(frozen=True)
class OutboxMessage:
    """A notification to queue (the outbox row minus its delivery bookkeeping)."""

    idempotency_key: str
    user_id: int | None
    channel: str
    address: str
    subject: str
    text: str
    html: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class DeliveryReport:
    sent: int = 0
    retrying: int = 0
    failed: int = 0
    skipped: int = 0  # rows another worker claimed first

    @property
    def attempted(self) -> int:
        return self.sent + self.retrying + self.failed

    def summary(self) -> str:
        return f"{self.sent} sent, {self.retrying} to retry, {self.failed} failed" + (
            f", {self.skipped} claimed by another worker" if self.skipped else ""
        )


def enqueue(messages: Iterable[OutboxMessage], *, at: datetime | None = None) -> int:
    """Insert the messages (run this inside the caller's transaction); returns rows added.

    A message whose idempotency key is already queued is ignored, so queueing is idempotent.
    """
    at = at or clock.now()
    added = 0
    for m in messages:
        if not KEY_RE.match(m.idempotency_key):
            raise ValueError(f"idempotency key {m.idempotency_key!r} must match {KEY_RE.pattern}")
        cursor = (
            Outbox.insert(
                idempotency_key=m.idempotency_key,
                user=m.user_id,
                channel=m.channel,
                address=m.address,
                subject=m.subject[:300],
                text=m.text,
                html=m.html,
                payload=json.dumps(dict(m.payload), allow_nan=False, sort_keys=True),
                status="pending",
                attempts=0,
                next_attempt_at=at,
                created_at=at,
            )
            .on_conflict_ignore()
            .as_rowcount()
            .execute()
        )
        added += int(cursor or 0)
    return added


def notification_of(row: Outbox) -> Notification:
    return Notification(
        id=row.id,
        idempotency_key=row.idempotency_key,
        channel=row.channel,
        address=row.address,
        subject=row.subject,
        text=row.text,
        html=row.html,
        payload=json.loads(row.payload or "{}"),
    )


def deliver_pending(
    rt: Runtime,
    *,
    now: datetime | None = None,
    worker_id: str,
    policy: OutboxPolicy | None = None,
) -> DeliveryReport:
    """Deliver every row due at ``now``; see the module docstring for the guarantees."""
    policy = policy or OutboxPolicy.of(rt.settings)
    now = now or clock.now()
    report = DeliveryReport()
    due = list(
        Outbox.select(Outbox.id, Outbox.attempts)
        .where(_deliverable(now))
        .order_by(Outbox.next_attempt_at, Outbox.id)
        .limit(policy.batch)
    )
    for candidate in due:
        if candidate.attempts >= policy.max_attempts:
            # Every earlier attempt crashed before it could record its outcome.
            _give_up(candidate.id, now, "gave up: every attempt was interrupted before it finished")
            report.failed += 1
            continue
        row = _claim(candidate.id, now, worker_id, policy)
        if row is None:
            report.skipped += 1
            continue
        outcome = _send(rt, row)
        if outcome is None:
            _mark_sent(row.id, now)
            report.sent += 1
            log.info("notification %s (%s) sent", row.idempotency_key, row.channel)
        elif outcome.permanent or row.attempts >= policy.max_attempts:
            _record_failure(row, worker_id, outcome, None)
            report.failed += 1
            log.warning(
                "notification %s (%s) failed for good after %d attempt(s): %s",
                row.idempotency_key,
                row.channel,
                row.attempts,
                outcome,
            )
        else:
            wait = (
                min(max(outcome.retry_after, 1.0), policy.retry_after_cap)
                if outcome.retry_after is not None
                else policy.backoff(row.attempts)
            )
            _record_failure(row, worker_id, outcome, now + timedelta(seconds=wait))
            report.retrying += 1
            log.info(
                "notification %s (%s) attempt %d failed, retry in %.0f s: %s",
                row.idempotency_key,
                row.channel,
                row.attempts,
                wait,
                outcome,
            )
    return report


def _deliverable(now: datetime) -> peewee.Expression:
    return (
        (Outbox.status == "pending")
        & (Outbox.next_attempt_at <= now)
        & (Outbox.claimed_until.is_null() | (Outbox.claimed_until < now))
    )


def _claim(row_id: int, now: datetime, worker_id: str, policy: OutboxPolicy) -> Outbox | None:
    """Claim one row with a conditional UPDATE; None when another worker got it first."""
    with write_transaction():
        claimed = (
            Outbox.update(
                claimed_by=worker_id[:120],
                claimed_until=now + timedelta(seconds=policy.lease),
                attempts=Outbox.attempts + 1,
            )
            .where((Outbox.id == row_id) & _deliverable(now))
            .execute()
        )
    if claimed != 1:
        return None
    return Outbox.get_by_id(row_id)


def _send(rt: Runtime, row: Outbox) -> DeliveryError | None:
    """Hand the row to its notifier; None on success, else the error to record."""
    try:
        notifier = rt.plugins.notifiers.get(row.channel)
    except PluginError as exc:
        return DeliveryError(str(exc))
    try:
        notifier.deliver(notification_of(row))
    except DeliveryError as exc:
        return exc
    except Exception as exc:  # a broken notifier must not stop the other rows
        log.exception(
            "notifier %r (plugin %s) raised", row.channel, rt.plugins.notifiers.owner(row.channel)
        )
        return DeliveryError(f"notifier error: {type(exc).__name__}")
    return None


def _mark_sent(row_id: int, now: datetime) -> None:
    with write_transaction():
        Outbox.update(
            status="sent", sent_at=now, claimed_by=None, claimed_until=None, last_error=""
        ).where((Outbox.id == row_id) & (Outbox.status == "pending")).execute()


def _record_failure(
    row: Outbox, worker_id: str, error: DeliveryError, retry_at: datetime | None
) -> None:
    """Record a failed attempt, unless this worker's claim expired and another took over."""
    fields: dict[str, Any] = {
        "last_error": str(error)[:1000],
        "claimed_by": None,
        "claimed_until": None,
    }
    if retry_at is None:
        fields["status"] = "failed"
    else:
        fields["next_attempt_at"] = retry_at
    with write_transaction():
        Outbox.update(**fields).where(
            (Outbox.id == row.id)
            & (Outbox.status == "pending")
            & (Outbox.claimed_by == worker_id[:120])
        ).execute()


def _give_up(row_id: int, now: datetime, reason: str) -> None:
    with write_transaction():
        Outbox.update(
            status="failed", last_error=reason, claimed_by=None, claimed_until=None
        ).where((Outbox.id == row_id) & _deliverable(now)).execute()


def counts() -> dict[str, int]:
    """Rows per status (for the CLI and the worker's log)."""
    out = dict.fromkeys(("pending", "sent", "failed"), 0)
    query = Outbox.select(Outbox.status, peewee.fn.COUNT(Outbox.id).alias("n")).group_by(
        Outbox.status
    )
    for row in rows.dicts(query):
        out[row["status"]] = int(row["n"])
    return out


def pending_count() -> int:
    """How many messages wait for delivery (queued or retrying): the outbox's depth."""
    return int(Outbox.select().where(Outbox.status == "pending").count())


CHANNEL_NAMES = {
    "email": "e-mail",
    "telegram": "Telegram",
    "webhook": "webhook",
    "discord": "Discord",
    "slack": "Slack",
}


@dataclass(frozen=True)
class ChannelBacklog:
    """The messages of one channel that wait, and why: the last error a retry of them met."""

    channel: str
    pending: int
    last_error: str  # "" while none of them has failed an attempt yet

    def line(self) -> str:
        why = self.last_error or "not attempted yet"
        return f"{CHANNEL_NAMES.get(self.channel, self.channel)}: {self.pending} waiting ({why})"


def backlog() -> list[ChannelBacklog]:
    """Per channel, the pending messages and the error of the most recently failed one.

    The error is where the reason lives ("e-mail is not configured: set [plugins.email]
    smtp_url or PAIRSCREEN_SMTP_URL", a webhook's HTTP status), so an operator reads it here
    rather than in the database.
    """
    pending = Outbox.status == "pending"
    depth = {
        row["channel"]: int(row["n"])
        for row in rows.dicts(
            Outbox.select(Outbox.channel, peewee.fn.COUNT(Outbox.id).alias("n"))
            .where(pending)
            .group_by(Outbox.channel)
        )
    }
    out = []
    for channel in sorted(depth):
        failed = (
            Outbox.select(Outbox.last_error)
            .where(pending & (Outbox.channel == channel) & (Outbox.last_error != ""))
            .order_by(Outbox.next_attempt_at.desc(), Outbox.id.desc())
            .first()
        )
        out.append(ChannelBacklog(channel, depth[channel], failed.last_error if failed else ""))
    return out


OUTBOX_STATUSES = ("pending", "failed", "sent")


def listing(
    status: str | None = "pending", limit: int = 100, kinds: ChannelKinds | None = None
) -> list[dict[str, Any]]:
    """The outbox's messages of ``status`` (None: all), next due first, for people to read.

    An address's secret part, as its channel kind declares it in ``kinds``, is hidden (a
    webhook, Discord or Slack URL shows its scheme and host only): the listing is read over a
    shoulder and pasted into tickets. Without ``kinds`` (or for a kind they do not declare)
    an http(s) URL shows its scheme and host, anything else is shown whole.
    """
    query = Outbox.select(
        Outbox.id,
        Outbox.channel,
        Outbox.address,
        Outbox.subject,
        Outbox.status,
        Outbox.attempts,
        Outbox.next_attempt_at,
        Outbox.created_at,
        Outbox.last_error,
    )
    if status is not None:
        if status not in OUTBOX_STATUSES:
            raise ValueError(f"status must be one of {', '.join(OUTBOX_STATUSES)}, got {status!r}")
        query = query.where(Outbox.status == status)
    return [
        {
            "id": row.id,
            "channel": row.channel,
            "address": (kinds.masked if kinds else _undeclared)(row.channel, row.address),
            "subject": row.subject,
            "status": row.status,
            "attempts": row.attempts,
            "next_attempt_at": clock.iso(row.next_attempt_at) if row.status == "pending" else None,
            "created_at": clock.iso(row.created_at),
            "last_error": row.last_error or None,
        }
        for row in query.order_by(Outbox.next_attempt_at, Outbox.id).limit(limit)
    ]


def _undeclared(kind: str, address: str) -> str:
    return undeclared_masked(address)
