"""The ``/me`` body: the account, its tier and today's quota."""

from __future__ import annotations

from typing import Any

from pairscreen import clock
from pairscreen.access import quota
from pairscreen.access.accounts import LIFETIME_EXPIRY, Principal
from pairscreen.config import Settings


def account_json(principal: Principal, settings: Settings) -> dict[str, Any]:
    principal.require_tier("personal")
    at = clock.now()
    tier = principal.tier or "personal"
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
            "resets_at": f"{clock.iso(state.resets_at)} (resets daily at 00:00 UTC)",
        },
    }
