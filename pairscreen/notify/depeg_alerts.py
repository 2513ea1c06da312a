"""Depeg alerts: one e-mail per interested user whenever a depeg event opens or closes.

Where it lives, and why: the alert fan-out reads watchlists and channels and writes the
outbox, all framework tables, and built-in plugins may import only the public ``pairscreen``
API (import-linter contract ``plugins-use-public-api``). So the fan-out is a
framework-internal pluggy plugin, :class:`DepegAlertsPlugin`, that implements
``pairscreen_peg_event_changed`` like any other plugin. :func:`pairscreen.bootstrap.build_runtime`
registers it in every runtime, so the detector only calls
``rt.plugins.peg_event_changed(event)`` and every implementation — this one and any
third-party plugin's — hears about the event. Delivery then goes through the notifier
plugins like every other notification.

Recipients: every user with an active tier who has a pair with that ticker (either leg) on
the watchlist, and every active Pro user who opted in (``channels set EMAIL
--depeg-alerts``); each gets one e-mail at the address of their e-mail channel (the account
address unless set; nothing when the e-mail channel is disabled). Idempotency key:
``depeg.<ticker>.<opened|closed>.<first unhealthy, UTC>.u<user id>``, so hearing about the
same event twice queues nothing new.
"""

from __future__ import annotations

import html
import logging
from datetime import UTC, datetime
from typing import Any

from pairscreen import clock
from pairscreen.access.accounts import Principal
from pairscreen.contracts import PegEventChange
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import Channel, User, WatchlistItem
from pairscreen.notify.channels import email_destination
from pairscreen.notify.outbox import OutboxMessage, enqueue
from pairscreen.plugin_system.hookspecs import hookimpl
from pairscreen.wording import plural

log = logging.getLogger(__name__)


class DepegAlertsPlugin:
    """The framework's own ``pairscreen_peg_event_changed`` implementation."""

    @hookimpl
    def pairscreen_peg_event_changed(self, event: PegEventChange) -> None:
        """Queue one depeg e-mail per interested user in the outbox."""
        queued = queue_depeg_alerts(event)
        log.info("depeg event %s %s: %d alert(s) queued", event.ticker, event.change, queued)


def recipients(ticker: str, at: datetime) -> dict[int, list[str]]:
    """User id -> the user's watched pairs with ``ticker`` (empty for Pro opt-ins only)."""
    found: dict[int, list[str]] = {}
    watching = WatchlistItem.select().where(
        (WatchlistItem.a == ticker) | (WatchlistItem.b == ticker)
    )
    for item in watching.order_by(WatchlistItem.id):
        found.setdefault(item.user_id, []).append(f"{item.a}/{item.b}")
    opted = (
        User.select(User.id)
        .join(Channel)
        .where(
            (Channel.kind == "email")
            & Channel.enabled
            & Channel.depeg_alerts
            & (User.tier == "pro")
        )
    )
    for user in opted:
        found.setdefault(user.id, [])
    users = {u.id: u for u in User.select().where(User.id.in_(list(found)))} if found else {}
    active = {}
    for uid, pairs in found.items():
        u = users.get(uid)
        if u is None:
            continue
        if Principal(u.id, u.email, u.tier, u.tier_expires_at, u.is_lifetime).tier_problem(at):
            continue
        active[uid] = pairs
    return active


def idempotency_key(event: PegEventChange, user_id: int) -> str:
    first = event.first_unhealthy.astimezone(UTC)
    return f"depeg.{event.ticker}.{event.change}.{first:%Y%m%dT%H%M%SZ}.u{user_id}"


def queue_depeg_alerts(event: PegEventChange, *, at: datetime | None = None) -> int:
    """Queue the e-mails of one opened or closed event; returns the rows added."""
    at = at or clock.now()
    with write_transaction():
        interested = recipients(event.ticker, at)
        addresses = email_destination(sorted(interested))
        messages = []
        for uid, pairs in sorted(interested.items()):
            address = addresses.get(uid)
            if address is None:
                continue
            content = depeg_message(event, pairs)
            key = idempotency_key(event, uid)
            messages.append(
                OutboxMessage(
                    idempotency_key=key,
                    user_id=uid,
                    channel="email",
                    address=address,
                    subject=content["subject"],
                    text=content["text"],
                    html=content["html"],
                    payload={**content["payload"], "idempotency_key": key},
                )
            )
        return enqueue(messages, at=at)


def depeg_message(event: PegEventChange, pairs: list[str]) -> dict[str, Any]:
    """Subject, text, HTML and payload of one depeg alert."""
    hours = (event.last_unhealthy - event.first_unhealthy).total_seconds() / 3600
    if event.change == "opened":
        title = f"{event.ticker} has depegged"
        lead = (
            f"{event.ticker} ({event.asset_class}) has been off its peg for {hours:.1f} h: "
            f"median drift {event.median_drift_pct:+.2f} % over "
            f"{plural(event.sample_count, 'sample')}."
        )
        screen = "Pairs with it are excluded from the screen while the event is active."
    elif event.ended == "stale":
        title = f"{event.ticker}'s depeg can no longer be checked"
        lead = (
            f"The depeg event of {event.ticker} ({event.asset_class}) is over after "
            f"{hours:.1f} h of data (median drift {event.median_drift_pct:+.2f} %, "
            f"{event.sample_count} samples) because its prices stopped: {event.end_reason}. "
            f"Whether it is back on its peg is unknown."
        )
        screen = "Pairs with it are no longer excluded for this event; its peg is unknown."
    else:
        title = f"{event.ticker} is back on its peg"
        lead = (
            f"The depeg event of {event.ticker} ({event.asset_class}) is over after "
            f"{hours:.1f} h (median drift {event.median_drift_pct:+.2f} %, "
            f"{plural(event.sample_count, 'sample')})."
        )
        screen = "Pairs with it can pass the screen again."
    subject = f"Depeg alert: {title} ({event.median_drift_pct:+.2f} %)"
    rows = [
        ("Asset", f"{event.ticker} ({event.asset_class})"),
        ("Event", f"{event.change} ({event.ended})" if event.ended else event.change),
        ("First unhealthy", clock.iso(event.first_unhealthy)),
        ("Last unhealthy", clock.iso(event.last_unhealthy)),
        ("Median drift", f"{event.median_drift_pct:+.2f} %"),
        ("Samples", str(event.sample_count)),
        ("Reference", event.reference_source or "unknown"),
        ("Your pairs", ", ".join(pairs) if pairs else "none (you asked for every depeg alert)"),
    ]
    text = "\n".join([f"{title}.", "", lead, screen, "", *(f"{k + ':':<17}{v}" for k, v in rows)])
    e = html.escape
    html_body = (
        f"<html><body><p><strong>{e(title)}.</strong></p><p>{e(lead)} {e(screen)}</p><table>"
        + "".join(f"<tr><th align='left'>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows)
        + "</table></body></html>"
    )
    payload = {
        "event": f"depeg.{event.change}",
        "ticker": event.ticker,
        "asset_class": event.asset_class,
        "first_unhealthy": clock.iso(event.first_unhealthy),
        "last_unhealthy": clock.iso(event.last_unhealthy),
        "hours_unhealthy": round(hours, 3),
        "median_drift_pct": event.median_drift_pct,
        "sample_count": event.sample_count,
        "reference_source": event.reference_source,
        "ended": event.ended or None,
        "end_reason": event.end_reason or None,
        "pairs": pairs,
    }
    return {"subject": subject, "text": text, "html": html_body, "payload": payload}
