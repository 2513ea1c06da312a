"""The ``dask`` executor: screen chunks run on a Dask distributed cluster.

Chunks are independent (see :mod:`pairscreen.engine.screen_chunks`), so each worker runs
:func:`~pairscreen.engine.screen_chunks.evaluate_chunk` on its share and the results come back
in submission order; the screen is identical to the local one.

What travels: a chunk's panel repeats each asset's history once per pair (100 assets make
4,950 pairs and some 180 MB of panels), so the client sends the universe's candles once to
every worker (a few MB) and, per chunk, only its recipe (:class:`ChunkRecipe`: the pairs, the
panel length, the filter inputs). The worker rebuilds the panel with the same functions the
client used (:func:`~pairscreen.engine.panels.align`, :func:`~pairscreen.engine.panels.panel_of`)
and checks it against the client's fingerprint before computing.

Plugins are never pickled: each worker loads them once, from its own environment (built-ins,
``pairscreen`` entry points, ``PAIRSCREEN_PLUGINS_DIR``), the first time it runs a chunk, and
keeps them in a Dask worker plugin (:mod:`pairscreen.engine.dask_worker`). Every worker
therefore needs pairscreen and the same plugins installed. Each chunk carries the client's
metric fields (in output order), and a worker whose plugins differ refuses the chunk with a
message naming the difference, rather than returning a screen computed with other metrics.

dask is imported lazily: it is the ``pairscreen[dask]`` extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from pairscreen.engine.panels import align, panel_of
from pairscreen.engine.screen_chunks import ChunkJob, ChunkResult, evaluate_chunk
from pairscreen.errors import MissingExtra
from pairscreen.hooks import Plugins
from pairscreen.types import Candles, PairPanel

CONNECT_TIMEOUT_SECONDS = 30


class PluginMismatch(RuntimeError):
    """A Dask worker has other plugins than the client that submitted the screen."""


def fingerprint(panel: PairPanel) -> tuple[Any, ...]:
    """Enough of a panel to tell that a rebuilt one holds the same numbers."""
    first, last = panel.dates[:, 0], panel.dates[:, -1]
    sums = (panel.close_a.sum(), panel.close_b.sum(), panel.volume_a.sum(), panel.volume_b.sum())
    return (
        panel.a,
        panel.b,
        panel.close_a.shape,
        first.tobytes(),
        last.tobytes(),
        np.array(sums).tobytes(),
    )


@dataclass(frozen=True)
class ChunkRecipe:
    """A :class:`ChunkJob` without its panel: the pairs and length to rebuild it from candles."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    days: int
    window_days: int
    volume_days: int
    fingerprint: tuple[Any, ...]
    job_fields: Mapping[str, Any]  # every ChunkJob field but the panel

    @classmethod
    def of(cls, job: ChunkJob) -> ChunkRecipe:
        panel = job.panel
        rest = {f.name: getattr(job, f.name) for f in fields(job) if f.name != "panel"}
        return cls(
            panel.a,
            panel.b,
            panel.n_days,
            panel.window_days,
            panel.volume_days,
            fingerprint(panel),
            rest,
        )

    def job(self, candles: Mapping[str, Candles]) -> ChunkJob:
        pairs = [align(candles[a], candles[b]) for a, b in zip(self.a, self.b, strict=True)]
        panel = replace(panel_of(pairs, self.days, self.window_days), volume_days=self.volume_days)
        if fingerprint(panel) != self.fingerprint:
            raise RuntimeError(
                "a Dask worker rebuilt a chunk's panel with other numbers than the client's; "
                "the client and the workers must run the same pairscreen version"
            )
        return ChunkJob(panel=panel, **self.job_fields)


def metric_fields(plugins: Plugins) -> tuple[str, ...]:
    """The metric fields a chunk's result holds, in output order (the plugins' load order)."""
    return tuple(f.name for metric in plugins.metrics for f in metric.fields)


def _difference(expected: tuple[str, ...], found: tuple[str, ...]) -> str:
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    parts = [f"missing metric fields {missing}"] if missing else []
    parts += [f"extra metric fields {extra}"] if extra else []
    return "; ".join(parts) or "the metric fields come in another order"


def evaluate_on_worker(
    recipe: ChunkRecipe, candles: Mapping[str, Candles], expected: tuple[str, ...]
) -> ChunkResult:
    """The task a Dask worker runs: one chunk, rebuilt from ``candles``, with the worker's
    own plugins.

    ``expected`` is the client's :func:`metric_fields`; a worker with other metrics refuses
    the chunk. (A missing strategy, scorer or screen filter already fails with a clear
    ``PluginError``.)
    """
    from pairscreen.engine.dask_worker import worker_plugins

    plugins = worker_plugins()
    found = metric_fields(plugins)
    if found != expected:
        raise PluginMismatch(
            f"a Dask worker's plugins differ from the client's: {_difference(expected, found)}. "
            "Install the same pairscreen plugins (and PAIRSCREEN_PLUGINS_DIR) on every worker."
        )
    return evaluate_chunk(plugins, recipe.job(candles))


def run_dask(
    jobs: Sequence[ChunkJob],
    scheduler_address: str,
    *,
    candles: Mapping[str, Candles],
    plugins: Plugins,
) -> list[ChunkResult]:
    """Run ``jobs`` on the cluster behind ``scheduler_address``; results in the jobs' order.

    ``candles`` are the ones the jobs' panels were built from (by ticker); ``plugins`` are the
    client's (the screen's) plugins; workers must have the same ones.
    """
    if not jobs:
        _check_address(scheduler_address)
        return []
    used = {t for job in jobs for t in (*job.panel.a, *job.panel.b)}
    shared = {t: candles[t] for t in sorted(used)}
    batches = run_dask_batches([jobs], scheduler_address, candles=shared, plugins=plugins)
    return [result for batch in batches for result in batch]


def run_dask_batches(
    batches: Iterable[Sequence[ChunkJob]],
    scheduler_address: str,
    *,
    candles: Mapping[str, Candles],
    plugins: Plugins,
) -> Iterator[list[ChunkResult]]:
    """Each batch of jobs on the cluster, its results in order, batch after batch.

    One connection and one copy of ``candles`` per worker serve every batch, so a screen of
    millions of pairs streams through the cluster a batch at a time: neither the client nor
    a worker holds more than a batch of panels and results.
    """
    _check_address(scheduler_address)
    try:
        from dask.distributed import Client

        from pairscreen.engine.dask_worker import WorkerPlugins
    except ImportError:
        raise MissingExtra(
            "the dask executor needs the dask extra: pip install 'pairscreen[dask]'"
        ) from None
    expected = metric_fields(plugins)
    with Client(scheduler_address, timeout=CONNECT_TIMEOUT_SECONDS, set_as_default=False) as client:
        client.register_plugin(WorkerPlugins())
        # One copy of the candles per worker, sent ahead rather than inside every task.
        [shared] = client.scatter([dict(candles)], broadcast=True)
        for jobs in batches:
            recipes = [ChunkRecipe.of(job) for job in jobs]
            futures = client.map(
                evaluate_on_worker, recipes, candles=shared, expected=expected, pure=False
            )
            results: list[ChunkResult] = client.gather(futures)
            yield results


def _check_address(scheduler_address: str) -> None:
    if not scheduler_address:
        raise ValueError("the dask executor needs a scheduler address, e.g. tcp://host:8786")
