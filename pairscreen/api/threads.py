"""Worker threads fed by one queue, answering on the caller's event loop.

A hand-off costs a fifth of ``loop.run_in_executor``'s CPU and a twenty-fifth of
``anyio.to_thread``'s (no ``concurrent.futures.Future`` per call): it matters on the cached
endpoints, whose key lookup is the only thread hop of the request.

A job may be bounded in how long it waits for a thread (:meth:`Lane.submit`): past the bound,
or once its :class:`Ticket` is withdrawn, it is answered :class:`NotStarted` at once and never
runs, so an overloaded lane sheds work instead of queueing it without end.

A :class:`Lane` belongs to the app that made it: its threads start on first use and stop
once the lane is garbage-collected, so apps built and dropped (tests build one each) leave
no threads behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class NotStarted(Exception):
    """The job waited in the lane's queue longer than its bound, or was withdrawn: it never ran."""


class Ticket:
    """A queued job's claim: the worker that starts it and the caller that withdraws it race
    for it under a lock, so a job either runs or is answered :class:`NotStarted`, never both."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "queued"

    def start(self) -> bool:
        return self._claim("started")

    def withdraw(self) -> bool:
        """Keep the job from ever running; False when it has already started."""
        return self._claim("withdrawn")

    def _claim(self, state: str) -> bool:
        with self._lock:
            if self._state != "queued":
                return False
            self._state = state
            return True


_Job = tuple[
    asyncio.AbstractEventLoop,
    asyncio.Future[Any],
    Ticket,
    Callable[..., Any],
    tuple[Any, ...],
]


class Lane:
    """``threads`` worker threads named ``pairscreen-<name>-<i>``, one job queue."""

    def __init__(self, name: str, threads: int) -> None:
        self.name = name
        self.threads = threads
        self._jobs: queue.SimpleQueue[_Job | None] | None = None
        self._starting = threading.Lock()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on one of the lane's threads."""
        return await self.submit(Ticket(), None, fn, *args)

    async def submit(
        self, ticket: Ticket, start_within: float | None, fn: Callable[..., T], *args: Any
    ) -> T:
        """``fn(*args)`` on one of the lane's threads, unless ``ticket`` is withdrawn first or
        no thread takes it within ``start_within`` seconds: then :class:`NotStarted` at once."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        timer = None
        if start_within is not None:
            timer = loop.call_later(start_within, _expire, future, ticket)
        (self._jobs or self._start()).put((loop, future, ticket, fn, args))
        try:
            return await future
        finally:
            if timer is not None:
                timer.cancel()

    def _start(self) -> queue.SimpleQueue[_Job | None]:
        with self._starting:
            if self._jobs is None:
                jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
                for i in range(self.threads):
                    name = f"pairscreen-{self.name}-{i}"
                    threading.Thread(target=_work, args=(jobs,), name=name, daemon=True).start()
                # The threads hold the queue, not the lane: dropping the lane stops them.
                weakref.finalize(self, _stop, jobs, self.threads)
                self._jobs = jobs
            return self._jobs


def _work(jobs: queue.SimpleQueue[_Job | None]) -> None:
    while (job := jobs.get()) is not None:
        loop, future, ticket, fn, args = job
        outcome: tuple[Any, BaseException | None]
        if not ticket.start():
            del job, loop, future, ticket, fn, args  # withdrawn: answered already
            continue
        try:
            outcome = (fn(*args), None)
        except BaseException as exc:  # handed to the awaiting request
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(_resolve, future, *outcome)
        del job, loop, future, ticket, fn, args, outcome  # hold nothing while waiting for the next


def _stop(jobs: queue.SimpleQueue[_Job | None], threads: int) -> None:
    for _ in range(threads):
        jobs.put(None)


def _expire(future: asyncio.Future[Any], ticket: Ticket) -> None:
    if ticket.withdraw() and not future.done():
        future.set_exception(NotStarted("no thread took the job in time"))


def _resolve(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)
