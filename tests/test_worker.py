"""``pairscreen worker``: the single-instance lock (in process and with real worker processes),
waiting for a stopped or crashed holder, graceful SIGTERM that lets the running job finish."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from pairscreen import clock
from pairscreen.db.connection import database
from pairscreen.db.models import JobRun, Outbox
from pairscreen.notify.outbox import OutboxMessage, enqueue
from pairscreen.worker import (
    acquire_lock,
    lock_holder,
    next_due,
    refresh_lock,
    release_lock,
)
from tests.support.receivers import fresh_database

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def db(empty_database_url):  # type: ignore[no-untyped-def]
    fresh_database(empty_database_url)
    with database.connection_context():
        yield
    database.close()


def test_lock_is_exclusive_until_released_or_expired(db):
    t0 = clock.now()
    assert acquire_lock("A", ttl=60, now=t0)
    assert not acquire_lock("B", ttl=60, now=t0 + timedelta(seconds=59))
    assert acquire_lock("A", ttl=60, now=t0)  # re-entrant for its holder
    assert refresh_lock("A", ttl=60, now=t0 + timedelta(seconds=50))
    assert not acquire_lock("B", ttl=60, now=t0 + timedelta(seconds=100))  # refreshed to 110 s
    # A stalls past its expiry: B takes over, and A learns it lost the lock.
    assert acquire_lock("B", ttl=60, now=t0 + timedelta(seconds=111))
    assert not refresh_lock("A", ttl=60, now=t0 + timedelta(seconds=112))
    assert lock_holder()[0] == "B"
    release_lock("A")  # not the holder: no effect
    assert lock_holder()[0] == "B"
    release_lock("B")
    assert lock_holder() == (None, None)
    assert acquire_lock("A", ttl=60, now=t0 + timedelta(seconds=113))


def test_concurrent_acquisition_has_one_winner(db):
    barrier = threading.Barrier(8)
    wins: list[str] = []

    def contend(name: str) -> None:
        with database.connection_context():
            barrier.wait()
            if acquire_lock(name, ttl=60):
                wins.append(name)

    threads = [threading.Thread(target=contend, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert lock_holder()[0] == wins[0]


def test_first_runs_follow_the_last_recorded_run(db):
    now = clock.now()
    assert next_due("screen", timedelta(hours=6), now) == now  # never ran
    JobRun.replace(name="screen", finished_at=now - timedelta(hours=2)).execute()
    assert next_due("screen", timedelta(hours=6), now) == now + timedelta(hours=4)
    JobRun.replace(name="screen", finished_at=now - timedelta(hours=9)).execute()
    assert next_due("screen", timedelta(hours=6), now) == now  # overdue: at once


class WorkerProcess:
    """``python -m pairscreen worker`` with its stderr collected line by line."""

    def __init__(self, env: dict[str, str], *args: str):
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pairscreen", "worker", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if text in line:
                    return line
            if self.proc.poll() is not None:
                self._reader.join(timeout=2)
                if any(text in line for line in self.lines):
                    continue
                raise AssertionError(f"worker exited ({self.proc.returncode}):\n{self.log}")
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} within {timeout} s:\n{self.log}")

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self._reader.join(timeout=5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture()
def worker_env(database_url, tmp_path):  # type: ignore[no-untyped-def]
    """Start workers on this test's database, where screen and peg sampling just ran (so
    the workers start with only the light jobs due; so did the evaluation)."""
    from pairscreen.db.connection import init_database

    init_database(database_url)
    with database.connection_context():
        for job in ("screen", "peg_sample", "evidence"):
            JobRun.replace(name=job, finished_at=clock.now()).execute()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PAIRSCREEN_DATA_DIR": str(tmp_path),
        "PAIRSCREEN_LOAD_PLUGINS": "",
        "PAIRSCREEN_WORKER_WAIT_POLL": "0.2",
    }
    env.pop("PAIRSCREEN_PLUGINS_DIR", None)
    procs: list[WorkerProcess] = []

    def start(*args: str, extra: dict[str, str] | None = None) -> WorkerProcess:
        p = WorkerProcess({**env, **(extra or {})}, *args)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.kill()


def test_second_worker_exits_or_waits_then_takes_over(worker_env):
    first = worker_env("--lock-ttl", "3")
    started = first.wait_for("started; jobs:")
    assert "screen after each daily close (00:00 UTC) + 5 min (next " in started
    assert "delivery every 10 s" in started
    first.wait_for("ran notifications in")  # the jobs log what ran and how long it took

    second = worker_env("--lock-ttl", "3")
    waiting = worker_env("--lock-ttl", "3", "--wait")
    impatient = worker_env("--lock-ttl", "3", "--wait")
    assert second.proc.wait(timeout=30) == 4  # busy
    second._reader.join(timeout=5)
    assert "another pairscreen worker is running" in second.log
    assert "--wait" in second.log

    impatient.wait_for("waiting for the running worker")
    assert impatient.stop() == 0  # SIGTERM while waiting: a clean exit, never the lock
    assert "lock acquired" not in impatient.log

    waiting.wait_for("waiting for the running worker")
    assert first.stop() == 0
    assert "stopping (SIGTERM)" in first.log and "lock released" in first.log
    waiting.wait_for("lock acquired, starting")
    waiting.wait_for("started; jobs:")
    assert waiting.stop() == 0


def test_a_crashed_workers_lock_expires(worker_env):
    first = worker_env("--lock-ttl", "2")
    first.wait_for("started; jobs:")
    successor = worker_env("--lock-ttl", "2", "--wait")
    successor.wait_for("waiting for the running worker")
    first.kill()  # SIGKILL: no cleanup, the lock row still names it
    killed_at = time.monotonic()
    successor.wait_for("lock acquired, starting", timeout=20)
    assert time.monotonic() - killed_at < 2 + 0.2 + 1.5  # the TTL, one poll, some slack
    assert successor.stop() == 0, successor.log


SLOW_NOTIFIER = """
import os, time
from pathlib import Path
from pairscreen import hookimpl

class Slow:
    name = "slow"

    def deliver(self, notification):
        Path(os.environ["SLOW_MARKER"]).write_text("delivering")
        time.sleep(1.5)
        Path(os.environ["SLOW_MARKER"]).write_text("delivered")

@hookimpl
def pairscreen_register_notifiers():
    return [Slow()]
"""


def test_sigterm_lets_the_running_job_finish(worker_env, runtime, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow_notifier.py").write_text(textwrap.dedent(SLOW_NOTIFIER))
    marker = tmp_path / "marker"
    with database.connection_context():
        enqueue([OutboxMessage("slow.1", None, "slow", "x", "subject", "text")])
    worker = worker_env(
        "--deliver-every",
        "0.5",
        extra={"PAIRSCREEN_PLUGINS_DIR": str(plugins), "SLOW_MARKER": str(marker)},
    )
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        assert worker.proc.poll() is None, worker.log
        time.sleep(0.02)
    assert marker.read_text() == "delivering"
    assert worker.stop() == 0  # SIGTERM in the middle of the delivery
    assert marker.read_text() == "delivered"
    with database.connection_context():
        row = Outbox.get(Outbox.idempotency_key == "slow.1")
        assert (row.status, row.attempts, row.claimed_by) == ("sent", 1, None)
        assert lock_holder() == (None, None)
    assert "ran delivery in" in worker.log
    assert worker.log.index("stopping (SIGTERM)") < worker.log.index("ran delivery in")
