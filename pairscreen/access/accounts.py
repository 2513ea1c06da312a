"""Accounts and their keys: creation, tiers, rotation, authentication, and the ``/me`` body."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import peewee

from pairscreen import clock
from pairscreen.access import keys as api_keys
from pairscreen.access import quota
from pairscreen.config import Settings
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import ApiKey, User
from pairscreen.errors import Forbidden, Unauthorized

TIERS = ("personal", "pro")
TIER_RANK = {"personal": 1, "pro": 2}
LIFETIME_EXPIRY = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class AccountError(ValueError):
    """Bad input to an account command (unknown e-mail, unknown tier)."""


class AccountNotFound(AccountError):
    """What the command named (a user, a watched pair, a channel) does not exist."""


@dataclass(frozen=True)
class Principal:
    """The authenticated caller of a request."""

    user_id: int
    email: str
    tier: str | None
    tier_expires_at: datetime | None
    is_lifetime: bool

    def tier_problem(self, at: datetime) -> str | None:
        """Why this account may not use the API now, or None when it may."""
        if self.tier not in TIERS:
            return "This account has no API tier. API access needs the Personal tier or higher."
        if not self.is_lifetime and (self.tier_expires_at is None or self.tier_expires_at <= at):
            when = clock.iso(self.tier_expires_at) if self.tier_expires_at else "unknown"
            return (
                f"This account's {self.tier} tier expired at {when}. "
                "Renew the tier to use the API again."
            )
        return None

    def require_tier(self, minimum: str, at: datetime | None = None) -> None:
        problem = self.tier_problem(at or clock.now())
        if problem:
            raise Forbidden(problem)
        if TIER_RANK[self.tier or "personal"] < TIER_RANK[minimum]:
            raise Forbidden(
                f"This endpoint needs the {minimum} tier; this account has the {self.tier} tier."
            )


class KeyOwners:
    """Finds the account owning an API key, with the query compiled once per kind of database.

    Every request runs it; building it with peewee each time cost 40 times its execution. The
    compiled SQL is kept by this object, which the runtime holds.
    """

    def __init__(self) -> None:
        self._sql: dict[type, str] = {}

    def authenticate(self, key: str) -> Principal:
        """The account owning ``key``; :class:`Unauthorized` for a malformed, unknown or old
        key."""
        if not api_keys.is_well_formed(key):
            raise Unauthorized(
                "The API key is malformed: expected 'rr_' followed by 32 letters and digits "
                "with a valid checksum. Copy the key again from your account settings."
            )
        row = database.execute_sql(self._owner_sql(), (api_keys.digest(key),)).fetchone()
        if row is None:
            raise Unauthorized("The API key is invalid or has been revoked. Use your current key.")
        user_id, email, tier, expires, lifetime = row
        return Principal(
            user_id=user_id,
            email=email,
            tier=tier,
            tier_expires_at=User.tier_expires_at.python_value(expires),
            is_lifetime=User.is_lifetime.python_value(lifetime),
        )

    def _owner_sql(self) -> str:
        kind = type(database.obj)
        sql = self._sql.get(kind)
        if sql is None:  # two threads may compile it at once: the same SQL, one is kept
            query = (
                User.select(User.id, User.email, User.tier, User.tier_expires_at, User.is_lifetime)
                .join(ApiKey)
                .where(ApiKey.digest == "")
            )
            sql = self._sql.setdefault(kind, query.sql()[0])
        return sql


def authenticate(key: str) -> Principal:
    """The account owning ``key`` (one-off callers; requests use the runtime's KeyOwners)."""
    return KeyOwners().authenticate(key)


def create_user(
    email: str, tier: str | None, *, expires: datetime | None = None, lifetime: bool = False
) -> User:
    _check_tier(tier)
    if not EMAIL_RE.match(email.strip()) or len(email.strip()) > 254:
        raise AccountError(f"not an e-mail address: {email!r} (expected name@domain.tld)")
    try:
        with write_transaction():
            return User.create(
                email=email.strip().lower(),
                tier=tier,
                tier_expires_at=None if lifetime else expires,
                is_lifetime=lifetime,
            )
    except peewee.IntegrityError:
        raise AccountError(f"a user with e-mail {email} already exists") from None


def set_tier(
    email: str, tier: str | None, *, expires: datetime | None = None, lifetime: bool = False
) -> User:
    _check_tier(tier)
    user = find_user(email)
    with write_transaction():
        User.update(
            tier=tier, tier_expires_at=None if lifetime else expires, is_lifetime=lifetime
        ).where(User.id == user.id).execute()
    return find_user(email)


def find_user(email: str) -> User:
    user = User.get_or_none(User.email == email.strip().lower())
    if user is None:
        raise AccountNotFound(f"no user with e-mail {email}")
    return user


def rotate_key(email: str) -> str:
    """Issue a new key for the user and revoke the old one in the same statement.

    One key row per user (a unique constraint) means concurrent rotations can never leave
    two active keys: the last writer's key is the only one that matches.
    """
    user = find_user(email)
    key = api_keys.generate_key()
    with write_transaction():
        (
            ApiKey.insert(
                user=user.id,
                digest=api_keys.digest(key),
                prefix=api_keys.display_prefix(key),
                created_at=clock.now(),
            )
            .on_conflict(
                conflict_target=[ApiKey.user],
                update={
                    ApiKey.digest: api_keys.digest(key),
                    ApiKey.prefix: api_keys.display_prefix(key),
                    ApiKey.created_at: clock.now(),
                },
            )
            .execute()
        )
    return key


def list_users() -> list[User]:
    return list(User.select().order_by(User.email))


def list_keys() -> list[dict[str, Any]]:
    """Each account's active key as its owner recognises it (the prefix; only a digest of
    the whole key is stored) and when it was issued."""
    query = (
        ApiKey.select(User.email, ApiKey.prefix, ApiKey.created_at).join(User).order_by(User.email)
    )
    return [
        {"email": key.user.email, "prefix": key.prefix, "issued_at": clock.iso(key.created_at)}
        for key in query
    ]


def _check_tier(tier: str | None) -> None:
    if tier is not None and tier not in TIERS:
        raise AccountError(f"tier must be one of {', '.join(TIERS)}, got {tier!r}")


def account_json(principal: Principal, settings: Settings) -> dict[str, Any]:
    principal.require_tier("personal")
    at = clock.now()
    tier = principal.tier or "personal"
    # Units held by crashed requests come back here too, not only on the next compute.
    quota.reclaim_expired(principal.user_id, at)
    state = quota.usage(principal.user_id, settings.daily_limits[tier], at)
    expires = LIFETIME_EXPIRY if principal.is_lifetime else principal.tier_expires_at
    return {
        "email": principal.email,
        "tier": tier,
        "tier_expires_at": clock.iso(expires or LIFETIME_EXPIRY),
        "is_lifetime": principal.is_lifetime,
        "quota": {
            "limit_per_day": state.limit,
            "used_today": min(state.used, state.limit),
            "remaining_today": state.remaining,
            "resets_at": clock.iso(state.resets_at),
        },
    }
