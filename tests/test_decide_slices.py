"""A screen task larger than ``DECIDE_ROWS`` runs its deciding metrics slice by slice and its
survivors' backtests on one panel: every number is the one a single panel gives."""

from __future__ import annotations

import numpy as np

from pairscreen.engine import screen_chunks
from pairscreen.engine.screen_chunks import evaluate_chunk, row_slice
from pairscreen.screening.screen import CHUNK_PAIRS, TASKS_PER_WORKER, chunk_size
from tests.test_deferred_metrics import job
from tests.test_screen_filters import DEFAULT_THRESHOLDS


def test_sliced_deciding_metrics_give_the_whole_panels_numbers(runtime, monkeypatch):
    plugins = runtime.plugins
    whole = evaluate_chunk(plugins, job(DEFAULT_THRESHOLDS))
    monkeypatch.setattr(screen_chunks, "DECIDE_ROWS", 7)  # the 46 rows in 7 slices
    sliced = evaluate_chunk(plugins, job(DEFAULT_THRESHOLDS))
    assert whole.reasons == sliced.reasons
    assert np.array_equal(whole.survivors, sliced.survivors) and whole.survivors.size > 0
    assert np.array_equal(whole.scores, sliced.scores)
    assert list(whole.metrics.values) == list(sliced.metrics.values)
    for name, values in whole.metrics.values.items():
        got = sliced.metrics.values[name][whole.survivors]
        want = values[whole.survivors]
        assert np.array_equal(got, want, equal_nan=values.dtype.kind == "f"), name
    for leg in ("A", "B"):
        assert np.array_equal(whole.legs[leg].growth_pct, sliced.legs[leg].growth_pct)


def test_a_row_slice_is_a_view_with_its_own_cache():
    panel = job(DEFAULT_THRESHOLDS).panel
    panel.cached("x", lambda: 1)
    part = row_slice(panel, 3, 10)
    assert part.n_pairs == 7 and part.a == panel.a[3:10]
    assert part.cached("x", lambda: 2) == 2  # its own cache, not the whole panel's
    assert np.shares_memory(part.close_a, panel.close_a)
    assert np.array_equal(part.log_ratio, panel.log_ratio[3:10])


def test_small_screens_are_cut_so_that_every_worker_has_work():
    assert chunk_size(499_500, 2) == CHUNK_PAIRS
    assert chunk_size(4_950, 2) == -(-4_950 // (2 * TASKS_PER_WORKER))  # 619: 8 tasks
    assert chunk_size(100, 2) == screen_chunks.DECIDE_ROWS  # never below one slice
