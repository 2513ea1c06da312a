"""A Python client generated from ``openapi.yaml`` calls every operation of a live server.

``openapi-python-client`` generates the client into a temporary folder with
``tests/fixtures/client-config.yaml`` (which maps ``image/png`` to ``application/octet-stream``;
without it the chart's 200 is silently dropped). The test then proves, the way a user of
that client would see it:

* every operation of the spec has a generated function (nothing dropped);
* every operation answers 200 on a live server, JSON bodies parse into the generated models
  (and serialise back to the same JSON), PNG bodies come back as bytes;
* errors are exposed as the plain text the server sent (401 on every operation, 404 for an
  unknown ticker on every operation that takes tickers);
* a 429 exposes ``Retry-After`` (whole seconds) and the ``RateLimit`` headers.

The operations are read from the generated package and matched to the spec, so an operation
added to ``openapi.yaml`` is covered without touching this file.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from pairscreen import clock
from pairscreen.db.connection import database
from tests.support.contract import SPEC_PATH
from tests.support.live_server import live_server

CONFIG = Path(__file__).resolve().parent / "fixtures" / "client-config.yaml"
PACKAGE = "pairscreen_api_client"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
UNKNOWN_TICKER = "NOSUCHCOIN1"

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Operation:
    method: str
    template: str  # the spec's path, e.g. /pair/{a}/{b}
    module: ModuleType
    path_params: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.method} {self.template}"


def _generator() -> list[str]:
    script = Path(sys.executable).with_name("openapi-python-client")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "openapi_python_client"]


@pytest.fixture(scope="module")
def client_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    out = tmp_path_factory.mktemp("generated-client")
    result = subprocess.run(
        [*_generator(), "generate", "--path", str(SPEC_PATH), "--config", str(CONFIG),
         "--meta", "none", "--output-path", str(out / PACKAGE)],
        capture_output=True, text=True, cwd=out, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, f"generation failed:\n{result.stdout}\n{result.stderr}"
    # The generator reports what it could not generate as warnings; none are acceptable.
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


class _AnyBody:
    """Stands for a request body where only the method and URL are read."""

    def to_dict(self) -> dict[str, Any]:
        return {}


def generated_operations(package: ModuleType) -> list[Operation]:
    """Every endpoint function of the generated client, with its method and spec path."""
    api = importlib.import_module(f"{package.__name__}.api")
    ops = []
    for info in pkgutil.walk_packages(api.__path__, prefix=f"{api.__name__}."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        if not hasattr(module, "sync_detailed"):
            continue
        sig = inspect.signature(module._get_kwargs)
        path_params = tuple(
            name
            for name, p in sig.parameters.items()
            if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        required_query = {
            name: _AnyBody() if name == "body" else f"{{{name}}}"
            for name, p in sig.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
        }
        kwargs = module._get_kwargs(*(f"{{{name}}}" for name in path_params), **required_query)
        ops.append(Operation(kwargs["method"].upper(), unquote(kwargs["url"]), module, path_params))
    return sorted(ops, key=lambda op: op.label)


def spec_operations() -> dict[str, dict]:
    spec = yaml.safe_load(SPEC_PATH.read_text())
    methods = {"get", "put", "post", "delete", "patch"}
    return {
        f"{m.upper()} {path}": operation
        for path, item in spec["paths"].items()
        for m, operation in item.items()
        if m in methods
    }


def _responses(spec_op: dict) -> dict:
    spec = yaml.safe_load(SPEC_PATH.read_text())
    out = {}
    for status, response in spec_op["responses"].items():
        while "$ref" in response:
            node: Any = spec
            for part in response["$ref"].lstrip("#/").split("/"):
                node = node[part]
            response = node
        out[status] = response
    return out


@dataclass(frozen=True)
class World:
    base: str
    pro: str
    personal: str
    a: str
    b: str


@pytest.fixture()
def world(runtime, database_url) -> Iterator[World]:  # type: ignore[no-untyped-def]
    from pairscreen.access import accounts

    with database.connection_context():
        accounts.create_user("client-pro@example.com", "pro", lifetime=True)
        accounts.create_user(
            "client-personal@example.com", "personal", expires=clock.now() + timedelta(days=30)
        )
        pro = accounts.rotate_key("client-pro@example.com")
        personal = accounts.rotate_key("client-personal@example.com")
    # /evidence answers 200 once an evaluation is published (404 before, with a sentence).
    from pairscreen.cli import main

    argv = ["--database-url", database_url, "--quiet", "evaluate", "--publish"]
    assert main([*argv, "--every", "90", "--sample", "30"]) == 0
    env = {"PAIRSCREEN_DAILY_LIMIT_PERSONAL": "1", "PAIRSCREEN_DAILY_LIMIT_PRO": "1000"}
    with live_server(database_url, env=env) as base:
        import httpx

        pairs = httpx.get(
            f"{base}/pairs", headers={"Authorization": f"Bearer {pro}"}, timeout=30
        ).json()
        a, b = (
            (pairs["pairs"][0]["a"], pairs["pairs"][0]["b"]) if pairs["pairs"] else ("ETH", "BTC")
        )
        yield World(base, pro, personal, a, b)


def _client(package: ModuleType, base: str, key: str):  # type: ignore[no-untyped-def]
    return package.AuthenticatedClient(
        base_url=base, token=key, raise_on_unexpected_status=True, timeout=60
    )


def _call(op: Operation, client, tickers: dict[str, str]):  # type: ignore[no-untyped-def]
    return op.module.sync_detailed(
        *(tickers[name] for name in op.path_params), client=client, **_required_query(op)
    )


def _required_query(op: Operation) -> dict[str, Any]:
    """A value for each required query parameter (``/screens?at=``: the end of today) and for
    a required body (``PUT /me/channels/{kind}``: turn the channel on)."""
    models = importlib.import_module(f"{PACKAGE}.models")
    values: dict[str, Any] = {
        "at": clock.today().isoformat(),
        "body": models.ChannelChange(enabled=True),
    }
    required = [
        name
        for name, p in inspect.signature(op.module.sync_detailed).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
        and p.default is inspect.Parameter.empty
        and name != "client"
    ]
    missing = set(required) - set(values)
    assert not missing, f"{op.label}: no value known for query parameters {missing}"
    return {name: values[name] for name in required}


def _ticker_args(op: Operation, world: World) -> dict[str, str]:
    values = {"a": world.a, "b": world.b, "kind": "email"}  # every account has its e-mail
    missing = set(op.path_params) - set(values)
    assert not missing, f"{op.label}: no value known for path parameters {missing}"
    return values


def test_every_operation_is_generated(client_package):
    generated = {op.label for op in generated_operations(client_package)}
    assert generated == set(spec_operations())


def test_generated_client_calls_every_operation(client_package, world):
    models = importlib.import_module(f"{PACKAGE}.models")
    types = importlib.import_module(f"{PACKAGE}.types")
    model_classes = tuple(obj for obj in vars(models).values() if inspect.isclass(obj))
    spec = spec_operations()
    ops = generated_operations(client_package)
    pro = _client(client_package, world.base, world.pro)
    anonymous_key = "rr_" + "0" * 32  # well-formed length, wrong checksum
    stranger = _client(client_package, world.base, anonymous_key)
    called = []
    # A removal last: it removes what the PUT before it watched.
    for op in sorted(ops, key=lambda op: op.method == "DELETE"):
        tickers = _ticker_args(op, world)
        responses = _responses(spec[op.label])
        successes = sorted(s for s in responses if s.startswith("2"))

        response = _call(op, pro, tickers)
        assert str(response.status_code) in successes, (
            f"{op.label}: {response.status_code} {response.content[:300]!r}"
        )
        media = next(iter(responses[str(response.status_code)].get("content") or {"": None}))
        if media == "application/json":
            assert isinstance(response.parsed, model_classes), (
                f"{op.label}: parsed {type(response.parsed)}"
            )
            assert response.parsed.to_dict() == json.loads(response.content), (
                f"{op.label}: lossy model"
            )
        elif media.startswith("image/"):
            assert isinstance(response.parsed, types.File), (
                f"{op.label}: parsed {type(response.parsed)}"
            )
            data = response.parsed.payload.read()
            assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
        elif media == "":
            assert response.content == b"", f"{op.label}: a body on {response.status_code}"
        else:
            pytest.fail(f"{op.label}: no assertion for a {response.status_code} of {media}")

        refused = _call(op, stranger, tickers)
        assert refused.status_code == 401
        assert isinstance(refused.parsed, str) and "key" in refused.parsed.lower(), refused.parsed
        assert refused.headers["content-type"].startswith("text/plain")

        if op.path_params and op.path_params[-1] in ("a", "b"):
            unknown = _call(op, pro, {**tickers, op.path_params[-1]: UNKNOWN_TICKER})
            assert unknown.status_code == 404
            assert isinstance(unknown.parsed, str) and UNKNOWN_TICKER in unknown.parsed, (
                unknown.parsed
            )
            assert unknown.headers["content-type"].startswith("text/plain")
        called.append(op.label)
    assert sorted(called) == sorted(spec)
    print(f"generated client: {len(called)} operations called, 2xx + 401 (+ 404) each: {called}")


def test_generated_client_exposes_retry_after_on_429(client_package, world):
    spec = spec_operations()
    limited = [
        op for op in generated_operations(client_package) if "429" in spec[op.label]["responses"]
    ]
    assert limited, "no operation documents 429"
    personal = _client(client_package, world.base, world.personal)  # 1 compute a day on this server
    for op in limited:
        tickers = _ticker_args(op, world)
        statuses = []
        for _ in range(3):
            response = _call(op, personal, tickers)
            statuses.append(response.status_code)
            if response.status_code == 429:
                break
        assert statuses[-1] == 429, f"{op.label}: {statuses}"
        retry_after = response.headers["Retry-After"]
        assert re.fullmatch(r"\d+", retry_after) and 1 <= int(retry_after) <= 86400
        assert re.search(r";r=0;t=\d+", response.headers["RateLimit"])
        assert isinstance(response.parsed, str) and response.parsed.strip()
