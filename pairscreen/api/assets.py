"""``/assets``: every ticker of the universe with its data's span and age, free of quota.

Tagged with an ``ETag`` of its text: the website's Pegs page, checking every minute, gets
``304`` without a body until an asset's data or peg changed.
"""

from __future__ import annotations

import functools

from connexion import request
from starlette.responses import Response

from pairscreen.api.http_cache import not_modified
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.contracts import bar_size
from pairscreen.pegs.status import peg_status


async def list_assets(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    svc = service()
    rt = svc.runtime
    peg_of = functools.partial(peg_status, universe=rt.universe)
    bar = bar_size(rt.universe.bar)
    body, etag = await svc.in_thread(rt.assets.tagged, rt.universe, rt.candles, peg_of, bar)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
