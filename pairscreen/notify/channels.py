"""Users' delivery channels: where their notifications go.

Kinds: ``email`` (an address), ``telegram`` (a chat id), ``webhook`` (an http(s) URL), and
``discord`` and ``slack`` (an incoming-webhook URL, which must start with one of the prefixes
of ``PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES`` / ``PAIRSCREEN_SLACK_WEBHOOK_PREFIXES``, by default
the platforms' own hosts). The operator sets any of them with ``pairscreen channels set``; a
user sets their own Telegram, Discord and Slack channels, and turns any of theirs on or off,
over the API (``PUT /me/channels/{kind}``, :func:`set_own_channel`). E-mail and webhook
addresses stay the operator's: the service would otherwise mail or POST wherever a key's
holder says. A URL channel's path is its secret: outside the CLI it is shown masked
(:func:`masked`).
A user with no ``email`` row gets e-mail at the account address, so notifications work with
no setup; ``channels disable EMAIL email`` turns that off. ``depeg_alerts`` lives on the
e-mail row: a Pro user who opts in gets every depeg alert, not only those of assets on the
watchlist.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pairscreen import clock
from pairscreen.access.accounts import EMAIL_RE, AccountError, AccountNotFound, find_user
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import CHANNEL_KINDS, Channel, User
from pairscreen.errors import BadRequest, NotFound

if TYPE_CHECKING:
    from pairscreen.config import Settings

CHAT_ID_RE = re.compile(r"^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,63})$")
URL_KINDS: tuple[str, ...] = ("webhook", "discord", "slack")  # addresses that hold a secret
CHAT_KINDS: tuple[str, ...] = ("discord", "slack")
PLATFORM = {"discord": "Discord", "slack": "Slack"}
SELF_SERVICE_KINDS: tuple[str, ...] = ("telegram", "discord", "slack")  # a user may set these


def url_prefixes(settings: Settings) -> dict[str, tuple[str, ...]]:
    """Where each chat platform's webhook URL may point (the settings' prefixes)."""
    return {
        "discord": settings.discord_webhook_prefixes,
        "slack": settings.slack_webhook_prefixes,
    }


def masked(kind: str, address: str) -> str:
    """The address as shown outside the CLI: a URL by its scheme and host only."""
    if kind not in URL_KINDS:
        return address
    parts = urlsplit(address)
    return f"{parts.scheme}://{parts.hostname or ''}/…"


@dataclass(frozen=True)
class Destination:
    """One enabled channel of a user, resolved to an address."""

    kind: str
    address: str


def validate_address(
    kind: str, address: str, prefixes: Mapping[str, tuple[str, ...]] | None = None
) -> str:
    """The address cleaned up, or AccountError saying what a valid one looks like.

    A Discord or Slack URL must start with one of ``prefixes[kind]`` (:func:`url_prefixes`);
    the refusal shows the given URL by its scheme and host only.
    """
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
    if kind in CHAT_KINDS:
        allowed = (prefixes or {}).get(kind, ())
        parts = urlsplit(address)
        well_formed = parts.scheme in ("http", "https") and parts.hostname and len(address) <= 500
        if not well_formed or not any(address.startswith(p) for p in allowed):
            shown = masked(kind, address) if well_formed else "not a URL"
            raise AccountError(
                f"a {PLATFORM[kind]} channel takes the channel's incoming-webhook URL, starting "
                f"with {' or '.join(allowed) or '(no prefix allowed)'}; got {shown}"
            )
        return address
    raise AccountError(f"channel kind must be one of {', '.join(CHANNEL_KINDS)}, got {kind!r}")


def set_channels(
    email: str,
    *,
    addresses: dict[str, str] | None = None,
    depeg_alerts: bool | None = None,
    prefixes: Mapping[str, tuple[str, ...]] | None = None,
) -> list[Channel]:
    """Set (and enable) the given channels of a user; ``depeg_alerts`` changes the opt-in."""
    user = find_user(email)
    cleaned = {kind: validate_address(kind, a, prefixes) for kind, a in (addresses or {}).items()}
    if depeg_alerts and user.tier != "pro":
        raise AccountError(
            f"depeg alerts for every asset are a Pro feature; {user.email} has the "
            f"{user.tier or 'no'} tier (watchlist assets alert on every tier)"
        )
    if not cleaned and depeg_alerts is None:
        raise AccountError(
            "nothing to set: give --email, --telegram, --webhook, --discord, --slack or "
            "--depeg-alerts"
        )
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

    A webhook, Discord or Slack URL shows its scheme and host only: its path carries the
    token, and a key that leaks must not leak the channel's secret with it.
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
        out.append(
            {
                "kind": kind,
                "address": masked(kind, c.address),
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


def set_own_channel(
    user_id: int,
    kind: str,
    *,
    address: str | None,
    enabled: bool | None,
    prefixes: Mapping[str, tuple[str, ...]],
) -> None:
    """A user's own change of one channel (``PUT /me/channels/{kind}``).

    ``address`` sets (and, unless ``enabled`` is false, enables) a Telegram, Discord or Slack
    channel; ``enabled`` alone turns an existing channel (any kind; the implicit e-mail one
    too) on or off.
    """
    if kind not in CHANNEL_KINDS:
        raise NotFound(f"No channel kind {kind!r}: one of {', '.join(CHANNEL_KINDS)}.")
    if address is None and enabled is None:
        raise BadRequest("Nothing to set: give 'address', 'enabled' or both.")
    if address is not None and kind not in SELF_SERVICE_KINDS:
        raise BadRequest(
            f"The {kind} address is set by the operator (pairscreen channels set); over the API "
            f"you may set {', '.join(SELF_SERVICE_KINDS)} and turn any channel on or off."
        )
    user = User.get_by_id(user_id)
    if address is not None:
        try:
            cleaned = validate_address(kind, address, prefixes)
        except AccountError as exc:
            raise BadRequest(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
        with write_transaction():
            _upsert(user, kind, cleaned, enabled=enabled is not False)
        return
    with write_transaction():
        row = Channel.get_or_none((Channel.user == user_id) & (Channel.kind == kind))
        if row is None and kind != "email":
            raise NotFound(f"You have no {kind} channel yet: set its address first.")
        if row is None:
            _upsert(user, "email", user.email, enabled=bool(enabled))
        else:
            Channel.update(enabled=bool(enabled), updated_at=clock.now()).where(
                Channel.id == row.id
            ).execute()


def channel_json(user_id: int, account_email: str, kind: str) -> dict[str, object]:
    """One channel of the user as ``/me`` shows it."""
    return next(c for c in channels_json(user_id, account_email) if c["kind"] == kind)
