"""``/me``: the caller's account and quota."""

from __future__ import annotations

from typing import Any

from pairscreen.access.accounts import account_json
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service, with_database
from pairscreen.notify.channels import channels_json


@with_database
def show_account(token_info: TokenInfo) -> dict[str, Any]:
    principal = caller(token_info)
    body = account_json(principal, service().runtime.settings)
    kinds = service().runtime.plugins.channel_kinds
    return {**body, "channels": channels_json(principal.user_id, principal.email, kinds)}
