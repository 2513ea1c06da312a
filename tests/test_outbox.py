"""The outbox: one row per event, claims that two workers never share, and at-least-once
delivery across a crash between sending and marking (the receiver dedups by key)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from pairscreen_plugins.notifiers import webhook as webhook_plugin

from pairscreen import DeliveryError, Notification, clock, hookimpl
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox
from pairscreen.notify.outbox import (
    OutboxMessage,
    OutboxPolicy,
    counts,
    deliver_pending,
    enqueue,
)
from tests.support.receivers import HttpReceiver, fresh_database, notifier_plugins

ROOT = Path(__file__).resolve().parents[1]
SECRET = "outbox-test-secret"


@pytest.fixture()
def db(empty_database_url, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAIRSCREEN_WEBHOOK_SECRET", SECRET)
    fresh_database(empty_database_url)
    with database.connection_context():
        yield empty_database_url
    database.close()


@pytest.fixture()
def receiver():  # type: ignore[no-untyped-def]
    r = HttpReceiver().start()
    yield r
    r.stop()


def message(key: str, url: str) -> OutboxMessage:
    return OutboxMessage(key, None, "webhook", url, f"subject {key}", f"text {key}", "", {"k": key})


def test_queueing_the_same_event_twice_keeps_one_row(db):
    assert enqueue([message("e.1", "http://x"), message("e.2", "http://x")]) == 2
    assert enqueue([message("e.1", "http://x")]) == 0
    assert Outbox.select().count() == 2
    with pytest.raises(ValueError):
        enqueue([message("bad key with spaces", "http://x")])


def test_crash_between_send_and_mark_redelivers_with_the_same_key(db, receiver):
    """A worker process dies right after the receiver got a message and before the row was
    marked sent: the claim expires, the next worker sends it again with the same
    idempotency key, and the receiver, deduplicating by key, acts exactly once per event."""
    enqueue([message(f"event.{i}", receiver.url + "/hook") for i in range(3)])
    crash = textwrap.dedent(
        """
        import os, sys
        from pairscreen.db.connection import connect, database
        from pairscreen.notify import outbox
        from pairscreen_plugins.notifiers import webhook
        from tests.support.receivers import notifier_plugins

        connect(sys.argv[1])

        def die(*args, **kwargs):
            os._exit(17)  # the process is gone: no mark, no cleanup, no rollback handlers

        outbox._mark_sent = die
        with database.connection_context():
            outbox.deliver_pending(notifier_plugins(webhook), worker_id="doomed")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", crash, db],
        cwd=ROOT,
        env={**os.environ, "PAIRSCREEN_WEBHOOK_SECRET": SECRET},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 17, proc.stderr
    assert [r.json()["idempotency_key"] for r in receiver.requests] == ["event.0"]
    crashed = Outbox.get(Outbox.idempotency_key == "event.0")
    assert (crashed.status, crashed.claimed_by, crashed.attempts) == ("pending", "doomed", 1)

    rt = notifier_plugins(webhook_plugin)
    now = clock.now()
    # While the dead worker's claim is live, nobody touches its row; the others go out.
    first = deliver_pending(rt, now=now, worker_id="survivor")
    assert first.sent == 2
    assert Outbox.get(Outbox.idempotency_key == "event.0").status == "pending"
    # Once the claim expires, the row is delivered again, with the same key.
    later = now + timedelta(seconds=OutboxPolicy().lease + 1)
    second = deliver_pending(rt, now=later, worker_id="survivor")
    assert second.sent == 1
    assert deliver_pending(rt, now=later + timedelta(hours=1), worker_id="survivor").attempted == 0

    keys = [r.headers["X-Idempotency-Key"] for r in receiver.requests]
    assert sorted(keys) == ["event.0", "event.0", "event.1", "event.2"]  # at least once
    assert sorted(receiver.dedup()) == ["event.0", "event.1", "event.2"]  # once per event
    for r in receiver.requests:
        assert r.json()["idempotency_key"] == r.headers["X-Idempotency-Key"]
    assert Outbox.select().count() == 3
    assert counts() == {"pending": 0, "sent": 3, "failed": 0}
    assert Outbox.get(Outbox.idempotency_key == "event.0").attempts == 2


class SlowRecorder:
    """A notifier that records every delivery and takes a little time, to overlap workers."""

    name = "slow"

    def __init__(self) -> None:
        self.delivered: list[str] = []
        self.lock = threading.Lock()

    def deliver(self, notification: Notification) -> None:
        time.sleep(0.002)
        with self.lock:
            self.delivered.append(notification.idempotency_key)


def test_concurrent_workers_never_send_a_row_twice(db):
    recorder = SlowRecorder()

    class Plugin:
        @hookimpl
        def pairscreen_register_notifiers(self):  # type: ignore[no-untyped-def]
            return [recorder]

    rt = notifier_plugins(Plugin())
    n = 60
    enqueue([OutboxMessage(f"c.{i}", None, "slow", "x", "s", "t") for i in range(n)])
    barrier = threading.Barrier(4)
    reports = []

    def work(i: int) -> None:
        with database.connection_context():
            barrier.wait()
            reports.append(deliver_pending(rt, worker_id=f"w{i}"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(recorder.delivered) == sorted(f"c.{i}" for i in range(n))  # each exactly once
    assert sum(r.sent for r in reports) == n
    assert counts()["sent"] == n
    assert {row.attempts for row in Outbox.select()} == {1}


def test_a_notifier_that_keeps_crashing_its_worker_is_given_up(db):
    enqueue([message("loop.1", "http://127.0.0.1:9/")])
    policy = OutboxPolicy(max_attempts=3, lease=10)
    # Simulate three workers that each claimed the row and died before recording anything.
    Outbox.update(attempts=3, claimed_by="dead", claimed_until=clock.now()).execute()
    report = deliver_pending(
        notifier_plugins(webhook_plugin),
        now=clock.now() + timedelta(seconds=11),
        worker_id="w",
        policy=policy,
    )
    row = Outbox.get()
    assert (report.failed, row.status) == (1, "failed")
    assert "interrupted" in row.last_error


def test_a_broken_notifier_is_retried_not_fatal(db):
    class Broken:
        name = "broken"

        def deliver(self, notification: Notification) -> None:
            raise KeyError("bug in a plugin")

    class Fine:
        name = "fine"

        def deliver(self, notification: Notification) -> None:
            raise DeliveryError("receiver busy", retry_after=5)

    class Plugin:
        @hookimpl
        def pairscreen_register_notifiers(self):  # type: ignore[no-untyped-def]
            return [Broken(), Fine()]

    enqueue(
        [
            OutboxMessage("b.1", None, "broken", "x", "s", "t"),
            OutboxMessage("f.1", None, "fine", "x", "s", "t"),
        ]
    )
    now = clock.now()
    report = deliver_pending(notifier_plugins(Plugin()), now=now, worker_id="w")
    assert report.retrying == 2
    broken = Outbox.get(Outbox.idempotency_key == "b.1")
    fine = Outbox.get(Outbox.idempotency_key == "f.1")
    assert broken.status == fine.status == "pending"
    assert "KeyError" in broken.last_error
    assert fine.next_attempt_at == now + timedelta(seconds=5)
