"""Users' delivery channels: where their notifications go (set from the CLI only).

Kinds: ``email`` (an address), ``telegram`` (a chat id) and ``webhook`` (an http(s) URL).
A user with no ``email`` row gets e-mail at the account address, so notifications work with
no setup; ``channels disable EMAIL email`` turns that off. ``depeg_alerts`` lives on the
e-mail row: a Pro user who opts in gets every depeg alert, not only those of assets on the
watchlist.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pairscreen import clock
from pairscreen.access.accounts import EMAIL_RE, AccountError, AccountNotFound, find_user
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import CHANNEL_KINDS, Channel, User

CHAT_ID_RE = re.compile(r"^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,63})$")


@dataclass(frozen=True)
class Destination:
    """One enabled channel of a user, resolved to an address."""

    kind: str
    address: str


def validate_address(kind: str, address: str) -> str:
    """The address cleaned up, or AccountError saying what a valid one looks like."""
    address = address.strip()
    if kind == "email":
        if not EMAIL_RE.match(address) or len(address) > 254:
            raise AccountError(f"not an e-mail address: {address!r}")
        return address
    if kind == "telegram":
        if not CHAT_ID_RE.match(address):
            raise AccountError(
                f"a Telegram chat id is a number (e.g. 123456789 or -1001234567890) or "
                f"@channelname, got {address!r}"
            )
        return address
    if kind == "webhook":
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or not parts.hostname or len(address) > 500:
            raise AccountError(f"a webhook must be an http:// or https:// URL, got {address!r}")
        return address
    raise AccountError(f"channel kind must be one of {', '.join(CHANNEL_KINDS)}, got {kind!r}")


def set_channels(
    email: str,
    *,
    addresses: dict[str, str] | None = None,
    depeg_alerts: bool | None = None,
) -> list[Channel]:
    """Set (and enable) the given channels of a user; ``depeg_alerts`` changes the opt-in."""
    user = find_user(email)
    cleaned = {kind: validate_address(kind, a) for kind, a in (addresses or {}).items()}
    if depeg_alerts and user.tier != "pro":
        raise AccountError(
            f"depeg alerts for every asset are a Pro feature; {user.email} has the "
            f"{user.tier or 'no'} tier (watchlist assets alert on every tier)"
        )
    if not cleaned and depeg_alerts is None:
        raise AccountError("nothing to set: give --email, --telegram, --webhook or --depeg-alerts")
    with write_transaction():
        for kind, address in cleaned.items():
            _upsert(user, kind, address, enabled=True)
        if depeg_alerts is not None:
            row = Channel.get_or_none((Channel.user == user.id) & (Channel.kind == "email"))
            if row is None:
                _upsert(user, "email", user.email, enabled=True)
            Channel.update(depeg_alerts=depeg_alerts, updated_at=clock.now()).where(
                (Channel.user == user.id) & (Channel.kind == "email")
            ).execute()
    return channels_of(email)


def disable_channel(email: str, kind: str) -> Channel:
    user = find_user(email)
    if kind not in CHANNEL_KINDS:
        raise AccountError(f"channel kind must be one of {', '.join(CHANNEL_KINDS)}, got {kind!r}")
    with write_transaction():
        row = Channel.get_or_none((Channel.user == user.id) & (Channel.kind == kind))
        if row is None:
            if kind != "email":
                raise AccountNotFound(f"{user.email} has no {kind} channel")
            _upsert(user, "email", user.email, enabled=False)
        else:
            Channel.update(enabled=False, updated_at=clock.now()).where(
                Channel.id == row.id
            ).execute()
    return Channel.get((Channel.user == user.id) & (Channel.kind == kind))


def _upsert(user: User, kind: str, address: str, *, enabled: bool) -> None:
    (
        Channel.insert(
            user=user.id, kind=kind, address=address, enabled=enabled, updated_at=clock.now()
        )
        .on_conflict(
            conflict_target=[Channel.user, Channel.kind],
            update={
                Channel.address: address,
                Channel.enabled: enabled,
                Channel.updated_at: clock.now(),
            },
        )
        .execute()
    )


def channels_of(email: str) -> list[Channel]:
    user = find_user(email)
    return list(Channel.select().where(Channel.user == user.id).order_by(Channel.kind))


def channel_rows(email: str) -> list[dict[str, Any]]:
    """A user's channels, the implicit e-mail channel (the account address) included."""
    user = find_user(email)
    rows = {c.kind: c for c in channels_of(email)}
    out: list[dict[str, Any]] = []
    if "email" not in rows:
        out.append(
            {
                "kind": "email",
                "address": user.email,
                "enabled": True,
                "account_address": True,
                "depeg_alerts": False,
            }
        )
    for kind in CHANNEL_KINDS:
        c = rows.get(kind)
        if c is not None:
            out.append(
                {
                    "kind": kind,
                    "address": c.address,
                    "enabled": bool(c.enabled),
                    "account_address": False,
                    "depeg_alerts": bool(c.depeg_alerts),
                }
            )
    return out


def describe_row(row: Mapping[str, Any]) -> str:
    """One channel as the CLI prints it on a line."""
    state = "enabled" if row["enabled"] else "disabled"
    extra = " (account address)" if row["account_address"] else ""
    if row["depeg_alerts"]:
        extra += "  depeg alerts: all assets"
    return f"{row['kind']:<9} {row['address']}  {state}{extra}"


def describe(email: str) -> list[str]:
    """One line per channel as the CLI prints it, the implicit e-mail channel included."""
    return [describe_row(row) for row in channel_rows(email)]


def channels_json(user_id: int, account_email: str) -> list[dict[str, object]]:
    """The user's channels as ``/me`` shows them to their owner, the implicit e-mail included.

    A webhook shows its scheme and host only: its path or query often carries a token, and
    a key that leaks must not leak the webhook's secret with it.
    """
    rows = {c.kind: c for c in Channel.select().where(Channel.user == user_id)}
    out: list[dict[str, object]] = []
    if "email" not in rows:
        out.append(
            {"kind": "email", "address": account_email, "enabled": True, "depeg_alerts": False}
        )
    for kind in CHANNEL_KINDS:
        c = rows.get(kind)
        if c is None:
            continue
        address = c.address
        if kind == "webhook":
            parts = urlsplit(address)
            address = f"{parts.scheme}://{parts.hostname or ''}/…"
        out.append(
            {
                "kind": kind,
                "address": address,
                "enabled": c.enabled,
                "depeg_alerts": c.depeg_alerts,
            }
        )
    return out


def destinations(user_ids: list[int]) -> dict[int, list[Destination]]:
    """Every enabled channel of each user (e-mail at the account address by default)."""
    out: dict[int, list[Destination]] = {uid: [] for uid in user_ids}
    if not user_ids:
        return out
    rows: dict[int, dict[str, Channel]] = {uid: {} for uid in user_ids}
    c: Channel | None  # a row, then each kind's row when the user has one
    for c in Channel.select().where(Channel.user.in_(user_ids)):
        rows[c.user_id][c.kind] = c
    emails = {u.id: u.email for u in User.select(User.id, User.email).where(User.id.in_(user_ids))}
    for uid in user_ids:
        for kind in CHANNEL_KINDS:
            c = rows[uid].get(kind)
            if c is None and kind == "email" and uid in emails:
                out[uid].append(Destination("email", emails[uid]))
            elif c is not None and c.enabled:
                out[uid].append(Destination(kind, c.address))
    return out


def email_destination(user_ids: list[int]) -> dict[int, str]:
    """The e-mail address of each user whose e-mail channel is on."""
    return {
        uid: d.address
        for uid, dests in destinations(user_ids).items()
        for d in dests
        if d.kind == "email"
    }
