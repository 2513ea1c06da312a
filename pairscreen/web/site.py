"""Serves the website's files beside the API: ``/`` and ``/static/…``.

The site is plain HTML, CSS and small JavaScript modules shipped in this package
(``static/``), plus plotly.js from the installed ``plotly`` wheel (its offline bundle), so it
works without a network. It holds no logic of its own beyond layout: every number it shows
comes from an ``/api/v1`` response, fetched with the key the person signed in with. The
server keeps no session: the key stays in the browser's ``sessionStorage`` and goes out as
the API's ``Authorization`` header, through the API's own checks.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_PREFIX = "/static/"
PLOTLY_PATH = "/static/vendor/plotly.min.js"

# The pages load nothing from elsewhere and run no inline script; plotly sets inline styles.
# 'unsafe-eval': plotly's WebGL layer (regl, for the universe map's scattergl) compiles its
# draw procedures with Function() when its precompiled set does not match the browser's GPU
# context (headless Chromium's software WebGL is such a case); scripts still come only from
# this origin, so injected markup still runs nothing.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; "
        "base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def static_dir() -> Path:
    return Path(str(resources.files("pairscreen.web").joinpath("static")))


def plotly_bundle() -> Path:
    """plotly.js as the ``plotly`` wheel ships it for offline use."""
    return Path(str(resources.files("plotly").joinpath("package_data", "plotly.min.js")))


class WebsiteMiddleware:
    """Answers ``GET /`` (the page) and ``/static/…`` (its files); passes everything else on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.files = StaticFiles(directory=static_dir())
        self.index = static_dir() / "index.html"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != "/" and not path.startswith(STATIC_PREFIX):
            await self.app(scope, receive, send)
            return
        response: Response | None = None
        if scope["method"] not in ("GET", "HEAD"):
            response = Response(
                "Method not allowed: the website's files answer GET.\n",
                status_code=405,
                headers={"Allow": "GET", "Content-Type": "text/plain; charset=utf-8"},
            )
        elif path == "/":
            response = FileResponse(self.index, headers={"Cache-Control": "no-cache"})
        elif path == PLOTLY_PATH:
            response = FileResponse(
                plotly_bundle(),
                media_type="text/javascript",
                headers={"Cache-Control": "public, max-age=86400"},
            )
        if response is None:
            await self._static(scope, receive, send)
            return
        response.headers.update(SECURITY_HEADERS)
        await response(scope, receive, send)

    async def _static(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A file of ``static/``, with the site's headers (a 404 in plain text when absent)."""
        inner = {**scope, "path": scope["path"][len(STATIC_PREFIX) - 1 :], "root_path": ""}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                headers.append((b"cache-control", b"no-cache"))
                message = {**message, "headers": headers}
            await send(message)

        await self.files(inner, receive, send_with_headers)
