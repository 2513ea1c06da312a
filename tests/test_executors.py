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
