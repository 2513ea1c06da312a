"""The local executor's forked workers: results in order, errors and deaths reported."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from pairscreen.engine import executors

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="forked workers need fork"
)


def _doubled(plugins: object, job: int) -> tuple[int, int]:
    return os.getpid(), job * 2


def test_results_come_back_in_the_jobs_order_from_several_workers(monkeypatch):
    monkeypatch.setattr(executors, "evaluate_chunk", _doubled)
    results = executors.run_local(None, list(range(40)), processes=3)  # type: ignore[arg-type]
    assert [value for _, value in results] == [2 * i for i in range(40)]
    pids = {pid for pid, _ in results}
    assert os.getpid() not in pids and 1 < len(pids) <= 3
    assert multiprocessing.active_children() == []


def test_a_failing_chunk_raises_its_error_and_stops_every_worker(monkeypatch):
    def fail_on_seven(plugins: object, job: int) -> int:
        if job == 7:
            raise ValueError("chunk 7 is broken")
        return job

    monkeypatch.setattr(executors, "evaluate_chunk", fail_on_seven)
    with pytest.raises(ValueError, match="chunk 7 is broken"):
        executors.run_local(None, list(range(20)), processes=2)  # type: ignore[arg-type]
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_reported_not_waited_for(monkeypatch):
    def die_on_three(plugins: object, job: int) -> int:
        if job == 3:
            os._exit(9)
        return job

    monkeypatch.setattr(executors, "evaluate_chunk", die_on_three)
    with pytest.raises(executors.WorkerDied, match="chunk 3"):
        executors.run_local(None, list(range(10)), processes=2)  # type: ignore[arg-type]
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
