"""The ``dask`` executor: screen chunks run on a Dask distributed cluster.

The cluster runs the very function the local executor's forked workers run (the screen's
``evaluate_pairs``: one chunk of pairs, named by two index arrays, aligned on the universe's
calendar matrix and put through the engine), so the screen is identical to the local one.

What travels: the work's shared input (the screen's spec: the calendar matrix of every
asset's candles, the assets, the rule choice; a few tens of MB for thousands of assets) goes
to every worker once; then each chunk is two small index arrays out and the chunk's outcome
(counts and compressed survivors) back. A bounded number of chunks is in flight at a time,
so neither the client nor a worker ever holds more than a few chunks, whatever the number
of pairs: the client builds no panel at all.

Plugins are never pickled: each worker loads them once, from its own environment (built-ins,
``pairscreen`` entry points, ``PAIRSCREEN_PLUGINS_DIR``), the first time it runs a chunk, and
keeps them in a Dask worker plugin (:mod:`pairscreen.engine.dask_worker`). Every worker
therefore needs pairscreen and the same plugins installed. Each chunk carries the client's
metric fields (in output order), and a worker whose plugins differ refuses the chunk with a
message naming the difference, rather than returning a screen computed with other metrics.

dask is imported lazily: it is the ``pairscreen[dask]`` extra.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from pairscreen.config import COMPONENTS
from pairscreen.errors import MissingExtra
from pairscreen.plugin_system.registry import Plugins

CONNECT_TIMEOUT_SECONDS = 30
IN_FLIGHT_CHUNKS = 64  # submitted and not yet collected; enough to keep every worker busy

_Shared = TypeVar("_Shared")
_Task = TypeVar("_Task")
_Result = TypeVar("_Result")


class PluginMismatch(RuntimeError):
    """A Dask worker has other plugins than the client that submitted the screen."""


def metric_fields(plugins: Plugins) -> tuple[str, ...]:
    """The metric fields a chunk's result holds, in output order (the plugins' load order)."""
    return tuple(f.name for metric in plugins.metrics for f in metric.fields)


def _difference(expected: tuple[str, ...], found: tuple[str, ...]) -> str:
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    parts = [f"missing metric fields {missing}"] if missing else []
    parts += [f"extra metric fields {extra}"] if extra else []
    return "; ".join(parts) or "the metric fields come in another order"


def run_on_worker(
    work: Callable[[Plugins, _Shared, _Task], _Result],
    shared: _Shared,
    task: _Task,
    expected: tuple[str, ...],
) -> _Result:
    """The task a Dask worker runs: ``work`` on one chunk, with the worker's own plugins.

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
    return work(plugins, shared, task)


def stream_dask(
    work: Callable[[Plugins, _Shared, _Task], _Result],
    shared: _Shared,
    tasks: Iterable[_Task],
    scheduler_address: str,
    *,
    plugins: Plugins,
    in_flight: int = IN_FLIGHT_CHUNKS,
) -> Iterator[_Result]:
    """``work(plugins, shared, task)`` for every task on the cluster behind
    ``scheduler_address``, each result as soon as it is done (in completion order: the
    caller merges them in any order).

    ``work`` must be a module-level function the workers can import; ``shared`` is sent to
    every worker once; ``plugins`` are the client's, and the workers must have the same.
    ``tasks`` is read lazily, ``in_flight`` at a time.
    """
    _check_address(scheduler_address)
    try:
        from dask.distributed import Client, as_completed

        from pairscreen.engine.dask_worker import WorkerPlugins
    except ImportError:
        raise MissingExtra(
            "the dask executor needs the dask extra: pip install 'pairscreen[dask]'"
        ) from None
    expected = metric_fields(plugins)
    with Client(scheduler_address, timeout=CONNECT_TIMEOUT_SECONDS, set_as_default=False) as client:
        chosen = {c.attribute: getattr(plugins.settings, c.attribute) for c in COMPONENTS}
        client.register_plugin(WorkerPlugins(plugins.tables, chosen))
        [remote] = client.scatter([shared], broadcast=True)  # once per worker, not per task
        todo = iter(tasks)

        def submit(task: _Task) -> object:
            return client.submit(run_on_worker, work, remote, task, expected, pure=False)

        first = [submit(task) for task in itertools.islice(todo, in_flight)]
        running = as_completed(first, loop=client.loop)  # this client, not a default one
        for future in running:
            result: _Result = future.result()
            for task in itertools.islice(todo, 1):
                running.add(submit(task))
            yield result


def _check_address(scheduler_address: str) -> None:
    if not scheduler_address:
        raise ValueError("the dask executor needs a scheduler address, e.g. tcp://host:8786")
