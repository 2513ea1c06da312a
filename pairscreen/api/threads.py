"""Worker threads fed by one queue, answering on the caller's event loop.

A hand-off costs a fifth of ``loop.run_in_executor``'s CPU and a twenty-fifth of
``anyio.to_thread``'s (no ``concurrent.futures.Future`` per call): it matters on the cached
endpoints, whose key lookup is the only thread hop of the request.

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

_Job = tuple[asyncio.AbstractEventLoop, asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]


class Lane:
    """``threads`` worker threads named ``pairscreen-<name>-<i>``, one job queue."""

    def __init__(self, name: str, threads: int) -> None:
        self.name = name
        self.threads = threads
        self._jobs: queue.SimpleQueue[_Job | None] | None = None
        self._starting = threading.Lock()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on one of the lane's threads."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        (self._jobs or self._start()).put((loop, future, fn, args))
        return await future

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
        loop, future, fn, args = job
        outcome: tuple[Any, BaseException | None]
        try:
            outcome = (fn(*args), None)
        except BaseException as exc:  # handed to the awaiting request
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(_resolve, future, *outcome)
        del job, loop, future, fn, args, outcome  # hold nothing while waiting for the next


def _stop(jobs: queue.SimpleQueue[_Job | None], threads: int) -> None:
    for _ in range(threads):
        jobs.put(None)


def _resolve(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)
