"""Hostile connections against a live ``pairscreen serve``: raw sockets, bounded resources.

A huge request head is refused after a few kilobytes without growing the server's memory, a
half-sent head and an idle keep-alive connection are closed within their timeouts, and
hundreds of idle sockets beyond the process's open-file limit leave ``/me`` answering.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.db.connection import database
from tests.conftest import CONTRACT
from tests.support.databases import TEST_DATABASE_URL
from tests.support.live_server import LiveServer, serving
from tests.support.sleeper import Sleeper

# Connections, not the database, are under test: once, in the SQLite pass.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(TEST_DATABASE_URL), reason="SQLite pass only"),
]

HEAD = b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\n"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def address(server: LiveServer) -> tuple[str, int]:
    parts = urlsplit(server.base)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


def new_key(email: str, tier: str = "personal") -> str:
    with database.connection_context():
        accounts.create_user(email, tier, expires=clock.now() + timedelta(days=30))
        return accounts.rotate_key(email)


@contextmanager
def server_with(
    database_url: str, open_files: int | None = None, **env: str
) -> Iterator[LiveServer]:
    database.close()
    with serving(database_url, env=env, open_files=open_files) as server:
        yield server
    database.close()


def me(server: LiveServer, key: str, client: httpx.Client | None = None) -> httpx.Response:
    """``/me`` (on ``client``, else on a connection of its own), checked against the contract."""
    auth = {"Authorization": f"Bearer {key}"}
    if client is None:
        r = httpx.get(f"{server.base}/me", headers=auth, timeout=10)
    else:
        r = client.get(f"{server.base}/me", headers=auth)
    CONTRACT.check("GET", "/api/v1/me", r.status_code, dict(r.headers), r.content)
    return r


def send_header(server: LiveServer, megabytes: int, outcome: list[bytes]) -> None:
    """Send a head with a header of ``megabytes`` MB; what the server answered, if anything."""
    with socket.create_connection(address(server), timeout=10) as s:
        try:
            s.sendall(HEAD + b"X-Big: ")
            chunk = b"a" * 65536
            for _ in range(megabytes * 16):
                s.sendall(chunk)
        except OSError:
            pass  # refused: the server closed the connection
        try:
            outcome.append(s.recv(4096))
        except OSError:
            outcome.append(b"")


def test_huge_headers_are_refused_without_growing_memory(runtime, database_url: str):
    with server_with(database_url) as server:
        key = new_key("heads@example.com")
        assert me(server, key).status_code == 200
        before = rss_kib(server.process.pid)
        started = time.monotonic()
        outcome: list[bytes] = []
        send_header(server, 50, outcome)
        refused_in = time.monotonic() - started
        threads = [
            threading.Thread(target=send_header, args=(server, 20, outcome)) for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        growth = rss_kib(server.process.pid) - before
        assert all(o == b"" or o.startswith(b"HTTP/1.1 431 ") for o in outcome), outcome
        assert growth < 10 * 1024, f"RSS grew {growth} KiB"
        assert me(server, key).status_code == 200
        print(
            f"\nR19 50 MB header refused in {refused_in:.2f} s; after it and 8 x 20 MB, "
            f"server RSS grew {growth} KiB"
        )


def test_half_sent_and_idle_connections_are_closed_in_time(runtime, database_url: str):
    env = {"PAIRSCREEN_HEADER_TIMEOUT": "1", "PAIRSCREEN_KEEP_ALIVE_TIMEOUT": "1"}
    with server_with(database_url, **env) as server:
        with socket.create_connection(address(server), timeout=10) as half:
            half.sendall(HEAD)
            started = time.monotonic()
            assert half.recv(4096) == b""
            half_closed = time.monotonic() - started
        with socket.create_connection(address(server), timeout=10) as idle:
            idle.sendall(HEAD + b"\r\n")
            assert idle.recv(4096).startswith(b"HTTP/1.1 401 ")
            started = time.monotonic()
            assert idle.recv(4096) == b""
            idle_closed = time.monotonic() - started
        with socket.create_connection(address(server), timeout=10) as silent:
            started = time.monotonic()
            assert silent.recv(4096) == b""
            silent_closed = time.monotonic() - started
    assert half_closed < 2.0 and idle_closed < 2.0 and silent_closed < 2.0
    print(
        f"\nR20 closed after: half-sent head {half_closed:.2f} s, idle keep-alive "
        f"{idle_closed:.2f} s, silent connection {silent_closed:.2f} s (timeouts 1 s)"
    )


def test_idle_sockets_past_the_open_file_limit_leave_me_answering(runtime, database_url: str):
    """300 idle sockets against a server allowed 256 open files: ``/me`` keeps answering."""
    with server_with(database_url, open_files=256) as server:
        key = new_key("idle@example.com")
        idle = []
        try:
            for _ in range(300):
                idle.append(socket.create_connection(address(server), timeout=10))
            timings = []
            # A new connection per request (no keep-alive): each must find room.
            fresh = httpx.Limits(max_keepalive_connections=0)
            with httpx.Client(limits=fresh, timeout=10) as client:
                for _ in range(20):
                    started = time.monotonic()
                    assert me(server, key, client).status_code == 200
                    timings.append(time.monotonic() - started)
        finally:
            for s in idle:
                s.close()
    timings.sort()
    assert timings[-1] < 1.0, timings
    print(
        f"\nR20 300 idle sockets at a soft limit of 256 open files: /me 20 x 200 "
        f"on fresh connections, "
        f"median {timings[10] * 1000:.0f} ms, max {timings[-1] * 1000:.0f} ms"
    )


def test_past_the_connection_limit_with_none_idle_a_request_gets_a_fast_503(
    runtime, database_url: str, tmp_path: Path
):
    """Three connections busy with slow computations at a limit of three: a fourth
    connection's request is answered 503 with Retry-After at once, and served once the
    computations are over."""
    sleeper, env = Sleeper.install(tmp_path, seconds=3.0)
    env |= {"PAIRSCREEN_MAX_CONNECTIONS": "3", "PAIRSCREEN_COMPUTE_THREADS": "3"}
    with server_with(database_url, **env) as server:
        key = new_key("busy@example.com", tier="pro")
        request = (
            f"GET /api/v1/pair/ETH/BTC?bt=90 HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {key}\r\n\r\n"
        ).encode()
        busy = [socket.create_connection(address(server), timeout=10) for _ in range(3)]
        try:
            for s in busy:
                s.sendall(request)
            time.sleep(0.5)  # the three computations are running
            started = time.monotonic()
            refused = me(server, key)
            refused_in = time.monotonic() - started
            answers = [s.recv(4096) for s in busy]
        finally:
            for s in busy:
                s.close()
        served = me(server, key)
    assert refused.status_code == 503 and refused.headers["Retry-After"].isdigit()
    assert refused_in < 0.5, refused_in
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers)
    assert served.status_code == 200
    assert sleeper.most_at_once() == 3
    print(f"\nconnection limit 3, all busy: a fourth answered 503 in {refused_in * 1000:.0f} ms")
