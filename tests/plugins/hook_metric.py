"""Test plugin: a metric ``hook_last_log_ratio``, the pair's current log-ratio."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pairscreen import MetricField, PairPanel, hookimpl


class LastLogRatio:
    name = "hook_last_log_ratio"
    fields = (MetricField("hook_last_log_ratio", description="ln(A/B) today"),)

    def compute(self, panel: PairPanel) -> Mapping[str, np.ndarray]:
        return {"hook_last_log_ratio": panel.r_current}


@hookimpl
def pairscreen_register_metrics() -> list[LastLogRatio]:
    return [LastLogRatio()]
