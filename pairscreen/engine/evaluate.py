"""Metrics and backtests over one panel: the computation the screen and a live snapshot
share, so both always give the same numbers (the filter is in ``filtering``)."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import SupportsFloat, cast

import numpy as np

from pairscreen.hooks import Plugins
from pairscreen.types import BacktestBatch, Metric, MetricField, PairPanel, Strategy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MetricValues:
    """All metric fields of a panel, with their declarations (for types and nullability).

    ``missing`` names, for every field of a metric that failed on this panel, why it is
    absent from ``values`` (``"metric variance_ratio failed"``).
    """

    values: dict[str, np.ndarray]
    fields: dict[str, MetricField]
    missing: dict[str, str] = field(default_factory=dict)

    def with_rows(
        self, n_pairs: int, rows: np.ndarray, part: MetricValues, order: Sequence[str]
    ) -> MetricValues:
        """These values plus ``part``'s, which were computed on ``rows`` of the panel only,
        with the fields in ``order`` (the metrics' registration order).

        ``part``'s fields fill those rows; the panel's other rows get NaN (0 for an integer
        or text field) and must not be read: the screen publishes only the rows it computed.
        """
        merged = dict(self.values)
        for name, array in part.values.items():
            blank = np.nan if np.issubdtype(array.dtype, np.floating) else 0
            full = np.full(n_pairs, blank, dtype=array.dtype)
            full[rows] = array
            merged[name] = full
        values = {name: merged[name] for name in order if name in merged}
        return MetricValues(
            values, {**self.fields, **part.fields}, {**self.missing, **part.missing}
        )

    def row(self, i: int) -> dict[str, object]:
        """The JSON-ready metrics of row ``i``: NaN becomes None, integers become int."""
        out: dict[str, object] = {}
        for name, array in self.values.items():
            out[name] = json_value(array[i], self.fields[name])
        return out


def json_value(value: object, declared: MetricField) -> object:
    if declared.type == "string":
        return str(value)
    number = float(cast(SupportsFloat, value))  # a numeric field's value is a numpy number
    if not math.isfinite(number):
        return None
    return int(number) if declared.type == "integer" else number


def compute_metrics(
    plugins: Plugins, panel: PairPanel, only: Sequence[Metric] | None = None
) -> MetricValues:
    """Every registered metric (or those ``only`` names) on the panel; a failing metric is
    logged and left out.

    Fields declared ``needs_full_window`` are NaN (served as null) for rows without a full
    band window, whatever the metric returned.
    """
    values: dict[str, np.ndarray] = {}
    fields: dict[str, MetricField] = {}
    missing: dict[str, str] = {}
    short = ~np.asarray(panel.has_full_window, dtype=bool)
    for metric in plugins.metrics if only is None else only:
        try:
            result = metric.compute(panel)
            arrays: dict[str, np.ndarray] = {}
            for declared in metric.fields:
                array = np.asarray(result[declared.name])
                if array.shape != (panel.n_pairs,):
                    raise ValueError(f"field {declared.name} has shape {array.shape}")
                if declared.needs_full_window and short.any():
                    array = np.where(short, np.nan, array)
                arrays[declared.name] = array
        except Exception:
            log.exception(
                "metric %r (plugin %s) failed; its fields are left out",
                metric.name,
                plugins.metrics.owner(metric.name),
            )
            missing.update({f.name: f"metric {metric.name} failed" for f in metric.fields})
            continue
        values.update(arrays)
        fields.update({f.name: f for f in metric.fields})
    return MetricValues(values, fields, missing)


def run_legs(
    strategy: Strategy, panel: PairPanel, bt_days: int, *, with_trades: bool = False
) -> dict[str, BacktestBatch]:
    """Both backtest legs: starting in A (counting A coins) and starting in B."""
    return {
        leg: strategy.run(panel, bt_days=bt_days, start_leg=leg, with_trades=with_trades)
        for leg in ("A", "B")
    }


def leg_breakeven_fee(batch: BacktestBatch, i: int) -> float | None:
    """Row ``i``'s ``breakeven_fee``: None without swaps or when the strategy gives none."""
    if batch.breakeven_fee is None:
        return None
    value = float(batch.breakeven_fee[i])
    return value if np.isfinite(value) else None
