"""A Dask worker's own pairscreen plugins, held by the worker rather than by a module.

Plugins are never pickled: :func:`~pairscreen.engine.dask_executor.stream_dask` registers a
:class:`WorkerPlugins` with the cluster (once: it is idempotent), each worker keeps it for its
lifetime, and the first chunk a worker runs loads the plugins from the worker's own
environment (built-ins, ``pairscreen`` entry points, ``PAIRSCREEN_PLUGINS_DIR``).

This module imports ``distributed``: only :mod:`~pairscreen.engine.dask_executor`'s functions
import it, on the client when a screen runs on Dask, and on the workers.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from distributed import Worker, WorkerPlugin, get_worker

from pairscreen.config import load_settings
from pairscreen.engine.allocator import reuse_large_blocks
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.registry import Plugins

NAME = "pairscreen-plugins"


class WorkerPlugins(WorkerPlugin):
    """The plugins of the worker it is registered with, loaded on first use."""

    name = NAME
    idempotent = True  # registering it again (every screen does) keeps the loaded one

    def __init__(
        self,
        tables: Mapping[str, Mapping[str, Any]] | None = None,
        components: Mapping[str, str] | None = None,
    ) -> None:
        self.plugins: Plugins | None = None
        self.tables = {name: dict(table) for name, table in (tables or {}).items()}
        # the client's resolved components (strategy, scorer ...): the worker has no universe
        self.components = dict(components or {})

    def setup(self, worker: Worker) -> None:
        self._loading = threading.Lock()  # a worker runs tasks on a thread pool
        reuse_large_blocks()

    def get(self) -> Plugins:
        with self._loading:
            if self.plugins is None:
                # A worker is a process of its own: its settings come from its environment.
                settings = load_settings(None, flags=None, universe=None, **self.components)
                # The plugins' own options come from the client's universe file.
                self.plugins = Plugins(load_plugins(settings), settings, self.tables)
            return self.plugins

    def __getstate__(self) -> dict[str, Any]:
        # travels to the workers without plugins and without its lock
        return {"plugins": None, "tables": self.tables, "components": self.components}


def worker_plugins(worker: Worker | None = None) -> Plugins:
    """The plugins of ``worker`` (default: the worker running this task)."""
    plugin = (worker or get_worker()).plugins[NAME]
    assert isinstance(plugin, WorkerPlugins)
    return plugin.get()


def loaded_on(worker: Worker) -> bool:
    """Whether ``worker`` has loaded its plugins (it has run a chunk)."""
    plugin = worker.plugins.get(NAME)
    return isinstance(plugin, WorkerPlugins) and plugin.plugins is not None
