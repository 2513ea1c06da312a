"""Per-connection limits in front of the app: head size, head timeout, connections per worker.

uvicorn's HTTP protocols buffer a request head of any size (httptools has no limit), never
time out a connection that has not finished sending its head, and keep any number of idle
connections until the process runs out of file descriptors. :func:`guarded_protocol` wraps
the installed protocol (httptools, else h11) so that, whichever it is:

* a request line plus headers longer than ``max_head_bytes`` is answered 431 and closed
  before more of it is read;
* a connection that has not sent a complete head within ``head_timeout`` seconds of opening
  (or of starting its next request) is closed;
* past ``max_connections`` open connections, a new connection closes the one that has waited
  longest for a request head, so normal clients are served however many idle sockets are
  held open; when none is idle, the new connection's request is answered 503 with
  ``Retry-After`` at once, unread.

The limits are settings (:class:`pairscreen.config.Settings`); idle keep-alive connections are
closed by uvicorn's own ``timeout_keep_alive``.
"""

from __future__ import annotations

import asyncio
import functools
import resource
import time
from dataclasses import dataclass
from typing import Any

from pairscreen.config import Settings

TOO_LARGE = b"431 Request Header Fields Too Large"
OVERLOADED = b"503 Service Unavailable\r\nretry-after: 1"
RESPONSE = (
    b"HTTP/1.1 %s\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)


@dataclass(frozen=True)
class ConnectionLimits:
    max_head_bytes: int
    head_timeout: float
    max_connections: int

    @classmethod
    def of(cls, settings: Settings) -> ConnectionLimits:
        """The settings' limits; connections default to three quarters of the soft limit of
        open files, leaving the rest to the database, logs and files."""
        connections = settings.max_connections
        if not connections:
            soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            connections = max(16, soft * 3 // 4)
        return cls(settings.max_header_bytes, settings.header_timeout_seconds, connections)


class _Guard(asyncio.Protocol):
    """Mixed in before a uvicorn HTTP protocol class (see :func:`guarded_protocol`)."""

    transport: asyncio.Transport
    cycle: Any  # uvicorn's RequestResponseCycle of the current (or last) request
    server_state: Any  # uvicorn's ServerState, shared by the worker's connections

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._limits = limits
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._waiting_since = time.monotonic()
        self._overflow = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._open_head()
        self._make_room()

    def data_received(self, data: bytes) -> None:
        if self._overflow:
            if len(self.server_state.connections) > self._limits.max_connections:
                self._refuse(OVERLOADED, "The server has too many connections. Retry shortly.")
                return
            self._overflow = False  # room was made meanwhile
        if self._awaiting_head():
            if self._head_timer is None:
                self._open_head()
            self._head_bytes += len(data)
            if self._head_bytes > self._limits.max_head_bytes:
                limit = self._limits.max_head_bytes
                self._refuse(TOO_LARGE, f"The request line and headers exceed {limit} bytes.")
                return
        super().data_received(data)
        if not self._awaiting_head():
            self._close_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._close_head()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        self._waiting_since = time.monotonic()
        super().on_response_complete()  # type: ignore[misc]

    def _awaiting_head(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _open_head(self) -> None:
        self._close_head()
        self._head_bytes = 0
        self._waiting_since = time.monotonic()
        loop = asyncio.get_running_loop()
        self._head_timer = loop.call_later(self._limits.head_timeout, self._head_too_slow)

    def _close_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._awaiting_head() and not self.transport.is_closing():
            self.transport.close()

    def _refuse(self, status: bytes, sentence: str) -> None:
        """Answer ``status`` with ``sentence`` and close, reading nothing more."""
        self._close_head()
        if not self.transport.is_closing():
            body = f"{sentence}\n".encode()
            self.transport.write(RESPONSE % (status, len(body), body))
            self.transport.close()

    def _make_room(self) -> None:
        """Close the longest-waiting idle connection when this one is over the limit (or mark
        this one to be refused when none is idle)."""
        connections = self.server_state.connections
        if len(connections) <= self._limits.max_connections:
            return
        idle = [
            c
            for c in connections
            if isinstance(c, _Guard)
            and c is not self
            and c._awaiting_head()
            and not c.transport.is_closing()
        ]
        if not idle:
            self._overflow = True
            return
        oldest = min(idle, key=lambda c: c._waiting_since)
        oldest.transport.close()
        # Gone now, not once the loop gets to its connection_lost: the count stays exact.
        connections.discard(oldest)


@functools.cache
def _guarded_class() -> type[_Guard]:
    """The installed parser's uvicorn protocol with :class:`_Guard` in front of it."""
    base: type[asyncio.Protocol]
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol
    guarded: type[_Guard] = type(
        f"Guarded{base.__name__}", (_Guard, base), {"__module__": __name__}
    )
    return guarded


def guarded_protocol(limits: ConnectionLimits) -> Any:
    """What to give ``uvicorn.Config(http=...)``: the guarded protocol with ``limits`` (a
    partial of a module-level function, so uvicorn's worker processes can unpickle it)."""
    return functools.partial(_build, limits=limits)


def _build(*args: Any, limits: ConnectionLimits, **kwargs: Any) -> asyncio.Protocol:
    return _guarded_class()(*args, limits=limits, **kwargs)
