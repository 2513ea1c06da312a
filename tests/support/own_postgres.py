"""A PostgreSQL server of a test's own, started with ``pg_ctl`` on a free port.

For the tests that stop, freeze or kill the server itself, which they cannot do to the
shared one. The cluster lives in a fresh folder under ``/tmp`` with trust authentication;
as root, the server runs as the ``postgres`` user (it refuses to run as root). Tests skip
where the PostgreSQL binaries are absent.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.live_server import free_port


def binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest version installed), if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


@dataclass(frozen=True)
class OwnPostgres:
    port: int
    folder: Path

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"


@contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    """Start a PostgreSQL server for the block (or skip the test)."""
    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries under /usr/lib/postgresql")
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as postgres")
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a postgres user")
        prefix = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="pairscreen-pg-"))
    if prefix:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    server = OwnPostgres(free_port(), folder)
    data = folder / "data"

    def run(*command: str) -> None:
        subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, timeout=120)

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres")
        options = f"-p {server.port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "log"),
            "-w",
            "start",
        )
        yield server
    finally:
        if (data / "postmaster.pid").exists():
            with contextlib.suppress(OSError, ValueError):
                os.kill(server.pid, signal.SIGCONT)  # a test may have left it frozen
            subprocess.run(
                [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(folder, ignore_errors=True)
