"""``/me/channels``: the channel kinds the loaded notifier plugins offer, and a user's own
change of one channel (``PUT /me/channels/{kind}``). The address travels in the JSON body,
never in the URL, so that no access log holds a webhook's secret; the answer shows it masked."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service, with_database
from pairscreen.notify.channels import channel_json, set_own_channel


@with_database
def set_channel(kind: str, body: dict[str, Any], token_info: TokenInfo) -> dict[str, Any]:
    principal = caller(token_info)
    principal.require_tier("personal")
    kinds = service().runtime.plugins.channel_kinds
    set_own_channel(
        principal.user_id,
        kind,
        address=body.get("address"),
        enabled=body.get("enabled"),
        kinds=kinds,
    )
    return dict(channel_json(principal.user_id, principal.email, kind, kinds))


@with_database
def list_kinds(token_info: TokenInfo) -> dict[str, Any]:
    caller(token_info)
    return {"kinds": service().runtime.plugins.channel_kinds.described()}
