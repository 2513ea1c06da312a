"""``/evidence``: the latest published evaluation of the screen's rules, free of quota.

Read from the database on the ``io`` lane (one small row); its ``ETag`` names the
evaluation, so a client holding it gets ``304`` until the next one is published.
"""

from __future__ import annotations

from connexion import request
from starlette.responses import Response

from pairscreen.api.http_cache import not_modified
from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.errors import NotFound
from pairscreen.screen_store.evidence import latest

NEVER_PUBLISHED = (
    "No evaluation of the screen's rules has been published yet: the worker publishes one "
    "daily, or run 'pairscreen evaluate --publish'."
)


async def latest_evidence(token_info: TokenInfo) -> Response:
    caller(token_info).require_tier("personal")
    evidence = await service().in_thread(latest)
    if evidence is None:
        raise NotFound(NEVER_PUBLISHED)
    headers = {"ETag": evidence.etag, "Cache-Control": "no-cache"}
    if not_modified(request.headers.get("if-none-match", ""), evidence.etag):
        return Response(status_code=304, headers=headers)
    return Response(evidence.body, media_type="application/json", headers=headers)
