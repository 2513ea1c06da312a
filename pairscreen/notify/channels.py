"""Users' delivery channels: where their notifications go.

A channel kind is a notifier plugin's: every loaded notifier that declares a channel
(:class:`~pairscreen.contracts.ChannelNotifier`) is a kind, with its own address check and its
secret part (:class:`~pairscreen.plugin_system.channel_kinds.ChannelKinds`, handed in by the
caller from its runtime). The built-in kinds are ``email`` (an address), ``telegram`` (a chat
id), ``webhook`` (an http(s) URL), and ``discord`` and ``slack`` (an incoming-webhook URL under
the operator's ``PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES`` / ``PAIRSCREEN_SLACK_WEBHOOK_PREFIXES``).
The operator sets any of them with ``pairscreen channels set``; a user sets the kinds that
declare ``self_service`` (Telegram, Discord, Slack and any plugin's that says so), and turns any
of theirs on or off, over the API (``PUT /me/channels/{kind}``, :func:`set_own_channel`).
E-mail and webhook addresses stay the operator's: the service would otherwise mail or POST
wherever a key's holder says. An address's secret part (a URL's path) is never shown whole
outside the CLI.
A user with no ``email`` row gets e-mail at the account address, so notifications work with
no setup; ``channels disable EMAIL email`` turns that off. ``depeg_alerts`` lives on the
e-mail row: a Pro user who opts in gets every depeg alert, not only those of assets on the
watchlist. A stored row of a kind no loaded plugin offers any more is kept but neither listed
nor delivered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pairscreen import clock
from pairscreen.access.accounts import AccountError, AccountNotFound, find_user
from pairscreen.contracts import AddressError
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import Channel, User
from pairscreen.errors import BadRequest, NotFound
from pairscreen.plugin_system.channel_kinds import ChannelKinds

IMPLICIT = "email"  # every account has it, at the account address, unless turned off


@dataclass(frozen=True)
class Destination:
    """One enabled channel of a user, resolved to an address."""

    kind: str
    address: str


def listed_kinds(kinds: ChannelKinds) -> tuple[str, ...]:
    """The order channels are listed and delivered in: e-mail first, then the kinds as the
    plugins loaded."""
    return (IMPLICIT, *(k for k in kinds.names if k != IMPLICIT))


def validate_address(kind: str, address: str, kinds: ChannelKinds) -> str:
    """The address cleaned up, or AccountError saying what a valid one looks like."""
    if kind not in kinds:
        raise AccountError(f"channel kind must be one of {', '.join(kinds.names)}, got {kind!r}")
    try:
        return kinds.check(kind, address)
    except AddressError as exc:
        raise AccountError(str(exc)) from None


def set_channels(
    email: str,
    *,
    addresses: dict[str, str] | None = None,
    depeg_alerts: bool | None = None,
    kinds: ChannelKinds | None = None,
) -> list[Channel]:
    """Set (and enable) the given channels of a user; ``depeg_alerts`` changes the opt-in.

    ``kinds`` check the addresses; only a change of ``depeg_alerts`` alone needs none.
    """
    user = find_user(email)
    if addresses and kinds is None:
        raise TypeError("set_channels needs the channel kinds to check addresses")
    cleaned = {
        kind: validate_address(kind, a, kinds)
        for kind, a in (addresses or {}).items()
        if kinds is not None
    }
    if depeg_alerts and user.tier != "pro":
        raise AccountError(
            f"depeg alerts for every asset are a Pro feature; {user.email} has the "
            f"{user.tier or 'no'} tier (watchlist assets alert on every tier)"
        )
    if not cleaned and depeg_alerts is None:
        raise AccountError(
            "nothing to set: give --email, --telegram, --webhook, --discord, --slack, --kind "
            "with --address, or --depeg-alerts"
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


def disable_channel(email: str, kind: str, kinds: ChannelKinds | None = None) -> Channel:
    """Turn one channel of a user off; with ``kinds``, a kind that is not one is refused by
    name (without, it is a channel the user does not have)."""
    user = find_user(email)
    if kinds is not None and kind not in listed_kinds(kinds):
        known = ", ".join(listed_kinds(kinds))
        raise AccountError(f"channel kind must be one of {known}, got {kind!r}")
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


def channel_rows(email: str, kinds: ChannelKinds) -> list[dict[str, Any]]:
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
    for kind in listed_kinds(kinds):
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


def describe(email: str, kinds: ChannelKinds) -> list[str]:
    """One line per channel as the CLI prints it, the implicit e-mail channel included."""
    return [describe_row(row) for row in channel_rows(email, kinds)]


def channels_json(user_id: int, account_email: str, kinds: ChannelKinds) -> list[dict[str, object]]:
    """The user's channels as ``/me`` shows them to their owner, the implicit e-mail included.

    Each address's secret part, as its kind declares it, is hidden (a webhook, Discord or
    Slack URL shows its scheme and host only: its path carries the token), so a key that
    leaks does not leak the channel's secret with it.
    """
    rows = {c.kind: c for c in Channel.select().where(Channel.user == user_id)}
    out: list[dict[str, object]] = []
    if "email" not in rows:
        out.append(
            {"kind": "email", "address": account_email, "enabled": True, "depeg_alerts": False}
        )
    for kind in listed_kinds(kinds):
        c = rows.get(kind)
        if c is None:
            continue
        out.append(
            {
                "kind": kind,
                "address": kinds.masked(kind, c.address),
                "enabled": c.enabled,
                "depeg_alerts": c.depeg_alerts,
            }
        )
    return out


def destinations(user_ids: list[int], kinds: ChannelKinds) -> dict[int, list[Destination]]:
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
        for kind in listed_kinds(kinds):
            c = rows[uid].get(kind)
            if c is None and kind == "email" and uid in emails:
                out[uid].append(Destination("email", emails[uid]))
            elif c is not None and c.enabled:
                out[uid].append(Destination(kind, c.address))
    return out


def email_destination(user_ids: list[int]) -> dict[int, str]:
    """The e-mail address of each user whose e-mail channel is on (the account address when
    the user has no e-mail row)."""
    if not user_ids:
        return {}
    rows = {
        c.user_id: c
        for c in Channel.select().where(Channel.user.in_(user_ids) & (Channel.kind == IMPLICIT))
    }
    found: dict[int, str] = {}
    for u in User.select(User.id, User.email).where(User.id.in_(user_ids)):
        row = rows.get(u.id)
        if row is None:
            found[u.id] = u.email
        elif row.enabled:
            found[u.id] = row.address
    return {uid: found[uid] for uid in user_ids if uid in found}


def set_own_channel(
    user_id: int,
    kind: str,
    *,
    address: str | None,
    enabled: bool | None,
    kinds: ChannelKinds,
) -> None:
    """A user's own change of one channel (``PUT /me/channels/{kind}``).

    ``address`` sets (and, unless ``enabled`` is false, enables) a channel of a kind that
    declares ``self_service`` (Telegram, Discord, Slack, a plugin's); ``enabled`` alone turns
    an existing channel (any kind; the implicit e-mail one too) on or off. A kind no loaded
    plugin offers is a 400 naming the ones there are (the contract's pattern cannot list them).
    """
    if kind not in listed_kinds(kinds):
        raise BadRequest(
            f"No channel kind {kind!r}: the kinds are {', '.join(listed_kinds(kinds))} "
            "(GET /me/channels/kinds describes them)."
        )
    if address is None and enabled is None:
        raise BadRequest("Nothing to set: give 'address', 'enabled' or both.")
    if address is not None and kind not in kinds.self_service:
        raise BadRequest(
            f"The {kind} address is set by the operator (pairscreen channels set); over the API "
            f"you may set {', '.join(kinds.self_service)} and turn any channel on or off."
        )
    user = User.get_by_id(user_id)
    if address is not None:
        try:
            cleaned = validate_address(kind, address, kinds)
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


def channel_json(
    user_id: int, account_email: str, kind: str, kinds: ChannelKinds
) -> dict[str, object]:
    """One channel of the user as ``/me`` shows it."""
    return next(c for c in channels_json(user_id, account_email, kinds) if c["kind"] == kind)
