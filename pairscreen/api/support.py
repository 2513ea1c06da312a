"""What every handler shares: the app's service, a database connection per request, the caller."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from connexion.context import scope as request_scope

from pairscreen.access.accounts import Principal
from pairscreen.api.hangup import Hangup
from pairscreen.api.security import TokenInfo
from pairscreen.api.service import Service, hangup_in, service_in
from pairscreen.contracts import Asset
from pairscreen.runtime import Runtime

P = ParamSpec("P")
T = TypeVar("T")


def service() -> Service:
    """The service of the app serving the current request (connexion's request context)."""
    return service_in(request_scope)


def hangup() -> Hangup | None:
    """The watch on the current request's client, to notice it leaving mid-computation."""
    return hangup_in(request_scope)


async def pair_compute(
    token_info: TokenInfo, a: str, b: str, work: Callable[[Runtime, Asset, Asset], T]
) -> tuple[T, dict[str, str]]:
    """A compute request on the pair ``a``/``b``: the pair is resolved once, before any
    quota is reserved (an unknown ticker or one asset twice never costs a unit), and
    ``work`` gets its two assets; one unit is charged when ``work`` answers, and none when
    the client has gone before its answer is written. The result, and the quota headers to
    send with it.

    The resolution is in memory, so it runs here on the event loop: on the ``io`` lane a
    check per compute request queued key lookups and ``/me`` behind a burst of computations.
    """
    svc = service()
    rt = svc.runtime
    asset_a, asset_b = rt.universe.pair(a, b)
    return await svc.run_compute(
        caller(token_info), lambda: work(rt, asset_a, asset_b), hangup=hangup()
    )


def with_database(handler: Callable[P, object]) -> Callable[P, Any]:
    """Run the handler inside its request's connection (handlers run in a worker thread)."""

    @functools.wraps(handler)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
        with service().connections.request():
            return _named_json(handler(*args, **kwargs))

    return wrapper


def _named_json(result: Any) -> Any:
    """Name the media type of a JSON body.

    Every operation also produces ``text/plain`` (its errors), and connexion refuses to guess
    between two media types for a dict: it would answer 500.
    """
    if isinstance(result, dict | list):
        return result, 200, {"Content-Type": "application/json"}
    if isinstance(result, tuple) and result and isinstance(result[0], dict | list):
        body, status, *rest = result
        headers = {"Content-Type": "application/json", **(rest[0] if rest else {})}
        return body, status, headers
    return result


def caller(token_info: TokenInfo) -> Principal:
    return token_info["principal"]
