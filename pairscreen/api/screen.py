"""``/screen/latest`` and ``/pairs``: the latest published screen, free of quota.

Both answer from the screen the runtime holds in memory
(:class:`~pairscreen.screening.published.PublishedScreenCache`), checked against the database
at most once a second; the bodies are serialised once per screen, and gzip-compressed once
per screen for the clients that accept it. Both carry the screen's ``ETag``: a client that
sends it back in ``If-None-Match`` gets ``304`` and no body until another screen is published.
"""

from __future__ import annotations

from collections.abc import Callable

from connexion import request
from connexion.context import scope as request_scope
from starlette.responses import Response

from pairscreen.api.compression import gzip_slot
from pairscreen.api.http_cache import not_modified
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.screening.pair_pages import PairIndex, PairQuery, pair_page
from pairscreen.screening.published import PublishedScreen
from pairscreen.screening.screen import pairs_json

RECHECK_SECONDS = 1.0  # a screen published by another process is served after at most this


async def latest_screen(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    screen = await _published()
    return await _answer(screen, "screen", lambda: screen.payload)


async def list_pairs(
    token_info: TokenInfo,
    sector: str | None = None,
    zone: str | None = None,
    min_score: float | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Response:
    caller(token_info).require_tier("personal")
    screen = await _published()
    query = PairQuery(sector, zone, min_score, limit, cursor)
    if query.is_plain:
        return await _answer(screen, "pairs", lambda: pairs_json(screen))
    headers = {"ETag": screen.etag, "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), screen.etag):
        return Response(status_code=304, headers=headers)
    # Parsed once per screen (a thread, off the event loop: 100,000 pairs take a while).
    index = await service().in_thread(screen.memo, "pair_index", lambda: _pair_index(screen))
    return Response(pair_page(screen, index, query), media_type="application/json", headers=headers)


def _pair_index(screen: PublishedScreen) -> PairIndex:
    return PairIndex.of(pairs_json(screen))


async def _answer(screen: PublishedScreen, name: str, body: Callable[[], str]) -> Response:
    """The body of ``screen``'s view ``name``: ``304`` when the client holds it already
    (``If-None-Match``), gzip-compressed (once per screen) when the client accepts it."""
    headers = {"ETag": screen.etag, "Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), screen.etag):
        return Response(status_code=304, headers=headers)
    svc = service()
    text = body() if name == "screen" else await svc.in_thread(body)
    slot = gzip_slot(request_scope)
    if slot is not None:  # the client takes gzip: the middleware sends this copy instead
        slot["body"] = await svc.in_thread(screen.gzipped, name, text)
    # Not kept encoded: a second copy of a big screen would double the worker's memory for
    # the few clients that take no gzip.
    return Response(text, media_type="application/json", headers=headers)


async def _published() -> PublishedScreen:
    svc = service()
    published = svc.runtime.published
    screen = published.recent(RECHECK_SECONDS)
    if screen is None:
        screen = await svc.in_thread(published.latest)
    return screen
