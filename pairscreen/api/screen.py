"""``/screen/latest`` and ``/pairs``: the latest published screen, free of quota.

Both answer from the screen held in memory (:func:`screening.recent_screen`), checked against
the database at most once a second; the bodies are serialised once per screen.
"""

from __future__ import annotations

from starlette.responses import Response

from pairscreen.api.support import caller, in_thread
from pairscreen.screening import screen as screening

RECHECK_SECONDS = 1.0  # a screen published by another process is served after at most this


async def latest_screen(token_info: dict) -> Response:
    caller(token_info).require_tier("personal")
    return Response((await _published()).payload, media_type="application/json")


async def list_pairs(token_info: dict) -> Response:
    caller(token_info).require_tier("personal")
    return Response((await _published()).pairs_json, media_type="application/json")


async def _published() -> screening.PublishedScreen:
    screen = screening.recent_screen(RECHECK_SECONDS)
    if screen is None:
        screen = await in_thread(screening.latest_screen)
    return screen
