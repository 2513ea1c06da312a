"""Metrics and backtests over one panel: the computation the screen and a live snapshot
share, so both always give the same numbers (the filter is in ``filtering``)."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import SupportsFloat, cast

import numpy as np

from pairscreen.contracts import BacktestBatch, Metric, MetricField, PairPanel, Strategy, Trade
from pairscreen.engine.batch_panel import select_rows
from pairscreen.plugin_system.registry import OutOfContract, PluginFailed, Plugins, blamed

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
        return self.rows(np.array([i]))[0]

    def rows(self, index: np.ndarray) -> list[dict[str, object]]:
        """:meth:`row` of every row of ``index``, converted a column at a time (one
        ``tolist`` per field instead of a numpy scalar per value)."""
        columns = [
            (name, json_column(np.asarray(array)[index], self.fields[name]))
            for name, array in self.values.items()
        ]
        return [{name: column[k] for name, column in columns} for k in range(len(index))]


def json_column(values: np.ndarray, declared: MetricField) -> Sequence[object]:
    """:func:`json_value` of every value of a column, with the float conversion and the
    finiteness check done by numpy for the whole column (a survivor has ~40 fields)."""
    if declared.type == "string":
        return [str(v) for v in values.tolist()]
    numbers = values.astype(float, copy=False)  # what float() gives each value
    floats: list[float] = numbers.tolist()
    if declared.type == "integer":
        return [int(v) if math.isfinite(v) else None for v in floats]
    if not np.isfinite(numbers).all():
        return [v if math.isfinite(v) else None for v in floats]
    return floats


def json_value(value: object, declared: MetricField) -> object:
    if declared.type == "string":
        return str(value)
    number = float(cast(SupportsFloat, value))  # a numeric field's value is a numpy number
    if not math.isfinite(number):
        return None
    return int(number) if declared.type == "integer" else number


def calendar_parts(panel: PairPanel) -> list[np.ndarray] | None:
    """Row groups of a panel whose rows sit on different calendars (each group's rows have
    their closes on the same days counted back from their last close); None when every row
    already does, which is every panel the engine builds itself."""
    dates = np.asarray(panel.dates, dtype=panel.bar.dtype)  # days, or bars of its size
    if panel.n_pairs < 2 or dates.strides[0] == 0:
        return None
    offsets = (dates[:, -1:] - dates).astype(np.int64)
    if (offsets == offsets[0]).all():
        return None
    _, inverse = np.unique(offsets, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [np.flatnonzero(inverse == g) for g in range(int(inverse.max()) + 1)]


def compute_metrics(
    plugins: Plugins,
    panel: PairPanel,
    only: Sequence[Metric] | None = None,
    *,
    strict: bool = False,
) -> MetricValues:
    """Every registered metric (or those ``only`` names) on the panel; a failing metric is
    logged (one line naming its plugin, the traceback at INFO) and left out, or, when
    ``strict`` (the screen), raises
    :class:`~pairscreen.plugin_system.registry.PluginFailed` naming its plugin: a screen that
    left a metric out would publish wrong survivors in place of a good screen.

    Fields declared ``needs_full_window`` are NaN (served as null) for rows without a full
    band window, whatever the metric returned. A panel whose rows sit on different calendars
    is computed one calendar at a time, so a metric always sees windows that are the same
    columns in every row.
    """
    parts = calendar_parts(panel)
    if parts is None:
        return _compute_metrics(plugins, panel, only, strict)
    merged: MetricValues | None = None
    for rows in parts:
        part = _compute_metrics(plugins, select_rows(panel, rows), only, strict)
        if merged is None:
            merged = MetricValues({}, {}, {})
        order = [f.name for metric in plugins.metrics for f in metric.fields]
        merged = _scatter(merged, panel.n_pairs, rows, part, order)
    assert merged is not None
    return merged


def _scatter(
    into: MetricValues, n_pairs: int, rows: np.ndarray, part: MetricValues, order: Sequence[str]
) -> MetricValues:
    """``into`` with ``part``'s values written at ``rows`` (fields keep registration order)."""
    values = dict(into.values)
    for name, array in part.values.items():
        if name not in values:
            blank = np.nan if np.issubdtype(array.dtype, np.floating) else 0
            values[name] = np.full(n_pairs, blank, dtype=array.dtype)
        elif values[name].dtype != array.dtype and array.dtype.kind == "U":
            values[name] = values[name].astype(np.result_type(values[name], array))
        values[name][rows] = array
    ordered = {name: values[name] for name in order if name in values}
    ordered.update({k: v for k, v in values.items() if k not in ordered})
    return MetricValues(ordered, {**into.fields, **part.fields}, {**into.missing, **part.missing})


def _compute_metrics(
    plugins: Plugins, panel: PairPanel, only: Sequence[Metric] | None, strict: bool
) -> MetricValues:
    values: dict[str, np.ndarray] = {}
    fields: dict[str, MetricField] = {}
    missing: dict[str, str] = {}
    short = ~np.asarray(panel.has_full_window, dtype=bool)
    for metric in plugins.metrics if only is None else only:
        owner = plugins.metrics.owners.get(metric.name, type(metric).__module__)
        try:
            with blamed(owner, f"metric {metric.name!r}"):
                arrays = _metric_arrays(metric, panel, short)
        except PluginFailed as failed:
            if strict:
                raise
            # One line a person reads; the traceback only at INFO (``--verbose``): a
            # failing plugin is the plugin's bug, not a crash of the command.
            log.warning("%s; its fields are left out", failed)
            log.info("traceback of metric %r (plugin %s):\n%s", metric.name, owner, failed.trace)
            missing.update({f.name: f"metric {metric.name} failed" for f in metric.fields})
            continue
        values.update(arrays)
        fields.update({f.name: f for f in metric.fields})
    return MetricValues(values, fields, missing)


def metric_arrays(metric: Metric, panel: PairPanel) -> dict[str, np.ndarray]:
    """One metric on a panel of one calendar, held to its contract as the screen holds it
    (one value per pair, full-window fields NaN without a full window); what it raises
    propagates. The test kit's ``run_metric``."""
    return _metric_arrays(metric, panel, ~np.asarray(panel.has_full_window, dtype=bool))


def _metric_arrays(metric: Metric, panel: PairPanel, short: np.ndarray) -> dict[str, np.ndarray]:
    """The metric's declared fields on the panel, each checked to be one value per pair."""
    result = metric.compute(panel)
    arrays: dict[str, np.ndarray] = {}
    for declared in metric.fields:
        if declared.name not in result:
            raise OutOfContract(f"no array for its field {declared.name!r}")
        array = np.asarray(result[declared.name])
        if array.shape != (panel.n_pairs,):
            raise OutOfContract(
                f"field {declared.name!r} with shape {array.shape}, not ({panel.n_pairs},)"
            )
        if declared.needs_full_window and short.any():
            array = np.where(short, np.nan, array)
        arrays[declared.name] = array
    return arrays


def run_legs(
    strategy: Strategy, panel: PairPanel, bt_days: int, *, with_trades: bool = False
) -> dict[str, BacktestBatch]:
    """Both backtest legs: starting in A (counting A coins) and starting in B; a panel whose
    rows sit on different calendars runs one calendar at a time."""
    parts = calendar_parts(panel)
    if parts is None:
        return {
            leg: strategy.run(panel, bt_days=bt_days, start_leg=leg, with_trades=with_trades)
            for leg in ("A", "B")
        }
    out: dict[str, BacktestBatch] = {}
    for leg in ("A", "B"):
        runs = [
            strategy.run(
                select_rows(panel, rows), bt_days=bt_days, start_leg=leg, with_trades=with_trades
            )
            for rows in parts
        ]
        out[leg] = _merge_batches(panel.n_pairs, parts, runs)
    return out


def _merge_batches(
    n_pairs: int, parts: Sequence[np.ndarray], runs: Sequence[BacktestBatch]
) -> BacktestBatch:
    """One batch of ``n_pairs`` from the batches of row groups ``parts``."""

    def merged(name: str) -> np.ndarray:
        first = np.asarray(getattr(runs[0], name))
        out = np.empty(n_pairs, dtype=first.dtype)
        for rows, run in zip(parts, runs, strict=True):
            out[rows] = getattr(run, name)
        return out

    def optional(name: str) -> np.ndarray | None:
        return merged(name) if all(getattr(run, name) is not None for run in runs) else None

    trades = None
    if all(run.trades is not None for run in runs):
        per_row: list[tuple[Trade, ...]] = [()] * n_pairs
        for rows, run in zip(parts, runs, strict=True):
            assert run.trades is not None
            for i, row_trades in zip(rows.tolist(), run.trades, strict=True):
                per_row[i] = row_trades
        trades = tuple(per_row)
    return BacktestBatch(
        start_leg=runs[0].start_leg,
        history_days=merged("history_days"),
        growth_pct=merged("growth_pct"),
        n_trades=merged("n_trades"),
        max_drawdown_pct=merged("max_drawdown_pct"),
        buy_hold_growth_pct=merged("buy_hold_growth_pct"),
        trades=trades,
        observations=optional("observations"),
        breakeven_fee=optional("breakeven_fee"),
        breakeven_swaps=optional("breakeven_swaps"),
        open_position_pct=optional("open_position_pct"),
        breakeven_min_swaps=runs[0].breakeven_min_swaps,
    )


def leg_breakeven_fee(batch: BacktestBatch, i: int) -> float | None:
    """Row ``i``'s ``breakeven_fee``: None without swaps or when the strategy gives none."""
    if batch.breakeven_fee is None:
        return None
    value = float(batch.breakeven_fee[i])
    return value if np.isfinite(value) else None


def leg_breakeven(batch: BacktestBatch, i: int) -> dict[str, object]:
    """Row ``i``'s break-even fields of a leg: the fee (in-sample, closed swaps only), the
    closed swaps it counts, why it is null, and the open position apart."""
    fee = leg_breakeven_fee(batch, i)
    swaps = None if batch.breakeven_swaps is None else int(batch.breakeven_swaps[i])
    opened = None if batch.open_position_pct is None else float(batch.open_position_pct[i])
    if fee is not None:
        reason = ""
    elif batch.breakeven_fee is None:
        reason = "the strategy computes no break-even fee"
    elif swaps is None:
        reason = "no closed swaps"
    else:
        # the strategy's own minimum (``BacktestBatch.breakeven_min_swaps``), said as it is
        needed = batch.breakeven_min_swaps
        reason = f"{swaps} closed {'swap' if swaps == 1 else 'swaps'} in the backtest, " + (
            "too few for the strategy's break-even fee"
            if needed is None
            else f"at least {needed} needed"
        )
    return {
        "breakeven_fee": fee,
        "breakeven_swaps": swaps,
        "breakeven_fee_reason": reason,
        "open_position_pct": None if opened is None or not np.isfinite(opened) else opened,
    }
