"""``/watchlist``: the caller's own items, read and written free of quota."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service, with_database
from pairscreen.notify.hygiene import HygieneChange
from pairscreen.notify.watchlist import delete_item, item_json, save_item, watchlist_of


@with_database
def list_watchlist(token_info: TokenInfo) -> dict[str, Any]:
    principal = caller(token_info)
    principal.require_tier("personal")
    return watchlist_of(principal.user_id)


@with_database
def watch_pair(
    a: str,
    b: str,
    token_info: TokenInfo,
    notify_approach: bool | None = None,
    notify_in_zone: bool | None = None,
    cooldown_hours: int | None = None,
    snooze_until: str | None = None,
    rearm_margin: float | None = None,
) -> tuple[dict[str, Any], int]:
    principal = caller(token_info)
    principal.require_tier("personal")
    hygiene = HygieneChange.of(cooldown_hours, snooze_until, rearm_margin)
    asset_a, asset_b = service().runtime.universe.pair(a, b)
    item, created = save_item(
        principal.user_id,
        principal.tier,
        asset_a,
        asset_b,
        approach=notify_approach,
        in_zone=notify_in_zone,
        hygiene=hygiene,
    )
    return item_json(item), 201 if created else 200


@with_database
def unwatch_pair(a: str, b: str, token_info: TokenInfo) -> Response:
    principal = caller(token_info)
    principal.require_tier("personal")
    asset_a, asset_b = service().runtime.universe.pair(a, b)
    delete_item(principal.user_id, asset_a, asset_b, owner="your watchlist")
    return Response(status_code=204)  # no body, so no media type
