"""The local executor's forked workers: every task once, errors and deaths reported."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from pairscreen.engine import executors

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="forked workers need fork"
)


def test_a_failing_task_raises_its_error_and_stops_every_worker():
    def fail_on_seven(task: int) -> int:
        if task == 7:
            raise ValueError("chunk 7 is broken")
        return task

    with pytest.raises(ValueError, match="chunk 7 is broken"):
        list(executors.stream_local(fail_on_seven, range(20), processes=2))
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_reported_not_waited_for():
    def die_on_three(task: int) -> int:
        if task == 3:
            os._exit(9)
        return task

    with pytest.raises(executors.WorkerDied, match="died"):
        list(executors.stream_local(die_on_three, range(10), processes=2))
    assert multiprocessing.active_children() == []


def _pid_and_double(task: int) -> tuple[int, int]:
    return os.getpid(), task * 2


def test_streamed_tasks_each_run_once_on_workers_forked_once():
    results = list(executors.stream_local(_pid_and_double, iter(range(60)), processes=2))
    assert sorted(value for _, value in results) == [2 * i for i in range(60)]
    pids = {pid for pid, _ in results}
    assert os.getpid() not in pids and len(pids) <= 2  # the same two workers for every task
    assert multiprocessing.active_children() == []


def test_streamed_tasks_are_read_at_most_one_ahead_per_worker():
    read: list[int] = []

    def tasks():  # type: ignore[no-untyped-def]
        for i in range(30):
            read.append(i)
            yield i

    stream = executors.stream_local(_pid_and_double, tasks(), processes=2)
    for consumed, _ in enumerate(stream, start=1):
        assert len(read) <= consumed + 2
    assert len(read) == 30
    assert multiprocessing.active_children() == []


def _fail_on_seven(task: int) -> int:
    if task == 7:
        raise ValueError("task 7 is broken")
    return task


def test_a_failing_streamed_task_raises_its_error_and_stops_every_worker():
    with pytest.raises(ValueError, match="task 7 is broken"):
        list(executors.stream_local(_fail_on_seven, iter(range(20)), processes=2))
    assert multiprocessing.active_children() == []


def test_one_process_streams_in_this_process():
    results = list(executors.stream_local(_pid_and_double, iter(range(5)), processes=1))
    assert results == [(os.getpid(), 2 * i) for i in range(5)]
