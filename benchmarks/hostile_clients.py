"""Hostile clients against a live server: idle sockets past the open-file limit, huge heads.

    .venv/bin/python benchmarks/hostile_clients.py [--idle 1100] [--open-files 1024]

Starts ``pairscreen serve`` (one worker) on a fresh demo database with its soft limit of open
files lowered to ``--open-files`` (the common default), then:

1. times ``/me`` on fresh connections with no idle sockets, and again while ``--idle``
   connections that never send anything are held open (opened in the middle of the timing,
   so some calls run while they arrive); prints both side by side;
2. sends a 50 MB header and 8 x 20 MB headers and prints the server's RSS before and after.

Figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

import httpx
from _harness import demo_database, free_port, server_process, summary


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def time_me(
    client: httpx.Client, url: str, calls: int, idle: list[socket.socket], to_open: int, port: int
) -> tuple[list[float], int]:
    """``calls`` timed ``/me``; ``to_open`` idle sockets are opened in between."""
    ms: list[float] = []
    failures = 0
    per_call = -(-to_open // calls) if to_open else 0
    for _ in range(calls):
        for _ in range(min(per_call, to_open - len(idle))):
            idle.append(socket.create_connection(("127.0.0.1", port)))
        start = time.perf_counter()
        failures += client.get(url).status_code != 200
        ms.append((time.perf_counter() - start) * 1000)
    return ms, failures


def huge_head(port: int, megabytes: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ")
            for _ in range(megabytes * 16):
                s.sendall(b"a" * 65536)
        except OSError:
            pass  # refused and closed by the server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1100)
    parser.add_argument("--open-files", type=int, default=1024)
    args = parser.parse_args()
    with demo_database("hostile") as (_folder, url, key, _pairs):
        port = free_port()
        serve = f"{sys.executable} -m pairscreen serve --port {port} --workers 1"
        cmd = ["sh", "-c", f"ulimit -Sn {args.open_files} && exec {serve}"]
        env = {"DATABASE_URL": url, "PAIRSCREEN_LOAD_PLUGINS": ""}
        me = f"http://127.0.0.1:{port}/api/v1/me"
        auth = {"Authorization": f"Bearer {key}"}
        with server_process(cmd, env, me, auth) as pid:
            fresh = httpx.Limits(max_keepalive_connections=0)
            idle: list[socket.socket] = []
            with httpx.Client(headers=auth, limits=fresh, timeout=10) as client:
                quiet, quiet_failures = time_me(client, me, 200, idle, 0, port)
                busy, busy_failures = time_me(client, me, 200, idle, args.idle, port)
            print(f"/me on fresh connections, soft limit {args.open_files} open files:")
            print(f"  no idle sockets       {summary(quiet)}   failures {quiet_failures}")
            print(f"  {len(idle):5d} idle sockets    {summary(busy)}   failures {busy_failures}")
            for s in idle:
                s.close()
            before = rss_kib(pid)
            started = time.perf_counter()
            huge_head(port, 50)
            refused = time.perf_counter() - started
            for _ in range(8):
                huge_head(port, 20)
            print(
                f"50 MB header refused in {refused:.2f} s; server RSS {before} KiB before, "
                f"{rss_kib(pid)} KiB after it and 8 x 20 MB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
