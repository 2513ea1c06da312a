"""``/me``: the caller's account and quota."""

from __future__ import annotations

from typing import Any

from pairscreen.access.accounts import account_json
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service, with_database


@with_database
def show_account(token_info: TokenInfo) -> dict[str, Any]:
    return account_json(caller(token_info), service().runtime.settings)
