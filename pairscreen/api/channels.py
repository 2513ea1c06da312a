"""``PUT /me/channels/{kind}``: a user sets their own Telegram, Discord or Slack channel, or
turns one of their channels on or off. The address travels in the JSON body, never in the
URL, so that no access log holds a webhook's secret; the answer shows it masked."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service, with_database
from pairscreen.notify.channels import channel_json, set_own_channel, url_prefixes


@with_database
def set_channel(kind: str, body: dict[str, Any], token_info: TokenInfo) -> dict[str, Any]:
    principal = caller(token_info)
    principal.require_tier("personal")
    set_own_channel(
        principal.user_id,
        kind,
        address=body.get("address"),
        enabled=body.get("enabled"),
        prefixes=url_prefixes(service().runtime.settings),
    )
    return dict(channel_json(principal.user_id, principal.email, kind))
