"""The command line as a person runs it: a subprocess, in a home of its own."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from pairscreen import clock


def newcomer_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a newcomer: a fresh home, no pairscreen settings."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PAIRSCREEN_") and k not in ("DATABASE_URL", "XDG_DATA_HOME")
    }
    # A newcomer's machine still reads the suite's pinned clock (tests/support/pinned_clock.py).
    pinned = {clock.SHIFT_VARIABLE: os.environ.get(clock.SHIFT_VARIABLE, "")}
    return {**kept, **pinned, "HOME": str(home), "PAIRSCREEN_LOAD_PLUGINS": ""}


def run_cli(
    *argv: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pairscreen", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_on_terminal(*argv: str, env: dict[str, str], timeout: float = 120) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; (exit code, what the terminal showed)."""
    ours, theirs = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairscreen", *argv],
        env={**env, "COLUMNS": "120", "TERM": "xterm"},
        stdin=subprocess.DEVNULL,
        stdout=theirs,
        stderr=theirs,
    )
    os.close(theirs)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(ours, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(ours)
    return proc.wait(timeout=timeout), shown.decode("utf-8", "replace")
