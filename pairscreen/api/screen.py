"""``/screen/latest`` and ``/pairs``: the latest published screen, free of quota.

Both answer from the screen the runtime holds in memory
(:class:`~pairscreen.screening.published.PublishedScreenCache`), checked against the database
at most once a second; the bodies are serialised once per screen. A client that prefers
``text/csv`` (its ``Accept`` header) gets both as the same table: one row per survivor.
"""

from __future__ import annotations

from connexion import request
from starlette.responses import Response

from pairscreen.api.negotiation import prefers_csv
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.screening.export import screen_csv
from pairscreen.screening.published import PublishedScreen
from pairscreen.screening.screen import pairs_json

RECHECK_SECONDS = 1.0  # a screen published by another process is served after at most this
VARY = {"Vary": "Accept"}


async def latest_screen(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    screen = await _published()
    if prefers_csv(request.headers.get("accept")):
        return _csv(screen)
    return Response(screen.payload, media_type="application/json", headers=VARY)


async def list_pairs(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    screen = await _published()
    if prefers_csv(request.headers.get("accept")):
        return _csv(screen)
    return Response(pairs_json(screen), media_type="application/json", headers=VARY)


def _csv(screen: PublishedScreen) -> Response:
    stamp = "".join(ch for ch in screen.key[1] if ch.isdigit())[:14]  # YYYYMMDDhhmmss
    disposition = f'attachment; filename="pairscreen-screen-{stamp}.csv"'
    headers = {**VARY, "Content-Disposition": disposition}
    return Response(screen_csv(screen), media_type="text/csv; charset=utf-8", headers=headers)


async def _published() -> PublishedScreen:
    svc = service()
    published = svc.runtime.published
    screen = published.recent(RECHECK_SECONDS)
    if screen is None:
        screen = await svc.in_thread(published.latest)
    return screen
