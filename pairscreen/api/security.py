"""Bearer authentication (the spec's ``x-bearerInfoFunc``).

Async on purpose: connexion calls it on the event loop. On PostgreSQL the key lookup runs in
a worker thread, so a slow or restarting server never stalls other requests. On SQLite it
runs inline: a WAL-mode read by primary key takes tens of microseconds and never waits for a
writer, while the thread hop cost about 190 us of CPU per request, the difference between
58 % and 85 % of a bare connexion app's throughput on the cached endpoints
(benchmarks/load.py). A malformed key or a bad checksum is refused before any database query.
"""

from __future__ import annotations

from typing import TypedDict

from connexion.lifecycle import ConnexionRequest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.access import keys as api_keys
from pairscreen.api.service import service_in
from pairscreen.db.connection import is_sqlite
from pairscreen.errors import Forbidden


class TokenInfo(TypedDict):
    """What :func:`bearer_info` returns; connexion hands it to handlers as ``token_info``."""

    sub: str
    principal: accounts.Principal


async def bearer_info(token: str, request: ConnexionRequest) -> TokenInfo:
    """The caller of ``request``; connexion passes the request (its security runs before the
    request context exists), which carries the app's service."""
    service = service_in(request.scope)
    owners = service.runtime.key_owners
    if not api_keys.is_well_formed(token):
        return _lookup(owners, token)  # raises Unauthorized without touching the database
    if is_sqlite():
        return service.in_connection(_lookup, owners, token)  # see the module docstring
    return await service.in_thread(_lookup, owners, token)


def _lookup(owners: accounts.KeyOwners, token: str) -> TokenInfo:
    principal = owners.authenticate(token)
    problem = principal.tier_problem(clock.now())
    if problem:
        raise Forbidden(problem)
    return {"sub": str(principal.user_id), "principal": principal}
