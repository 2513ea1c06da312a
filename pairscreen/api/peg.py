"""``/peg-events``: active sustained depeg events, Pro tier only.

Tagged with an ``ETag`` of its text, like ``/assets``: the website's Pegs page, checking every
minute, gets ``304`` without a body until an event opens or closes or pegs are checked again.
"""

from __future__ import annotations

import json
import zlib

from connexion import request
from starlette.responses import Response

from pairscreen.api.http_cache import not_modified
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service, with_database
from pairscreen.pegs.status import active_events


@with_database
def active_peg_events(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("pro")
    body = json.dumps(active_events(service().runtime.universe), allow_nan=False)
    etag = f'W/"peg-events-{zlib.crc32(body.encode()):08x}"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
