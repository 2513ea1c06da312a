"""Serves the website's files beside the API: ``/`` and ``/static/…``.

The site is plain HTML, CSS and small JavaScript modules shipped in this package
(``static/``), plus plotly.js's strict build vendored under ``static/vendor/`` (no CDN, no
network). It holds no logic of its own beyond layout: every number it shows comes from an
``/api/v1`` response, fetched with the key the person signed in with. The server keeps no
session: the key stays in the browser's ``sessionStorage`` and goes out as the API's
``Authorization`` header, through the API's own checks.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_PREFIX = "/static/"

# The pages load nothing from elsewhere, run no inline script and evaluate no string as code
# (plotly.js's strict build precompiles its WebGL draw code); plotly sets inline styles.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; "
        "base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def static_dir() -> Path:
    return Path(str(resources.files("pairscreen.web").joinpath("static")))


def site_files(directory: Path) -> StaticFiles:
    """The files of ``directory``, symlinks followed.

    ``pip install -e . --config-settings editable_mode=strict`` installs the package as a tree
    of symlinks to the checkout, which StaticFiles refuses by default (it resolves each file and
    finds it outside the directory). Following them is safe here: the request's path is still
    normalised and kept inside ``directory`` before any link is read, and the only links under
    an installed package are the ones its installer made.
    """
    return StaticFiles(directory=directory, follow_symlink=True)


class WebsiteMiddleware:
    """Answers ``GET /`` (the page) and ``/static/…`` (its files); passes everything else on."""

    def __init__(self, app: ASGIApp, directory: Path | None = None) -> None:
        self.app = app
        root = static_dir() if directory is None else directory
        self.files = site_files(root)
        self.index = root / "index.html"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != "/" and not path.startswith(STATIC_PREFIX):
            await self.app(scope, receive, send)
            return
        response: Response | None = None
        if scope["method"] not in ("GET", "HEAD"):
            response = PlainTextResponse(
                "Method not allowed: the website's files answer GET.\n",
                status_code=405,
                headers={"Allow": "GET"},
            )
        elif path == "/":
            response = FileResponse(self.index, headers={"Cache-Control": "no-cache"})
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

        try:
            await self.files(inner, receive, send_with_headers)
        except HTTPException as refused:
            # Raised before anything was sent: a missing file (or a path that leaves static/).
            sentence = (
                f"Not found: the website has no file {scope['path']}.\n"
                if refused.status_code == 404
                else f"The website's file {scope['path']} cannot be read ({refused.detail}).\n"
            )
            response = PlainTextResponse(sentence, status_code=refused.status_code)
            response.headers.update({**SECURITY_HEADERS, "Cache-Control": "no-cache"})
            await response(scope, receive, send)
