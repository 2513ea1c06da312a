"""Every file a page of the site references, found by reading the pages and modules served.

Starting from a page, each HTML page's ``src``/``href``, each JavaScript module's imports and
``"/static/…"`` literals (a script it loads, such as plotly.js) and each stylesheet's
``url(…)`` are followed on the same origin. Only what the site's own HTML and modules name is
parsed: a classic script (plotly.js, Swagger UI's bundle) is fetched, not read for references,
so a string inside a library is never mistaken for a file. A file added to the site and named
by a page or a module is therefore checked without any test naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

# An attribute's value, quoted or not (a URL holds no space).
HTML_REFERENCE = re.compile(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
MODULE_TYPE = re.compile(r"""\btype\s*=\s*["']?module\b""", re.IGNORECASE)
SRC = re.compile(r"""\bsrc\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
# `import … from "./x"`, `export … from "./x"`, `import "./x"` and `import("./x")`: a browser
# resolves only a relative or absolute specifier (the site has no import map).
MODULE_IMPORT = re.compile(r"""(?<![.\w$])(?:from|import)\s*\(?\s*["'](\.{0,2}/[^"']+)["']""")
STATIC_LITERAL = re.compile(r"""["'`](/static/[^"'`?#\s]+)["'`]""")
CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+?)["']?\s*\)""")


@dataclass(frozen=True)
class Fetched:
    status: int
    content_type: str
    text: str


@dataclass(frozen=True)
class Found:
    status: int
    referrer: str  # the page or module that named it ("" for a start page)


def same_origin_path(base: str, reference: str) -> str | None:
    """``reference`` resolved against the path ``base``; None when it leaves the origin or
    names no file (a fragment, a ``data:`` URI, a ``mailto:``)."""
    if reference.startswith(("#", "data:", "mailto:", "javascript:")):
        return None
    parts = urlsplit(urljoin(base, reference))
    if parts.scheme or parts.netloc:
        return None
    return parts.path


def module_scripts(page: str) -> list[str]:
    """The ``src`` of each ``<script type="module">`` of an HTML page, attributes in any order."""
    return [
        src[1]
        for attributes in SCRIPT_TAG.findall(page)
        if MODULE_TYPE.search(attributes) and (src := SRC.search(attributes))
    ]


def crawl(get: Callable[[str], Fetched], start: tuple[str, ...] = ("/",)) -> dict[str, Found]:
    """Every same-origin path reachable from the ``start`` pages, with the status it answered."""
    found: dict[str, Found] = {}
    queue: list[tuple[str, str, str]] = [(path, "", "page") for path in start]
    while queue:
        path, referrer, kind = queue.pop(0)
        if path in found:
            continue
        answer = get(path)
        found[path] = Found(answer.status, referrer)
        if answer.status != 200:
            continue
        named: list[tuple[str, str]] = []
        if answer.content_type.startswith("text/html"):
            modules = set(module_scripts(answer.text))
            named = [
                (r, "module" if r in modules else "file")
                for r in HTML_REFERENCE.findall(answer.text)
            ]
        elif answer.content_type.startswith("text/css"):
            named = [(r, "file") for r in CSS_URL.findall(answer.text)]
        elif kind == "module":
            named = [(r, "module") for r in MODULE_IMPORT.findall(answer.text)]
            named += [(r, "file") for r in STATIC_LITERAL.findall(answer.text)]
        for reference, how in named:
            target = same_origin_path(path, reference)
            if target is not None and target not in found:
                queue.append((target, path, how))
    return found


def failures(found: dict[str, Found]) -> list[str]:
    """The paths that did not answer 200, each with the page or module that named it."""
    return [
        f"{path} answered {f.status} (named by {f.referrer or 'the start'})"
        for path, f in sorted(found.items())
        if f.status != 200
    ]
