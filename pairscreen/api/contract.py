"""The contract as it is written: ``openapi.yaml`` byte for byte and the same document as JSON.

Connexion serves the spec it resolved, with every ``$ref`` inlined, so a client generated
from the URL got anonymous models, and it re-serialised the document on every request. This
middleware serves the hand-written file instead: the YAML unchanged and its JSON form with
the ``$ref``s and named schemas intact, both prepared once per app. Swagger UI reads the
JSON from the same URL.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml
from starlette.types import ASGIApp, Receive, Scope, Send

YAML_TYPE = b"application/yaml"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "options", "trace")
JSON_TYPE = b"application/json"


@dataclass(frozen=True)
class SpecDocuments:
    """The two bodies, by request path."""

    bodies: dict[str, tuple[bytes, bytes]]
    # Each path of the contract as a pattern of request paths, with the methods it answers.
    methods: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, spec_file: Path) -> SpecDocuments:
        return cls.of_text(spec_file.read_bytes())

    @classmethod
    def of_text(cls, raw: bytes) -> SpecDocuments:
        """The documents of the contract ``raw`` (YAML)."""
        document = yaml.safe_load(raw)
        base = _base_path(document)
        as_json = json.dumps(document, ensure_ascii=False, default=_iso).encode("utf-8")
        return cls(
            {
                f"{base}/openapi.yaml": (raw, YAML_TYPE),
                f"{base}/openapi.json": (as_json, JSON_TYPE),
            },
            _path_methods(document, base),
        )


def _path_methods(
    document: dict[str, Any], base: str
) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    out = []
    for template, item in (document.get("paths") or {}).items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(f"{base}{template}"))
        answered = tuple(m.upper() for m in item if m in HTTP_METHODS)
        out.append((re.compile(f"^{pattern}$"), answered))
    return tuple(out)


def _base_path(document: dict[str, object]) -> str:
    servers = document.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], dict):
        return str(servers[0].get("url", "")).rstrip("/")
    return ""


def _iso(value: object) -> str:
    """YAML reads unquoted dates as dates; JSON has only strings for them."""
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class SpecMiddleware:
    """Answers ``GET`` of the two spec URLs; every other request goes on to connexion."""

    def __init__(self, app: ASGIApp, documents: SpecDocuments) -> None:
        self.app = app
        self.documents = documents

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        http = scope["type"] == "http"
        found = self.documents.bodies.get(scope["path"]) if http else None
        if found is None or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        body, media_type = found
        headers = [(b"content-type", media_type), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
