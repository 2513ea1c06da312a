"""The screen's unit of work: one chunk of a panel through metrics, filter, score and
backtests. Chunks are independent, so any executor (in-process, a process pool, a Dask
cluster) can run them and the result does not depend on how the panel was split. A job
names its filter, strategy and scorer; the process that runs it looks them up in its own
plugins, so a job is plain data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.engine.evaluate import MetricValues, compute_metrics, run_legs
from pairscreen.engine.filtering import FilterChoice, filter_reasons
from pairscreen.hooks import Plugins
from pairscreen.types import BacktestBatch, DepeggedLeg, FilterContext, PairPanel


@dataclass(frozen=True)
class ChunkJob:
    panel: PairPanel
    history_days: np.ndarray  # (pairs,) full common history of each row
    depegged: np.ndarray  # (pairs,) bool
    screen_filter: FilterChoice
    strategy: str
    scorer: str
    bt_days: int
    depegged_legs: tuple[tuple[DepeggedLeg, ...], ...] = ()  # (pairs,): which legs, since when


@dataclass(frozen=True)
class ChunkResult:
    metrics: MetricValues
    reasons: list[str]
    survivors: np.ndarray  # row indices into the chunk
    scores: np.ndarray  # per survivor
    legs: dict[str, BacktestBatch]  # per survivor


def evaluate_chunk(plugins: Plugins, job: ChunkJob) -> ChunkResult:
    metrics = compute_metrics(plugins, job.panel)
    context = FilterContext(
        job.history_days, job.depegged, job.screen_filter.thresholds, job.depegged_legs
    )
    screen_filter = plugins.filters.get(job.screen_filter.name)
    reasons = filter_reasons(screen_filter, metrics, context)
    keep = np.flatnonzero([not r for r in reasons])
    if keep.size == 0:
        return ChunkResult(metrics, reasons, keep, np.empty(0), {})
    values = {k: v[keep] for k, v in metrics.values.items()}
    scores = np.asarray(plugins.scorers.get(job.scorer).score(values), dtype=float)
    legs = run_legs(plugins.strategies.get(job.strategy), job.panel.rows(keep), job.bt_days)
    return ChunkResult(metrics, reasons, keep, scores, legs)
