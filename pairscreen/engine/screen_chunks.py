"""The screen's unit of work: one chunk of a panel through metrics, filter, score and
backtests. Chunks are independent, so any executor (in-process, a process pool, a Dask
cluster) can run them and the result does not depend on how the panel was split. A job
names its filter, strategy and scorer; the process that runs it looks them up in its own
plugins, so a job is plain data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import (
    BacktestBatch,
    DepeggedLeg,
    Filter,
    FilterContext,
    Metric,
    PairPanel,
)
from pairscreen.engine.evaluate import MetricValues, compute_metrics, run_legs
from pairscreen.engine.filtering import FilterChoice, filter_fields, filter_reasons
from pairscreen.engine.panel_rows import PairRows, rows_of
from pairscreen.engine.required_fields import CORE_FIELDS
from pairscreen.engine.screen_rules import QVALUE_FIELDS
from pairscreen.plugin_system.registry import OutOfContract, Plugins, blamed

# Pairs whose deciding metrics run on one panel: their work arrays stay cache-sized. A job
# may hold more (a screen's chunk); its survivors then share one panel for the backtests,
# whose cost per day is mostly fixed and so falls with every survivor added.
DECIDE_ROWS = 500


@dataclass(frozen=True)
class ChunkJob:
    # The chunk's pairs: a panel, or a screen's group whose panels are cut when needed.
    panel: PairRows
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
    survivor_panel: PairPanel | None = None  # the survivors' rows (None without any)


def evaluate_chunk(plugins: Plugins, job: ChunkJob) -> ChunkResult:
    """Metrics, filter, score and both legs of one chunk.

    Only the metrics the filter or the core reads run on every pair; the others run on the
    survivors alone (only survivors' metrics are published, and a metric gives a pair the
    same numbers in any panel), so a descriptive metric costs little in the screen.

    Any plugin that fails here (a metric, a rule, the scorer, the strategy) raises
    :class:`~pairscreen.plugin_system.registry.PluginFailed` naming it: the screen stops
    rather than publish a screen with a component missing.
    """
    name = job.screen_filter.name
    screen_filter = plugins.filters.get(name)
    deciding, describing = split_metrics(plugins, screen_filter, job.screen_filter.thresholds)
    metrics = deciding_metrics(plugins, job.panel, deciding)
    context = FilterContext(
        job.history_days, job.depegged, job.screen_filter.thresholds, job.depegged_legs
    )
    with blamed(plugins.filters.owner(name), f"screen filter {name!r}"):
        reasons = filter_reasons(screen_filter, metrics, context)
    keep = np.flatnonzero([not r for r in reasons])
    if keep.size == 0:
        return ChunkResult(metrics, reasons, keep, np.empty(0), {})
    # One panel of the survivors for their metrics and their legs, so what a metric derives
    # from a backtest (the break-even fee) and the legs share its cache.
    survivors = rows_of(job.panel, keep)
    if describing:
        later = compute_metrics(plugins, survivors, describing, strict=True)
        order = [f.name for metric in plugins.metrics for f in metric.fields]
        metrics = metrics.with_rows(job.panel.n_pairs, keep, later, order)
    values = {k: v[keep] for k, v in metrics.values.items()}
    with blamed(plugins.scorers.owner(job.scorer), f"scorer {job.scorer!r}"):
        scores = np.asarray(plugins.scorers.get(job.scorer).score(values), dtype=float)
        if scores.shape != keep.shape:
            raise OutOfContract(f"scores of shape {scores.shape}, not {keep.shape}")
    strategy = plugins.strategies.get(job.strategy)
    with blamed(plugins.strategies.owner(job.strategy), f"strategy {job.strategy!r}"):
        legs = run_legs(strategy, survivors, job.bt_days)
    return ChunkResult(metrics, reasons, keep, scores, legs, survivors)


def deciding_metrics(plugins: Plugins, panel: PairRows, deciding: list[Metric]) -> MetricValues:
    """``deciding`` on the panel, :data:`DECIDE_ROWS` rows at a time (a metric gives each
    pair the same numbers in any panel, so the slices' values simply follow each other)."""
    if panel.n_pairs <= DECIDE_ROWS:
        whole = panel if isinstance(panel, PairPanel) else rows_of(panel, slice(None))
        return compute_metrics(plugins, whole, deciding, strict=True)
    # One slice at a time: each slice's cache (its log-ratios, sorts, percentiles) goes as
    # soon as its metrics are computed, so a job's peak memory does not grow with its slices.
    parts = [
        compute_metrics(
            plugins, row_slice(panel, start, start + DECIDE_ROWS), deciding, strict=True
        )
        for start in range(0, panel.n_pairs, DECIDE_ROWS)
    ]
    values = {name: np.concatenate([p.values[name] for p in parts]) for name in parts[0].values}
    return MetricValues(values, parts[0].fields, parts[0].missing)


def row_slice(panel: PairRows, start: int, stop: int) -> PairPanel:
    """Rows ``start:stop`` of the panel (of a panel: views, no copy), with a cache of their
    own."""
    return rows_of(panel, slice(start, stop))


def split_metrics(
    plugins: Plugins, screen_filter: Filter, thresholds: Mapping[str, float]
) -> tuple[list[Metric], list[Metric]]:
    """The metrics that decide survival (a field read by the core or by the filter with these
    thresholds, or a p-value the screen turns into q-values over every tested pair) and the
    ones that only describe survivors, each in registration order."""
    return split_metrics_for(plugins, [(screen_filter, thresholds)])


def split_metrics_for(
    plugins: Plugins, filters: Sequence[tuple[Filter, Mapping[str, float]]]
) -> tuple[list[Metric], list[Metric]]:
    """:func:`split_metrics` for several filters at once (an evaluation's rule sets): a
    metric decides when any of them reads one of its fields."""
    needed = {f.name for f in CORE_FIELDS} | set(QVALUE_FIELDS)
    for screen_filter, thresholds in filters:
        needed |= filter_fields(screen_filter, thresholds)
    deciding: list[Metric] = []
    describing: list[Metric] = []
    for metric in plugins.metrics:
        reads = any(f.name in needed for f in metric.fields)
        (deciding if reads else describing).append(metric)
    return deciding, describing
