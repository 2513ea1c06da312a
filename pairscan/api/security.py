"""Bearer authentication (the spec's ``x-bearerInfoFunc``).

Async on purpose: connexion calls it on the event loop, so the key lookup runs in a worker
thread and a slow database never stalls other requests. A malformed key or a bad checksum is
refused before any database query.
"""

from __future__ import annotations

from pairscan import clock
from pairscan.api.support import in_thread
from pairscan.errors import Forbidden
from pairscan.services import accounts, api_keys


async def bearer_info(token: str) -> dict:
    if not api_keys.is_well_formed(token):
        return _lookup(token)  # raises Unauthorized without touching the database
    return await in_thread(_lookup, token)


def _lookup(token: str) -> dict:
    principal = accounts.authenticate(token)
    problem = principal.tier_problem(clock.now())
    if problem:
        raise Forbidden(problem)
    return {"sub": str(principal.user_id), "principal": principal}
