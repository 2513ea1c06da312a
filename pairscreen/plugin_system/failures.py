"""How a plugin's failure is told: a broken contract at load time (:class:`PluginError`) or a
component that raised while a run computed (:class:`PluginFailed`, via :func:`blamed`).

Apart from the registry so that every part of the plugin machinery can raise them without
importing the facade.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator


class PluginError(Exception):
    """A plugin broke the contract (a duplicate name, a missing component, a wrong type)."""


class PluginFailed(Exception):
    """A plugin's component raised, or answered out of contract, while a run computed.

    Carries the plugin, the component and the traceback as text, so it crosses a worker's
    pipe (or Dask) whole and the command line can name the culprit and, with ``--verbose``,
    show where it failed.
    """

    def __init__(self, plugin: str, component: str, problem: str, trace: str = "") -> None:
        super().__init__(plugin, component, problem, trace)
        self.plugin = plugin
        self.component = component
        self.problem = problem
        self.trace = trace

    def __str__(self) -> str:
        return f"plugin {self.plugin!r} failed: {self.component} {self.problem}"


class OutOfContract(Exception):
    """A component answered, but not what its kind's contract says (a wrong shape)."""


@contextlib.contextmanager
def blamed(plugin: str, component: str) -> Iterator[None]:
    """Turn any failure inside into a :class:`PluginFailed` naming ``plugin`` and
    ``component`` (``"metric 'hurst'"``), with the traceback kept as text."""
    try:
        yield
    except PluginFailed:
        raise
    except OutOfContract as exc:
        raise PluginFailed(plugin, component, f"answered {exc}", traceback.format_exc()) from exc
    except Exception as exc:
        problem = f"raised {type(exc).__name__}: {exc}"
        raise PluginFailed(plugin, component, problem, traceback.format_exc()) from exc
