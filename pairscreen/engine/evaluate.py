"""Metrics, filter and backtests over one panel: the computation the screen and a live
snapshot share, so both always give the same numbers."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pairscreen.hooks import Plugins
from pairscreen.types import BacktestBatch, MetricField, PairPanel, Strategy

log = logging.getLogger(__name__)

FILTER_CODES = ("insufficient_history", "hurst", "adf", "range_width", "touches", "depeg")


@dataclass(frozen=True)
class FilterRules:
    """The screening filter of DESIGN §3, checked in this order."""

    min_history_days: int = 200
    hurst_below: float = 0.5
    adf_below: float = 0.7
    min_range_width: float = 0.40
    min_touches: int = 2


@dataclass(frozen=True)
class MetricValues:
    """All metric fields of a panel, with their declarations (for types and nullability)."""

    values: dict[str, np.ndarray]
    fields: dict[str, MetricField]

    def row(self, i: int) -> dict[str, object]:
        """The JSON-ready metrics of row ``i``: NaN becomes None, integers become int."""
        out: dict[str, object] = {}
        for name, array in self.values.items():
            out[name] = json_value(array[i], self.fields[name])
        return out


def json_value(value: object, declared: MetricField) -> object:
    if declared.type == "string":
        return str(value)
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        return None
    return int(number) if declared.type == "integer" else number


def compute_metrics(plugins: Plugins, panel: PairPanel) -> MetricValues:
    """Every registered metric on the panel; a failing metric is logged and left out."""
    values: dict[str, np.ndarray] = {}
    fields: dict[str, MetricField] = {}
    for metric in plugins.metrics:
        try:
            result = metric.compute(panel)
            for declared in metric.fields:
                array = np.asarray(result[declared.name])
                if array.shape != (panel.n_pairs,):
                    raise ValueError(f"field {declared.name} has shape {array.shape}")
                values[declared.name] = array
                fields[declared.name] = declared
        except Exception:
            log.exception(
                "metric %r (plugin %s) failed; its fields are left out",
                metric.name,
                plugins.metrics.owner(metric.name),
            )
    return MetricValues(values, fields)


def filter_reasons(
    metrics: Mapping[str, np.ndarray],
    history_days: np.ndarray,
    depegged: np.ndarray,
    rules: FilterRules = FilterRules(),
) -> list[str]:
    """Per pair, ``""`` when it passes or ``"<code>: <text>"`` for the first failing filter."""
    reasons: list[str] = []
    for i in range(len(history_days)):
        reasons.append(_first_failure(metrics, i, int(history_days[i]), bool(depegged[i]), rules))
    return reasons


def _first_failure(
    m: Mapping[str, np.ndarray], i: int, days: int, depegged: bool, rules: FilterRules
) -> str:
    if days < rules.min_history_days:
        return (
            f"insufficient_history: {days} days of common history, "
            f"at least {rules.min_history_days} needed"
        )
    hurst = float(m["hurst"][i])
    if not (math.isfinite(hurst) and hurst < rules.hurst_below):
        return f"hurst: Hurst {hurst:.3f} is not below {rules.hurst_below} (not mean-reverting)"
    adf = float(m["adf_pvalue"][i])
    if not adf < rules.adf_below:
        return f"adf: ADF p-value {adf:.3f} is not below {rules.adf_below} (non-stationary)"
    width = float(m["range_width"][i])
    if not width >= rules.min_range_width:
        return (
            f"range_width: range width {width:.3f} is below {rules.min_range_width} "
            "(swap fees would dominate)"
        )
    low, high = int(m["touches_low"][i]), int(m["touches_high"][i])
    if low < rules.min_touches or high < rules.min_touches:
        return (
            f"touches: alternating touches {low}/{high} below {rules.min_touches} on each side "
            "(not genuinely oscillating)"
        )
    if depegged:
        return "depeg: a leg is in an active depeg event"
    return ""


def filter_code(reason: str) -> str:
    return reason.split(":", 1)[0] if reason else ""


def run_legs(
    strategy: Strategy, panel: PairPanel, bt_days: int, *, with_trades: bool = False
) -> dict[str, BacktestBatch]:
    """Both backtest legs: starting in A (counting A coins) and starting in B."""
    return {
        leg: strategy.run(panel, bt_days=bt_days, start_leg=leg, with_trades=with_trades)  # type: ignore[arg-type]
        for leg in ("A", "B")
    }
