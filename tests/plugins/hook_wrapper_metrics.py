"""Test plugin: a ``wrapper=True`` implementation around ``pairscreen_register_metrics``.

It adds no metric of its own: it drops every metric named ``hook_*`` from what the other
plugins return, as a deployment keeping experimental metrics out of its API would.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from pairscreen import Metric, hookimpl


@hookimpl(wrapper=True)
def pairscreen_register_metrics() -> Generator[None, list[Sequence[Metric]], list[list[Metric]]]:
    answers = yield
    return [[m for m in answer if not m.name.startswith("hook_")] for answer in answers]
