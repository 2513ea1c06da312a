"""``/screen/latest/pairs/{a}/{b}``: one pair's verdict in the latest screen, free of quota.

Read from the verdicts stored beside the screen (:mod:`pairscreen.screen_store.verdict_store`):
one block of the screen's pairs, never the whole screen. ``ETag`` names the screen, so a
client holding it gets ``304`` until another screen is published.
"""

from __future__ import annotations

from connexion import request
from starlette.responses import Response

from pairscreen.api.http_cache import not_modified
from pairscreen.api.screen import latest_published
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service


async def screened_pair(a: str, b: str, token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    rt = service().runtime
    asset_a, asset_b = rt.universe.pair(a, b)
    screen = await latest_published()
    headers = {"ETag": f'W/"screen-{screen.key[0]}-pair"', "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), headers["ETag"]):
        return Response(status_code=304, headers=headers)
    body = await service().in_thread(rt.screens.verdict, rt.plugins, screen, asset_a, asset_b)
    return Response(body, media_type="application/json", headers=headers)
