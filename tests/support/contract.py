"""Validates every response the suite receives against ``openapi.yaml``.

Independent of connexion's own response validation: it resolves the operation from the
request path, checks the status is documented, the media type matches, required headers are
present, and the body validates against the schema (for JSON) or is plain text / PNG.
"""

from __future__ import annotations

import csv
import io
import json
import re
from functools import cached_property
from pathlib import Path

import yaml
from openapi_schema_validator import OAS30Validator

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
BASE = "/api/v1"


class ContractViolation(AssertionError):
    pass


class Contract:
    def __init__(self, path: Path = SPEC_PATH, document: dict | None = None):
        """The contract of ``path``, or the ``document`` a universe is served (its own
        backtest windows, an intraday bar's fractional days)."""
        self.raw = document if document is not None else yaml.safe_load(path.read_text())
        self.checked = 0

    @cached_property
    def routes(self) -> list[tuple[re.Pattern[str], str]]:
        out = []
        for template in self.raw["paths"]:
            pattern = (
                "^"
                + re.sub(
                    r"\{[^}]+\}",
                    r"[^/]+",
                    re.escape(template).replace(r"\{", "{").replace(r"\}", "}"),
                )
                + "$"
            )
            out.append((re.compile(pattern), template))
        return out

    def operation(self, method: str, path: str) -> dict | None:
        if not path.startswith(BASE):
            return None
        local = path[len(BASE) :]
        for pattern, template in self.routes:
            if pattern.match(local):
                return self.raw["paths"][template].get(method.lower())
        return None

    def resolve(self, node: dict) -> dict:
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"].lstrip("#/").split("/")
            node = self.raw
            for part in ref:
                node = node[part]
        return node

    def check(self, method: str, path: str, status: int, headers: dict, body: bytes) -> None:
        op = self.operation(method, path)
        content_type = headers.get("content-type", "")
        if op is None:
            # Unknown routes and wrong methods: plain text only.
            if status >= 400 and not content_type.startswith("text/plain"):
                raise ContractViolation(
                    f"{method} {path} -> {status} is {content_type}, not text/plain"
                )
            return
        responses = op["responses"]
        if str(status) not in responses:
            raise ContractViolation(
                f"{method} {path}: status {status} is not documented ({sorted(responses)})"
            )
        response = self.resolve(responses[str(status)])
        for name, header in (response.get("headers") or {}).items():
            header = self.resolve(header)
            if header.get("required") and name.lower() not in {k.lower() for k in headers}:
                raise ContractViolation(
                    f"{method} {path} -> {status}: missing required header {name}"
                )
            if name.lower() in {k.lower() for k in headers}:
                schema = self.resolve(header.get("schema", {}))
                value = next(v for k, v in headers.items() if k.lower() == name.lower())
                pattern = schema.get("pattern")
                if pattern and not re.search(pattern, value):
                    raise ContractViolation(f"header {name}={value!r} does not match {pattern}")
        media = list((response.get("content") or {}).keys())
        base_type = content_type.split(";")[0].strip()
        if media and base_type not in media:
            raise ContractViolation(f"{method} {path} -> {status}: {base_type} not in {media}")
        if base_type == "text/plain":
            if "charset=utf-8" not in content_type.replace(" ", "").lower():
                raise ContractViolation(
                    f"{method} {path} -> {status}: text/plain without charset=utf-8"
                )
            text = body.decode("utf-8")
            if "Traceback" in text or not text.strip():
                raise ContractViolation(f"{method} {path} -> {status}: bad error body {text!r}")
        elif base_type == "application/json":
            schema = self.resolve(response["content"]["application/json"]["schema"])
            # Local "#/components/..." references resolve inside this root document.
            root = {**schema, "components": self.raw["components"]}
            errors = sorted(OAS30Validator(root).iter_errors(json.loads(body)), key=str)
            if errors:
                raise ContractViolation(
                    f"{method} {path} -> {status}: {errors[0].message} "
                    f"at {list(errors[0].absolute_path)}"
                )
        elif base_type == "text/csv":
            rows = list(csv.reader(io.StringIO(body.decode("utf-8"), newline="")))
            if not rows or not rows[0] or any(len(row) != len(rows[0]) for row in rows):
                raise ContractViolation(f"{method} {path} -> {status}: not a CSV table")
        elif base_type == "image/png" and not body.startswith(b"\x89PNG\r\n\x1a\n"):
            raise ContractViolation(f"{method} {path}: not a PNG")
        self.checked += 1
