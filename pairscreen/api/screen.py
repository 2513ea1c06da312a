"""``/screen/latest`` and ``/pairs``: the latest published screen, free of quota; ``/screens``:
the screen that was current at a past time.

Both answer from the screen the runtime holds in memory
(:class:`~pairscreen.screen_store.store.ScreenStore`), checked against the database
at most once a second; the bodies are serialised once per screen, and gzip-compressed once
per screen for the clients that accept it. Both carry the screen's ``ETag``: a client that
sends it back in ``If-None-Match`` gets ``304`` and no body until another screen is published.
A client that prefers ``text/csv`` gets the whole screen as one table
(:mod:`pairscreen.api.screen_csv`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from connexion import request
from connexion.context import scope as request_scope
from starlette.responses import Response

from pairscreen import clock
from pairscreen.api.compression import gzip_slot
from pairscreen.api.http_cache import not_modified
from pairscreen.api.screen_csv import csv_requested, csv_response
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.errors import NotAcceptable
from pairscreen.screen_store.page_index import PageIndex
from pairscreen.screen_store.published import PublishedScreen
from pairscreen.screen_views.moments import parse_moment
from pairscreen.screen_views.pages import PageQuery, page, pair_page_index, survivor_page_index
from pairscreen.screen_views.pairs_view import pairs_json
from pairscreen.screen_views.staleness import facts_known, facts_of, serve_latest

# Every answer of the two operations depends on ``Accept`` (JSON or CSV) and on
# ``Accept-Encoding`` (gzip or not).
VARY = "Accept, Accept-Encoding"
RECHECK_SECONDS = 1.0  # a screen published by another process is served after at most this


async def latest_screen(
    token_info: TokenInfo,
    sector: str | None = None,
    zone: str | None = None,
    min_score: float | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Response:
    query = PageQuery(sector, zone, min_score, limit, cursor)
    return await _view(
        token_info, query, "screen", lambda screen: screen.payload, survivor_page_index
    )


async def list_pairs(
    token_info: TokenInfo,
    sector: str | None = None,
    zone: str | None = None,
    min_score: float | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Response:
    query = PageQuery(sector, zone, min_score, limit, cursor)
    return await _view(token_info, query, "pairs", pairs_json, pair_page_index)


async def _view(
    token_info: TokenInfo,
    query: PageQuery,
    name: str,
    whole: Callable[[PublishedScreen], str],
    index: Callable[[PublishedScreen], PageIndex],
) -> Response:
    """The view ``name`` of the latest screen: whole, as CSV, or a filtered page.

    ``/screen/latest`` is judged stale or not now (:mod:`pairscreen.screen_views.staleness`):
    its ``stale`` and ``stale_reason`` are today's, whatever was stored when it was published.
    """
    caller(token_info).require_tier("personal")
    screen = await latest_published()
    if csv_requested():
        return await _csv(screen, query)
    served = None
    if name == "screen":
        if not facts_known(screen):  # read once per screen, from the database: off the loop
            await service().in_thread(facts_of, screen)
        served = serve_latest(service().runtime.universe, screen, clock.now())
    if query.is_plain:
        if served is not None:
            return await _answer(screen, served.name, lambda: served.text, served.etag)
        return await _answer(screen, name, lambda: whole(screen), screen.etag)
    head = served.staleness.fields() if served is not None else {}
    etag = served.etag if served is not None else screen.etag
    return await _page(screen, query, f"{name}_index", index, head, etag)


async def _csv(screen: PublishedScreen, query: PageQuery) -> Response:
    if not query.is_plain:
        raise NotAcceptable(
            "text/csv is the whole screen, one row per survivor: ask for it without "
            "sector, zone, min_score, limit and cursor, or ask for JSON."
        )
    return await csv_response(screen)


async def _page(
    screen: PublishedScreen,
    query: PageQuery,
    name: str,
    build: Callable[[PublishedScreen], PageIndex],
    head: Mapping[str, Any],
    etag: str,
) -> Response:
    """A filtered page, from the index ``build`` reads (stored when the screen was
    published) or parses once per screen (kept as ``name``), with ``head``'s fields over the
    stored ones."""
    headers = {"ETag": etag, "Vary": VARY, "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=headers)

    def cut() -> str:
        return page(screen, screen.memo(name, lambda: build(screen)), query, head)

    # On a thread, off the event loop: reading the stored index (or parsing 100,000 pairs)
    # and the blocks of the page's items.
    body = await service().in_thread(cut)
    return Response(body, media_type="application/json", headers=headers)


async def _answer(
    screen: PublishedScreen, name: str, body: Callable[[], str], etag: str
) -> Response:
    """The body of ``screen``'s view ``name``: ``304`` when the client holds it already
    (``If-None-Match``), gzip-compressed (once per screen) when the client accepts it."""
    headers = {"ETag": etag, "Vary": VARY, "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=headers)
    svc = service()
    # Built already (every answer but a screen's first): on the loop. Else on a thread: the
    # first answer of a screen reads its payload (and /pairs is built from it).
    text = screen.built(name)
    if text is None:
        text = await svc.in_thread(body)
    slot = gzip_slot(request_scope)
    if slot is not None:  # the client takes gzip: the middleware sends this copy instead
        blob = screen.gzipped_built(name)
        slot["body"] = blob if blob is not None else await svc.in_thread(screen.gzipped, name, text)
    # Not kept encoded: a second copy of a big screen would double the worker's memory for
    # the few clients that take no gzip.
    return Response(text, media_type="application/json", headers=headers)


async def screen_at(token_info: TokenInfo, at: str) -> Response:
    """The screen that was current at ``at`` (a regular or a point-in-time one)."""
    caller(token_info).require_tier("personal")
    moment = parse_moment(at)
    svc = service()
    payload = await svc.in_thread(svc.runtime.screens.at, moment)
    return Response(payload, media_type="application/json")


async def latest_published() -> PublishedScreen:
    """The latest screen, as known at most ``RECHECK_SECONDS`` ago."""
    svc = service()
    published = svc.runtime.screens
    screen = published.recent(RECHECK_SECONDS)
    if screen is None:
        screen = await svc.in_thread(published.latest)
    return screen
