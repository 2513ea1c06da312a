"""``/assets``: every ticker of the universe with its data's span and age, free of quota."""

from __future__ import annotations

from starlette.responses import Response

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.pegs.status import peg_status


async def list_assets(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    svc = service()
    rt = svc.runtime
    body = await svc.in_thread(rt.assets.json, rt.universe, rt.candles, peg_status)
    return Response(body, media_type="application/json")
