"""The website's files, served by the app beside the API (the quick, browser-free half).

``/`` is the page and ``/static/…`` every file it and its modules name (found by reading
them, tests/support/site_files.py), plotly.js's strict build among them, vendored with its
licence and version: nothing comes from another host and nothing needs ``'unsafe-eval'``.
Every file carries the site's security headers. The files are served the same from each
layout an install leaves: the checkout itself (a regular editable install), a tree of
symlinks to it (``editable_mode=strict``) and plain copies (a wheel or a regular install);
tests/test_readme_install.py installs the last two for real. A path that leaves
``static/`` or names no file is a plain-text 404 either way.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.responses import PlainTextResponse
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from pairscreen.web.site import SECURITY_HEADERS, WebsiteMiddleware, static_dir
from tests.support.site_files import Fetched, crawl, failures

PLOTLY_DIR = "vendor/plotly.js-strict-dist-min"
PLOTLY_PATH = f"/static/{PLOTLY_DIR}/plotly-strict.min.js"
# What the page cannot work without: the crawl must reach at least these.
ESSENTIAL = ("/", "/static/css/site.css", "/static/js/app.js", "/static/js/map.js", PLOTLY_PATH)


def fetcher(client: TestClient) -> Callable[[str], Fetched]:
    def get(path: str) -> Fetched:
        r = client.get(path)
        return Fetched(r.status_code, r.headers.get("content-type", ""), r.text)

    return get


def test_the_page_and_every_file_it_names_are_served_with_the_sites_headers(client):
    raw = client.client
    found = crawl(fetcher(raw))
    assert not failures(found)
    assert set(ESSENTIAL) <= set(found), sorted(found)
    # Swagger UI, linked from the footer, and its own files.
    assert any(path.startswith("/api/v1/ui/") and path.endswith(".js") for path in found)
    site = [path for path in found if path == "/" or path.startswith("/static/")]
    for path in site:
        headers = raw.get(path).headers
        for name, value in SECURITY_HEADERS.items():
            assert headers[name] == value, path
    page = raw.get("/").text
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)
    for module in (static_dir() / "js").glob("*.js"):
        assert f"/static/js/{module.name}" in found, f"{module.name} is named by no page"
        assert "http://" not in module.read_text() and "https://" not in module.read_text()


def test_the_security_policy_runs_only_this_origins_scripts_and_never_eval(client):
    policy = client.client.get("/").headers["content-security-policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert "unsafe-eval" not in policy and "unsafe-inline" not in directives["script-src"]


def test_plotly_is_the_vendored_strict_build_with_its_licence_and_version(client):
    vendored = static_dir() / PLOTLY_DIR
    served = client.client.get(PLOTLY_PATH)
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/javascript")
    assert served.content == (vendored / "plotly-strict.min.js").read_bytes()
    package = json.loads((vendored / "package.json").read_text())
    assert package["name"] == "plotly.js-strict-dist-min" and package["license"] == "MIT"
    # The header plotly writes into the file names the same version as package.json: an
    # update that replaced one and not the other fails here.
    assert f"plotly.js (strict - minified) v{package['version']}\n" in served.text[:200]
    assert "MIT License" in (vendored / "LICENSE").read_text()
    # Revalidated, not cached blind: an update of the file reaches the next page load.
    assert served.headers["cache-control"] == "no-cache"
    again = client.client.get(PLOTLY_PATH, headers={"If-None-Match": served.headers["etag"]})
    assert again.status_code == 304 and not again.content


def test_missing_files_and_other_methods_are_plain_text_with_the_sites_headers(client):
    raw = client.client
    missing = raw.get("/static/nope.js")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/plain")
    assert missing.text == "Not found: the website has no file /static/nope.js.\n"
    assert missing.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    posted = raw.request("POST", "/")
    assert posted.status_code == 405 and posted.headers["allow"] == "GET"
    assert posted.headers["content-type"].startswith("text/plain")


def asgi_get(app: Any, path: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` exactly as given (an HTTP client would remove its dot segments)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"test")],
        "server": ("test", 80),
        "client": ("127.0.0.1", 1),
    }
    messages: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    anyio.run(app, scope, receive, send)
    start = messages[0]
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, b"".join(m.get("body", b"") for m in messages[1:])


LEAVING_STATIC = (
    "/static/../secret.txt",
    "/static/js/../../secret.txt",
    "/static/./../secret.txt",
    "/static//secret.txt",
    "/static/js/..%2f..%2fsecret.txt",
)


def test_the_whole_app_refuses_paths_that_leave_static(client):
    app = client.client.app
    assert (static_dir().parent / "site.py").exists()
    for path in ("/static/../site.py", "/static/js/../../site.py", "/static/../__init__.py"):
        status, headers, body = asgi_get(app, path)
        assert status == 404, path
        assert headers["content-type"].startswith("text/plain") and b"Not found" in body


async def answered_by_the_api(scope: Scope, receive: Receive, send: Send) -> None:
    """What the middleware passes on stands for the API here."""
    await PlainTextResponse("the API\n")(scope, receive, send)


def symlinked(package: Path, into: Path) -> Path:
    """The package's files as ``editable_mode=strict`` installs them: real folders, and a
    symlink to the checkout's file for each file."""
    for source in package.rglob("*"):
        target = into / source.relative_to(package)
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source)
    return into


def copied(package: Path, into: Path) -> Path:
    """The package's files as a wheel or a regular install leaves them: plain copies."""
    shutil.copytree(package, into)
    return into


@pytest.mark.parametrize("layout", ["checkout", "symlinked", "copied"])
def test_each_install_layout_serves_every_file_and_nothing_outside(layout, tmp_path):
    if layout == "checkout":
        static = static_dir()
    else:
        build = symlinked if layout == "symlinked" else copied
        static = build(static_dir(), tmp_path / "pairscreen" / "web" / "static")
        (tmp_path / "pairscreen" / "web" / "secret.txt").write_text("outside static/\n")
        assert (static / "index.html").is_symlink() == (layout == "symlinked")
    app = WebsiteMiddleware(answered_by_the_api, directory=static)
    found = crawl(fetcher(TestClient(app)))  # no lifespan: the stand-in API answers HTTP only
    assert not failures(found)
    assert set(ESSENTIAL) <= set(found), sorted(found)
    if layout == "checkout":
        return
    for path in LEAVING_STATIC:
        status, headers, body = asgi_get(app, path)
        assert status == 404, path
        assert headers["content-type"].startswith("text/plain"), path
        assert headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
        assert b"outside" not in body


def test_the_screen_tables_grid_has_one_track_per_column():
    """The survivors' rows are CSS grids on ``--columns``: a column without its track wraps
    every row onto a second line (as two added Kalman columns once did)."""
    static = static_dir()
    script = (static / "js" / "screen.js").read_text(encoding="utf-8")
    table = script[
        script.index("const COLUMNS = [") : script.index("];", script.index("const COLUMNS"))
    ]
    columns = re.findall(r'^\s*\{ key: "(\w+)"', table, re.M)
    css = (static / "css" / "site.css").read_text(encoding="utf-8")
    block = css[css.index("#survivors {") :]
    tracks = block[
        block.index("--columns:") + len("--columns:") : block.index(";", block.index("--columns:"))
    ]
    count = sum(int(n) for n in re.findall(r"repeat\((\d+),", tracks))
    count += len(re.findall(r"minmax\(", re.sub(r"repeat\(\d+, minmax\([^)]*\)\)", "", tracks)))
    assert len(columns) >= 17
    assert count == len(columns), (count, columns)
