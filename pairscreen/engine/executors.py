"""Executors that run screen work: in this process, or on forked worker processes.

The workers fork after the plugins are loaded, so each child starts with the parent's
plugins (and whatever the work closes over: chunks, a calendar matrix) in its memory, handed
to it as plain arguments. :func:`stream_local` hands out small tasks (a chunk's pair
indices) read lazily from an iterator, so the screen never builds all its chunks at once.
Only tasks and results cross the pipes. No module holds a worker's state.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import TypeVar, cast

from pairscreen.engine.allocator import reuse_large_blocks

_Task = TypeVar("_Task")
_Result = TypeVar("_Result")


class WorkerDied(RuntimeError):
    """A forked screen worker exited before answering (killed, out of memory)."""


def _stop(workers: dict[Connection, BaseProcess], busy: dict[Connection, int]) -> None:
    """Tell idle workers to exit; end the ones still computing (a chunk failed elsewhere)."""
    for conn, process in workers.items():
        if conn in busy:
            process.terminate()
        else:
            with contextlib.suppress(OSError):  # it has died: nothing to tell
                conn.send(None)
        conn.close()
    for process in workers.values():
        process.join()


def stream_local(
    work: Callable[[_Task], _Result], tasks: Iterable[_Task], processes: int = 0
) -> Iterator[_Result]:
    """``work(task)`` for every task, results as they finish (in any order), on
    ``processes`` forked workers (1: in this process, 0: one per core).

    The workers fork once, before the first task, and inherit ``work`` (with whatever it
    closes over: the plugins, a calendar matrix) from this process's memory; only tasks and
    results cross the pipes. ``tasks`` is read lazily, at most one ahead per worker, so the
    tasks waiting and the results not yet consumed stay bounded whatever their number.
    """
    processes = processes or os.cpu_count() or 1
    if processes <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from (work(task) for task in tasks)
        return
    context = multiprocessing.get_context("fork")
    todo = iter(tasks)
    workers: dict[Connection, BaseProcess] = {}
    busy: dict[Connection, int] = {}
    handed = 0
    try:
        for _ in range(processes):
            ours, theirs = context.Pipe()
            process = context.Process(target=_serve_work, args=(work, theirs), daemon=True)
            process.start()
            theirs.close()
            workers[ours] = process
        idle = list(workers)
        while True:
            while idle:
                task = next(todo, _DONE)
                if task is _DONE:
                    break
                conn = idle.pop()
                conn.send(task)
                busy[conn] = handed
                handed += 1
            if not busy:
                return
            for ready in wait(list(busy)):
                conn = cast(Connection, ready)
                index = busy.pop(conn)
                try:
                    failed, value = conn.recv()
                except EOFError:
                    raise WorkerDied(f"a screen worker died computing chunk {index}") from None
                if failed:
                    raise value
                idle.append(conn)
                yield value
    finally:
        _stop(workers, busy)


_DONE = object()


def _serve_work(work: Callable[[object], object], conn: Connection) -> None:
    """A forked worker: ``work`` on every task that arrives, until ``None``."""
    reuse_large_blocks()
    while (task := conn.recv()) is not None:
        try:
            reply: tuple[bool, object] = (False, work(task))
        except Exception as exc:
            reply = (True, exc)
        try:
            conn.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # an unpicklable error
            conn.send((True, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]} ({exc})")))
