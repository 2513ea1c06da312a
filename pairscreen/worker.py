"""``pairscreen worker``: the job schedule on APScheduler, one instance at a time.

Jobs (each in its own thread with its own database connection, never two runs of one job
at once, missed runs coalesced into one):

- **screen** after each close of the universe's bar (or every N closes), a few minutes
  later (``pairscreen.screen_schedule``): pull new candles (``sync_candles``), publish a
  screen (``run_screen``), then run the watchlist notifications; a run that fails (its
  source unreachable) is tried again after a retry delay rather than at the next close;
- **peg** every hour, when peg sampling is installed (``pairscreen.pegs.sampling``):
  sample the pegs (the depeg detector queues depeg alerts), then run the notifications;
- **notifications** once at start (before the scheduler runs), so new watchlist items are
  evaluated without waiting for the next screen;
- **deliver** every ``deliver_every`` seconds (10 by default), and right after each
  notification run: hand due outbox rows to the notifier plugins;
- **heartbeat** every third of the lock TTL: keep the single-instance lock, and give back
  the quota units of API requests that crashed (their slots expired).

The first peg and evidence runs are due one interval after the last finished run recorded
in ``job_run`` (at once when overdue), and the first screen at once when no screen finished
since the latest scheduled close, so a restart neither repeats a fresh screen nor postpones
an overdue one.

Single instance: a ``worker_lock`` row holds the holder id and an expiry. A worker takes it
with one conditional UPDATE (free, expired, or already its own) and refreshes it from the
heartbeat job; a second worker finds it held and exits with a message naming the holder, or
with ``--wait`` polls until the lock is free (the holder stopped, or crashed and its expiry
passed). A worker that loses its lock (it stalled past the TTL and another took over) stops.

SIGTERM / SIGINT: stop scheduling, let running jobs finish (each is one transaction, so an
interrupted one would have left nothing half-done anyway), release the lock, exit 0. Every
job logs ``ran <job> in <N> s`` with what it did.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.base import SchedulerNotRunningError
from apscheduler.schedulers.blocking import BlockingScheduler

from pairscreen import clock
from pairscreen.access import quota
from pairscreen.contracts.bars import bar_size
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import JobRun, WorkerLock
from pairscreen.screen_schedule import ScreenSchedule, ScreenTrigger
from pairscreen.wording import plural

if TYPE_CHECKING:
    from pairscreen.evaluation.portfolio import PortfolioSpec
    from pairscreen.runtime import Runtime

log = logging.getLogger(__name__)

LOCK_NAME = "worker"
SCREEN_JOB = "screen"
EVIDENCE_JOB = "evidence"  # the JobRun name of the track-record refresh
PEG_JOB = "peg_sample"  # the JobRun name peg sampling records (pairscreen.pegs.status)
EXIT_LOCK_HELD = 4  # the CLI's status for "busy"
EXIT_LOCK_LOST = 1


@dataclass(frozen=True)
class WorkerOptions:
    wait: bool = False
    deliver_every: float = 10.0
    lock_ttl: float = 60.0
    screen: ScreenSchedule | None = None  # None: after each close of the universe's bar
    peg_every: timedelta = timedelta(hours=1)
    wait_poll: float = 2.0
    evidence_every: timedelta = timedelta(days=1)
    evidence_sample: int | None = 5000
    evidence_portfolio: PortfolioSpec | None = None  # the picks /evidence shows, if any


class WorkerBusy(Exception):
    """Another worker holds the lock and this one was not asked to wait."""


# ---------------------------------------------------------------------------
# The single-instance lock
# ---------------------------------------------------------------------------


def new_holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire_lock(holder: str, ttl: float, now: datetime | None = None) -> bool:
    """Take the lock if it is free, expired or already ours (one conditional UPDATE)."""
    now = now or clock.now()
    with write_transaction():
        WorkerLock.insert(name=LOCK_NAME).on_conflict_ignore().execute()
        taken: int = (  # peewee types execute() as Any; an UPDATE's is its row count
            WorkerLock.update(
                holder=holder, acquired_at=now, expires_at=now + timedelta(seconds=ttl)
            )
            .where(
                (WorkerLock.name == LOCK_NAME)
                & (
                    WorkerLock.holder.is_null()
                    | WorkerLock.expires_at.is_null()
                    | (WorkerLock.expires_at < now)
                    | (WorkerLock.holder == holder)
                )
            )
            .execute()
        )
    return taken == 1


def refresh_lock(holder: str, ttl: float, now: datetime | None = None) -> bool:
    """Extend our lock; False when it is no longer ours."""
    now = now or clock.now()
    with write_transaction():
        kept: int = (  # peewee types execute() as Any; an UPDATE's is its row count
            WorkerLock.update(expires_at=now + timedelta(seconds=ttl))
            .where((WorkerLock.name == LOCK_NAME) & (WorkerLock.holder == holder))
            .execute()
        )
    return kept == 1


def release_lock(holder: str) -> None:
    with write_transaction():
        WorkerLock.update(holder=None, expires_at=None).where(
            (WorkerLock.name == LOCK_NAME) & (WorkerLock.holder == holder)
        ).execute()


def lock_holder() -> tuple[str | None, datetime | None]:
    row = WorkerLock.get_or_none(WorkerLock.name == LOCK_NAME)
    return (row.holder, row.expires_at) if row else (None, None)


# ---------------------------------------------------------------------------
# The worker
# ---------------------------------------------------------------------------


def peg_sampling_available() -> bool:
    return importlib.util.find_spec("pairscreen.pegs.sampling") is not None


def next_due(job: str, every: timedelta, now: datetime) -> datetime:
    """One interval after the last finished run of ``job``; now when never run or overdue."""
    row = JobRun.get_or_none(JobRun.name == job)
    if row is None:
        return now
    finished: datetime = row.finished_at  # peewee's stubs read every field as Any
    return max(now, finished + every)


class Worker:
    def __init__(self, rt: Runtime, options: WorkerOptions, holder: str | None = None):
        self.rt = rt
        self.options = options
        self.holder = holder or new_holder_id()
        self.stop_requested = threading.Event()
        self.lock_lost = False
        self._stopper: threading.Thread | None = None
        self._stop_lock = threading.Lock()
        self._main_done = threading.Event()  # the main thread is past scheduler.start()
        self._jobs: list[str] = []
        self.scheduler = BlockingScheduler(
            timezone=UTC,
            executors={"default": ThreadPoolExecutor(max_workers=6)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    # -- lifecycle ---------------------------------------------------------

    def run(self) -> int:
        """Take the lock (or wait for it), run the schedule until stopped; the exit code."""
        self._install_signal_handlers()
        with database.connection_context():
            if not self._take_lock():  # stopped while waiting for the lock
                self._main_done.set()
                if self._stopper is not None:
                    self._stopper.join()
                return 0
            try:
                self._add_jobs()
            except BaseException:
                release_lock(self.holder)
                raise
        log.info("worker %s started; jobs: %s", self.holder, ", ".join(self._jobs))
        try:
            # A first notification pass, so new watchlist items need not wait for a screen.
            # It runs here rather than as a one-off scheduler job: APScheduler 3 raises
            # JobLookupError when it is stopped from another thread while removing a
            # finished one-off job, and every job here is an interval job.
            self._job("notifications", self._notify)()
            if not self.stop_requested.is_set():
                self.scheduler.start()
        finally:
            self._main_done.set()
            if self._stopper is not None:
                self._stopper.join()
            with database.connection_context():
                release_lock(self.holder)
            log.info("worker %s stopped, lock released", self.holder)
        return EXIT_LOCK_LOST if self.lock_lost else 0

    def _take_lock(self) -> bool:
        ttl = self.options.lock_ttl
        if acquire_lock(self.holder, ttl):
            return True
        holder, expires = lock_holder()
        until = f", lock held until {clock.iso(expires)}" if expires else ""
        if not self.options.wait:
            raise WorkerBusy(
                f"another pairscreen worker is running ({holder}{until}); stop it first, "
                "or start this one with --wait to take over when it stops"
            )
        print(
            f"pairscreen worker: waiting for the running worker ({holder}{until}) to stop",
            file=sys.stderr,
            flush=True,
        )
        while not self.stop_requested.wait(self.options.wait_poll):
            if acquire_lock(self.holder, ttl):
                print("pairscreen worker: lock acquired, starting", file=sys.stderr, flush=True)
                return True
        return False

    def request_stop(self, reason: str) -> None:
        """Stop after the running jobs finish (safe from a signal handler or a job)."""
        with self._stop_lock:
            if self.stop_requested.is_set():
                return
            self.stop_requested.set()
            log.info("worker stopping (%s); waiting for running jobs", reason)
            self._stopper = threading.Thread(target=self._shutdown, name="worker-stop")
            self._stopper.start()

    def _shutdown(self) -> None:
        # A stop may arrive before the scheduler runs: retry until it runs, or until the main
        # thread has gone past start() (it checks stop_requested before starting).
        while True:
            try:
                self.scheduler.shutdown(wait=True)
                return
            except SchedulerNotRunningError:
                if self._main_done.wait(0.05):
                    return

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def on_signal(signum: int, _frame: object) -> None:
            self.request_stop(signal.Signals(signum).name)

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)

    # -- jobs --------------------------------------------------------------

    def _add_jobs(self) -> None:
        now = clock.now()
        o = self.options
        self._jobs = []
        self.scheduler.add_job(
            self._job("heartbeat", self._heartbeat, quiet=True),
            "interval",
            seconds=max(0.2, o.lock_ttl / 3),
            id="heartbeat",
        )
        self._schedule_screens(now)
        self._jobs.append(f"delivery every {o.deliver_every:g} s")
        self._periodic("evidence", self._evidence, EVIDENCE_JOB, o.evidence_every, now)
        if peg_sampling_available():
            self._periodic("peg sampling", self._peg, PEG_JOB, o.peg_every, now, job_id="peg")
        else:
            self._jobs.append("no peg sampling (not installed)")
        self.scheduler.add_job(
            self._job("delivery", self._deliver, quiet=True),
            "interval",
            seconds=o.deliver_every,
            id="deliver",
            next_run_time=clock.on_system_clock(now),
        )

    @property
    def screen_schedule(self) -> ScreenSchedule:
        """The options' schedule, or one screen after each close of the universe's bar."""
        return self.options.screen or ScreenSchedule(bar_size(self.rt.universe.bar))

    def _schedule_screens(self, now: datetime) -> None:
        schedule = self.screen_schedule
        row = JobRun.get_or_none(JobRun.name == SCREEN_JOB)
        first = schedule.first_due(row.finished_at if row else None, now)
        self._jobs.append(f"screen {schedule.describe()} (next {clock.iso(first)})")
        self.scheduler.add_job(
            self._job("screen", self._screen),
            ScreenTrigger(schedule),
            id="screen",
            next_run_time=clock.on_system_clock(first),
        )

    def _periodic(
        self,
        name: str,
        body: Callable[[], str | None],
        job_run: str,
        every: timedelta,
        now: datetime,
        *,
        job_id: str | None = None,
    ) -> None:
        """Schedule ``body`` every ``every``, first when its last run (the ``job_run`` record)
        is due, and describe it for the start-up line."""
        first = next_due(job_run, every, now)
        self._jobs.append(f"{name} every {_hours(every)} (next {clock.iso(first)})")
        self.scheduler.add_job(
            self._job(name, body),
            "interval",
            seconds=every.total_seconds(),
            id=job_id or name,
            next_run_time=clock.on_system_clock(first),
        )

    def _job(
        self, name: str, body: Callable[[], str | None], *, quiet: bool = False
    ) -> Callable[[], None]:
        """Wrap a job: own connection, timing, a log line, errors logged not raised."""

        def run() -> None:
            if self.stop_requested.is_set():
                return
            started = time.perf_counter()
            try:
                with database.connection_context():
                    summary = body()
            except Exception:
                log.exception("%s failed after %.1f s", name, time.perf_counter() - started)
                return
            if not quiet or summary:
                elapsed = time.perf_counter() - started
                log.info("ran %s in %.1f s%s", name, elapsed, f": {summary}" if summary else "")

        return run

    def _heartbeat(self) -> None:
        if not refresh_lock(self.holder, self.options.lock_ttl):
            log.error("worker %s lost its lock to another worker; stopping", self.holder)
            self.lock_lost = True
            self.request_stop("lock lost")
            return
        # Units reserved by API requests that crashed come back even if their account
        # never calls again.
        returned = quota.reclaim_expired(None, clock.now())
        if returned:
            log.info("gave back %d quota units of crashed requests", returned)

    def _screen(self) -> str:
        from pairscreen.market.bar_sync import sync_bars
        from pairscreen.market.sync import sync_candles
        from pairscreen.screening.screen import run_screen

        try:
            if bar_size(self.rt.universe.bar).intraday:
                synced = sync_bars(self.rt.universe, self.rt.plugins).summary()
            else:
                synced = sync_candles(self.rt.universe, self.rt.plugins).summary()
            self.rt.candles.invalidate()
            screen = run_screen(self.rt)
        except Exception:
            self._retry_screen()
            raise
        notified = self._notify()
        return (
            f"{synced}; screen #{screen.screen_id}: "
            f"{plural(screen.n_pairs_screened, 'pair')}, "
            f"{plural(screen.n_survivors, 'survivor')}; {notified}"
        )

    def _retry_screen(self) -> None:
        """Try a failed screen again after the schedule's retry delay, unless the next
        scheduled screen comes sooner."""
        again = self.screen_schedule.retry_at(clock.now())
        if again is None:
            return
        log.info("screen: trying again at %s", clock.iso(again))
        with contextlib.suppress(Exception):  # the scheduler may be stopping
            self.scheduler.modify_job("screen", next_run_time=clock.on_system_clock(again))

    def _evidence(self) -> str:
        """Evaluate the screen's rules on the stored candles and publish the track record."""
        from pairscreen.evaluation.track_record import evaluate_current_rules
        from pairscreen.screen_store.evidence import publish

        try:
            record = evaluate_current_rules(
                self.rt,
                sample=self.options.evidence_sample,
                portfolio=self.options.evidence_portfolio,
            )
        except ValueError as exc:  # too little history for one as-of day, no candles
            summary = f"nothing published: {exc}"
        else:
            evidence_id = publish(record.body, record.first_day, record.last_day, clock.now())
            summary = record.summary(evidence_id)
        with write_transaction():
            JobRun.replace(name=EVIDENCE_JOB, finished_at=clock.now()).execute()
        return summary

    def _peg(self) -> str:
        from pairscreen.pegs.sampling import sample_pegs

        return f"{sample_pegs(self.rt).summary()}; {self._notify()}"

    def _notify(self) -> str:
        from pairscreen.notify.run import run_notifications

        report = run_notifications(self.rt)
        if report.notifications:
            self._wake_delivery()
        return report.summary()

    def _deliver(self) -> str | None:
        from pairscreen.notify.outbox import backlog, deliver_pending

        report = deliver_pending(self.rt, worker_id=self.holder)
        if not report.attempted:
            return None
        if not report.retrying:
            return report.summary()
        # Why the rest waits, per channel: the reason is in each message's last error.
        return f"{report.summary()}; waiting: {'; '.join(c.line() for c in backlog())}"

    def _wake_delivery(self) -> None:
        with contextlib.suppress(Exception):  # the scheduler may be stopping
            self.scheduler.modify_job("deliver", next_run_time=clock.on_system_clock(clock.now()))


def _hours(every: timedelta) -> str:
    return f"{every.total_seconds() / 3600:g} h"


def run_worker(rt: Runtime, options: WorkerOptions | None = None) -> int:
    """Run the worker in this process until SIGTERM / SIGINT; returns the exit code."""
    if log.getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.INFO)  # what ran and how long it took is the point of a worker
    return Worker(rt, options or WorkerOptions()).run()
