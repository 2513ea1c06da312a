"""Refusals that come before routing, so that no request is read two ways.

* ``HEAD``: Starlette and connexion route it to the ``GET`` operation, which for a compute
  endpoint ran the computation and charged a unit for a body nobody receives. Every
  endpoint answers ``GET`` only, so ``HEAD`` is a 405 with ``Allow: GET``, computing and
  consuming nothing.
* A repeated query parameter (``?bt=90&bt=180``): connexion quietly keeps one of the values.
  Every query parameter of the API takes one value, so it is a 400 naming the parameter.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from pairscreen.api.errors import GENERIC, TEXT, shown


class GuardMiddleware:
    """Answers ``HEAD`` with 405 and a repeated query parameter with 400."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "HEAD":
            response = _plain(405, GENERIC[405], {"Allow": "GET"})
        else:
            problem = repeated_parameter(scope.get("query_string", b"").decode("latin-1"))
            if problem is None:
                await self.app(scope, receive, send)
                return
            response = _plain(400, problem)
        await response(scope, receive, send)


def repeated_parameter(query: str) -> str | None:
    """The 400 sentence for the first query parameter given more than once, else ``None``."""
    values: dict[str, list[str]] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(name, []).append(value)
    for name, given in values.items():
        if len(given) > 1:
            listed = ", ".join(shown(v) for v in given)
            return (
                f"Bad request: query parameter {shown(name)} is given {len(given)} times "
                f"({listed}); it takes one value."
            )
    return None


def _plain(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        (message.rstrip() + "\n").encode("utf-8"),
        status_code=status,
        headers={**(headers or {}), "Content-Type": TEXT},
    )
