"""Receivers the notification tests deliver to: a scripted local HTTP server and an SMTP
server (aiosmtpd), both on loopback, plus a minimal outbox world without market data."""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class HttpReceiver:
    """Answers POSTs from a script of ``(status, headers, body)``, then 200 forever.

    ``dedup`` is what a well-behaved receiver does with ``X-Idempotency-Key``: it acts on the
    first request of each key only.
    """

    script: deque = field(default_factory=deque)
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def answer(self, status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        self.script.append((status, headers or {}, body))

    def dedup(self) -> dict[str, Received]:
        first: dict[str, Received] = {}
        for r in self.requests:
            first.setdefault(r.headers.get("X-Idempotency-Key", ""), r)
        return first

    def start(self) -> HttpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append(Received(self.path, dict(self.headers), body))
                    status, headers, answer = (
                        receiver.script.popleft() if receiver.script else (200, {}, b'{"ok":true}')
                    )
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


# Where the chat notifier tests post: paths shaped as each platform's incoming webhooks.
DISCORD_PATH = "/api/webhooks/1187001/AbCdEf-discord-token_42"
SLACK_PATH = "/services/T0001/B0002/slack-secret-token"


@contextmanager
def chat_platforms(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpReceiver]:
    """A recording HTTP server standing in for Discord and Slack: both platforms' allowed
    webhook prefixes point at it."""
    r = HttpReceiver().start()
    monkeypatch.setenv("PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES", r.url + "/api/webhooks/")
    monkeypatch.setenv("PAIRSCREEN_SLACK_WEBHOOK_PREFIXES", r.url + "/services/")
    try:
        yield r
    finally:
        r.stop()


class SmtpCollector:
    """An aiosmtpd handler that keeps every accepted message."""

    def __init__(self, refuse: set[str] | None = None):
        self.messages: list[SimpleNamespace] = []
        self.refuse = refuse or set()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(
            SimpleNamespace(
                mail_from=envelope.mail_from,
                rcpt_tos=list(envelope.rcpt_tos),
                content=envelope.original_content or envelope.content,
                tls=session.ssl is not None,
            )
        )
        return "250 Message accepted"


def notifier_plugins(*modules: object):  # type: ignore[no-untyped-def]
    """A runtime stand-in that has only the given plugins, and the settings of the
    environment: enough for the outbox."""
    from pairscreen.config import load_settings
    from pairscreen.plugin_system.loader import new_plugin_manager
    from pairscreen.plugin_system.registry import Plugins

    settings = load_settings()
    pm = new_plugin_manager()
    for module in modules:
        pm.register(module)
    return SimpleNamespace(settings=settings, plugins=Plugins(pm, settings))


def notifier_of(module: object, kind: str):  # type: ignore[no-untyped-def]
    """The notifier ``kind`` as the plugin ``module`` registers it with the environment's
    settings: its options (``[plugins.NAME]`` defaults, environment overrides) applied."""
    return notifier_plugins(module).plugins.notifiers.get(kind)


def fresh_database(url: str) -> None:
    """Bind the empty database at ``url`` (the ``empty_database_url`` fixture: SQLite, or
    PostgreSQL when the suite runs there) and migrate it: no candles, no screen."""
    from pairscreen.db.connection import init_database

    init_database(url)


def make_user(email: str, tier: str | None = "personal", **kwargs):  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from pairscreen import clock
    from pairscreen.access import accounts

    if tier is not None and "lifetime" not in kwargs and "expires" not in kwargs:
        kwargs["expires"] = clock.now() + timedelta(days=365)
    return accounts.create_user(email, tier, **kwargs)
