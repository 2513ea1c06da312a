"""``/watchlist``: the caller's own items, free of quota."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, with_database
from pairscreen.notify.watchlist import watchlist_of


@with_database
def list_watchlist(token_info: TokenInfo) -> dict[str, Any]:
    principal = caller(token_info)
    principal.require_tier("personal")
    return watchlist_of(principal.user_id)
