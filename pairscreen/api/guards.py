"""Refusals that come before routing, so that no request is read two ways.

* ``HEAD``: Starlette and connexion route it to the ``GET`` operation, which for a compute
  endpoint ran the computation and charged a unit for a body nobody receives. No endpoint
  answers ``HEAD``, so it is a 405, computing and consuming nothing.
* A method the path does not answer: connexion's 405 named only one of the path's methods
  (its router matches the first operation), so the ``Allow`` header is taken from the
  contract's paths here: every method the path answers.
* A repeated query parameter (``?bt=90&bt=180``): connexion quietly keeps one of the values.
  Every query parameter of the API takes one value, so it is a 400 naming the parameter.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from pairscreen.api.errors import GENERIC, TEXT, shown

PathMethods = tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]


class GuardMiddleware:
    """Answers ``HEAD`` and unanswered methods with 405, a repeated query parameter with 400."""

    def __init__(self, app: ASGIApp, methods: PathMethods = ()) -> None:
        self.app = app
        self.methods = methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        answered = self._answered(scope["path"])
        if scope["method"] == "HEAD" or (answered and scope["method"] not in answered):
            allow = ", ".join(answered or ("GET",))
            response = _plain(405, GENERIC[405], {"Allow": allow})
        else:
            problem = repeated_parameter(scope.get("query_string", b"").decode("latin-1"))
            if problem is None:
                await self.app(scope, receive, send)
                return
            response = _plain(400, problem)
        await response(scope, receive, send)

    def _answered(self, path: str) -> tuple[str, ...]:
        """The methods of the contract's path matching ``path`` (none for any other path)."""
        for pattern, methods in self.methods:
            if pattern.match(path):
                return methods
        return ()


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
