"""gzip for the big cached bodies, from bytes compressed once per screen.

A handler cannot answer compressed bytes itself: the contract's response validation (on in
the tests) reads the body as JSON. So the handler answers the JSON as usual and leaves the
compressed copy in a slot this middleware put in the request's state; the middleware, outside
the validation, sends the copy instead, with ``Content-Encoding: gzip``. Compressing a 17 MB
screen takes about a second: doing it once per screen, not per request, is the point.
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pairscreen.api.http_cache import accepts_gzip

SLOT = "pairscreen.gzipped"  # key in scope["state"]: a dict the handler may fill with "body"


def gzip_slot(scope: Scope) -> dict[str, bytes] | None:
    """The request's slot for a precompressed body, None when the client takes no gzip."""
    slot: dict[str, bytes] | None = scope.get("state", {}).get(SLOT)
    return slot


class PreparedGzipMiddleware:
    """Sends the precompressed body a handler left in the request's slot."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not accepts_gzip(
            Headers(scope=scope).get("accept-encoding", "")
        ):
            await self.app(scope, receive, send)
            return
        slot: dict[str, bytes] = {}
        scope.setdefault("state", {})[SLOT] = slot
        swapping = False

        async def send_prepared(message: Message) -> None:
            nonlocal swapping
            if message["type"] == "http.response.start":
                blob = slot.get("body")
                swapping = blob is not None and message["status"] == 200
                if swapping:
                    assert blob is not None
                    headers = MutableHeaders(raw=list(message["headers"]))
                    headers["content-length"] = str(len(blob))
                    headers["content-encoding"] = "gzip"
                    message = {**message, "headers": headers.raw}
                await send(message)
            elif message["type"] == "http.response.body" and swapping:
                if not message.get("more_body", False):
                    body: Any = slot["body"]
                    await send({"type": "http.response.body", "body": body})
            else:
                await send(message)

        await self.app(scope, receive, send_prepared)
