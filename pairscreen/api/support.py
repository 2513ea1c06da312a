"""What every handler shares: a database connection per request and the caller."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pairscreen.access.accounts import Principal
from pairscreen.access.admission import compute_request
from pairscreen.db.connection import database, is_sqlite
from pairscreen.runtime import current

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


@contextlib.contextmanager
def request_connection() -> Iterator[None]:
    """The database connection of one request, in the thread that serves it.

    On SQLite the thread keeps its connection (one, to the current database) for its next
    request: opening one (a file open and four PRAGMAs) cost more than the whole request of
    a cached endpoint. On
    PostgreSQL each request takes a fresh or pooled connection and gives it back, so that a
    server restart heals (R17).
    """
    if is_sqlite():
        db = database.obj
        kept = getattr(_thread, "database", None)
        if kept is not db:  # the service was bound to another database (tests do that)
            if kept is not None and not kept.is_closed():
                kept.close()
            _thread.database = db
        if db.is_closed():
            db.connect()
        yield
    else:
        with database.connection_context():
            yield


_thread = threading.local()


def with_database(handler: F) -> F:
    """Run the handler inside its request's connection (handlers run in a worker thread)."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with request_connection():
            return _named_json(handler(*args, **kwargs))

    return wrapper  # type: ignore[return-value]


async def in_thread(fn: Callable[..., T], *args: Any, pool: str = "io") -> T:
    """``fn(*args)`` in a worker thread of ``pool``, inside a request connection.

    ``io``: short database work (key lookups, admission, reads); ``compute``: computations.
    """
    return await _lane(pool).run(contextvars.copy_context().run, in_connection, fn, *args)


async def run_compute(token_info: dict, work: Callable[[], T]) -> tuple[T, dict[str, str]]:
    """Run a compute request: ``work()``'s result and the rate-limit headers of its 200.

    Admission (tier, in-flight slot or 409, quota unit or 429) and settlement run on the
    ``io`` pool; ``work`` runs on the ``compute`` pool, ``Settings.compute_threads`` threads.
    Computations are CPU-bound: on a shared pool a burst of them took every thread, and key
    lookups and cheap reads (``/me``, the cached screen) queued behind them for seconds
    (R16). A request waits for a compute thread only once admitted, so the in-flight limit
    still answers 409 at once.
    """
    guard = compute_request(caller(token_info), current().settings)
    headers = await in_thread(guard.__enter__)
    try:
        result = await in_thread(work, pool="compute")
    except BaseException as exc:
        await in_thread(guard.__exit__, type(exc), exc, exc.__traceback__)
        raise
    await in_thread(guard.__exit__, None, None, None)
    return result, headers


def in_connection(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in this thread, inside its request connection."""
    with request_connection():
        return fn(*args)


IO_THREADS = 8
_lanes: dict[str, _Lane] = {}
_lanes_lock = threading.Lock()


def _lane(name: str) -> _Lane:
    with _lanes_lock:
        if name not in _lanes:
            if name == "compute":
                cores = len(os.sched_getaffinity(0))
                threads = current().settings.compute_threads or max(1, cores - 1)
            else:
                threads = IO_THREADS
            _lanes[name] = _Lane(name, threads)
        return _lanes[name]


class _Lane:
    """Worker threads fed by one queue, answering on the caller's event loop.

    A hand-off costs a fifth of ``loop.run_in_executor``'s CPU and a twenty-fifth of
    ``anyio.to_thread``'s (no ``concurrent.futures.Future`` per call): it matters on the
    cached endpoints, whose key lookup is the only thread hop of the request.
    """

    def __init__(self, name: str, threads: int) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        for i in range(threads):
            threading.Thread(target=self._work, name=f"pairscreen-{name}-{i}", daemon=True).start()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return await future

    def _work(self) -> None:
        while True:
            loop, future, fn, args = self._jobs.get()
            try:
                outcome = (fn(*args), None)
            except BaseException as exc:  # handed to the awaiting request
                outcome = (None, exc)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(_settle, future, *outcome)


def _settle(future: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)


def _named_json(result: Any) -> Any:
    """Name the media type of a JSON body.

    Every operation also produces ``text/plain`` (its errors), and connexion refuses to guess
    between two media types for a dict: it would answer 500.
    """
    if isinstance(result, dict | list):
        return result, 200, {"Content-Type": "application/json"}
    if isinstance(result, tuple) and result and isinstance(result[0], dict | list):
        body, status, *rest = result
        headers = {"Content-Type": "application/json", **(rest[0] if rest else {})}
        return body, status, headers
    return result


def caller(token_info: dict) -> Principal:
    return token_info["principal"]
