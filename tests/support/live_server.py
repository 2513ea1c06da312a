"""A live ``pairscreen serve`` in a subprocess, on a free loopback port."""

from __future__ import annotations

import functools
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class LiveServer:
    base: str  # the API base URL
    process: subprocess.Popen  # ``pairscreen serve``: with several workers, their supervisor
    output: IO[str]  # what the server printed and logged so far

    def log(self) -> str:
        self.output.seek(0)
        return self.output.read()

    def worker_pids(self) -> set[int]:
        """The uvicorn worker processes: the supervisor's children started by multiprocessing's
        ``spawn`` (not its resource tracker). Linux ``/proc``."""
        workers = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                command = (stat.parent / "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue  # the process ended while we looked
            if parent == self.process.pid and b"spawn_main" in command:
                workers.add(int(stat.parent.name))
        return workers


@contextmanager
def serving(
    database_url: str, *, workers: int = 1, env: dict | None = None, open_files: int | None = None
) -> Iterator[LiveServer]:
    """Serve the database at ``database_url`` until the block ends; ``open_files`` lowers the
    server's soft limit of open files."""
    port = free_port()
    child_env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PAIRSCREEN_LOAD_PLUGINS": "",
        **(env or {}),
    }
    # A file, not a pipe: nobody reads the output while the server runs, and a full pipe
    # would block every worker that logs.
    # Appends: the child shares the file offset. Closed in the ``finally`` below, after the
    # server it outlives this statement for (so no ``with``).
    output = tempfile.TemporaryFile("a+")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pairscreen",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        env=child_env,
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=None if open_files is None else functools.partial(_limit_files, open_files),
    )
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                output.seek(0)
                raise RuntimeError(f"server exited early:\n{output.read()}")
            try:
                httpx.get(f"{base}/me", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield LiveServer(base, proc, output)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        output.close()


def _limit_files(soft: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@contextmanager
def live_server(database_url: str, *, workers: int = 1, env: dict | None = None) -> Iterator[str]:
    """Serve the database at ``database_url``; yields the API base URL."""
    with serving(database_url, workers=workers, env=env) as server:
        yield server.base
