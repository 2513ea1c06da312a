"""Test plugin: a screen filter ``accept_all`` whose one rule passes every pair it is shown.

Under it, only the core's guarantees (stale legs, too little history, an active depeg event)
can reject a pair: the tests use it to show that no filter can turn them off.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pairscreen import Filter, FilterContext, hookimpl


class Anything:
    code = "never"
    inputs: tuple[str, ...] = ()

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        return np.ones(len(context.history_days), dtype=bool)

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        return "this rule passes every pair"


class AcceptAll:
    name = "accept_all"
    thresholds: Mapping[str, float] = {}
    rules = (Anything(),)


@hookimpl
def pairscreen_register_filters() -> list[Filter]:
    return [AcceptAll()]
