"""One demo per data dir: a lock file held by the process that prepares and serves it.

A second ``demo`` (or ``demo --no-serve``) would delete the running demo's folder and
database and print keys the running server refuses. The lock (``flock``, released by the
kernel when its holder exits, even killed) is taken before anything is created or deleted;
the file names its holder so the refusal can say which process and where it serves.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from pairscreen.cli import exits
from pairscreen.cli.common import CommandError


def hold_demo_lock(data_dir: Path) -> IO[str]:
    """The demo lock of ``data_dir``, held until the returned file is closed or the process
    ends; a one-line :class:`CommandError` (busy) naming the holder when another has it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "demo.lock"
    handle = path.open("a+")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise CommandError(
            f"a demo is already running in {data_dir / 'demo'} ({holder}): stop it (Ctrl-C) "
            "before preparing a new one, or give another --data-dir",
            exits.BUSY,
        ) from None
    describe_holder(handle, "preparing")
    return handle


def describe_holder(handle: IO[str], doing: str) -> None:
    """Say in the lock file who holds it and what it does (``serving http://…``)."""
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, {doing}")
    handle.flush()
