"""Executors that run screen chunks: in this process, or on a pool of forked processes.

The pool forks after the plugins are loaded, so workers share the parent's plugins and only
the chunks (numpy arrays) and their results cross process boundaries.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from pairscreen.engine.screen_chunks import ChunkJob, ChunkResult, evaluate_chunk
from pairscreen.hooks import Plugins

_worker_plugins: Plugins | None = None


def _run_in_worker(job: ChunkJob) -> ChunkResult:
    assert _worker_plugins is not None
    return evaluate_chunk(_worker_plugins, job)


def run_local(plugins: Plugins, jobs: Sequence[ChunkJob], processes: int = 0) -> list[ChunkResult]:
    """Run ``jobs`` on ``processes`` forked workers (1: in this process, 0: one per core),
    results in order."""
    processes = processes or os.cpu_count() or 1
    if processes <= 1 or len(jobs) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [evaluate_chunk(plugins, job) for job in jobs]
    global _worker_plugins
    _worker_plugins = plugins
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(processes, len(jobs)), mp_context=context) as pool:
            return list(pool.map(_run_in_worker, jobs))
    finally:
        _worker_plugins = None
