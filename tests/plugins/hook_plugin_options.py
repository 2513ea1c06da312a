"""Test plugin: a metric ``lookback_change`` whose lookback is the plugin's own option.

It declares ``lookback_days`` (default 30) and ``scale`` (default 1.0) through
``pairscreen_plugin_options``; a universe file sets them in its ``[plugins.<name>]`` table
and the register hook gets the values as ``options``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pairscreen import Metric, MetricField, PairPanel, PluginOption, hookimpl


class LookbackChange:
    name = "lookback_change"
    fields = (MetricField("lookback_change", "number", "log-ratio change over the lookback"),)

    def __init__(self, days: int, scale: float) -> None:
        self.days = days
        self.scale = scale

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        r = panel.log_ratio
        return {"lookback_change": self.scale * (r[:, -1] - r[:, -1 - self.days])}


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    return [
        PluginOption("lookback_days", 30, "days the change is measured over"),
        PluginOption("scale", 1.0, "a factor applied to the change"),
    ]


@hookimpl
def pairscreen_register_metrics(options: Mapping[str, Any]) -> list[Metric]:
    return [LookbackChange(int(options["lookback_days"]), float(options["scale"]))]
