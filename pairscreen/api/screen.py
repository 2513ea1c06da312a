"""``/screen/latest`` and ``/pairs``: the latest published screen, free of quota; ``/screens``:
the screen that was current at a past time.

Both answer from the screen the runtime holds in memory
(:class:`~pairscreen.screening.published.PublishedScreenCache`), checked against the database
at most once a second; the bodies are serialised once per screen. A client that prefers
``text/csv`` gets both as the same table (:mod:`pairscreen.api.screen_csv`).
"""

from __future__ import annotations

from starlette.responses import Response

from pairscreen.api.screen_csv import VARY, csv_requested, csv_response
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.screening.history import parse_moment
from pairscreen.screening.published import PublishedScreen
from pairscreen.screening.screen import pairs_json

RECHECK_SECONDS = 1.0  # a screen published by another process is served after at most this


async def latest_screen(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    if csv_requested():
        return await csv_response(await _published())
    return Response((await _published()).payload, media_type="application/json", headers=VARY)


async def list_pairs(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    if csv_requested():
        return await csv_response(await _published())
    return Response(pairs_json(await _published()), media_type="application/json", headers=VARY)


async def screen_at(token_info: TokenInfo, at: str) -> Response:
    """The screen that was current at ``at`` (a regular or a point-in-time one)."""
    caller(token_info).require_tier("personal")
    moment = parse_moment(at)
    svc = service()
    payload = await svc.in_thread(svc.runtime.history.at, moment)
    return Response(payload, media_type="application/json")


async def _published() -> PublishedScreen:
    svc = service()
    published = svc.runtime.published
    screen = published.recent(RECHECK_SECONDS)
    if screen is None:
        screen = await svc.in_thread(published.latest)
    return screen
