"""The chart renderer contract: the data of one pair's chart, drawn as PNG bytes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np

from pairscreen.contracts.strategies import Trade

__all__ = ["ChartData", "ChartRenderer"]


@dataclass(frozen=True)
class ChartData:
    """Everything a renderer needs to draw one pair, computed by the engine."""

    a: str
    b: str
    bt_days: int
    dates: np.ndarray  # datetime64[D] (intraday: the bar's unit), the drawn days or bars
    log_ratio: np.ndarray
    bands: Mapping[str, np.ndarray]  # "p5", "p15", "p85", "p95": rolling bands, NaN before
    current: float
    position: float
    zone: str
    backtest_start_index: int  # index into dates of the first simulated day
    trades: Mapping[str, tuple[Trade, ...]]  # "A" and "B" legs; day_index into dates
    data_time: datetime  # the close of the last candle drawn
    note: str = ""  # shown when set, one line per "\n": a depegged leg, synthetic data
    # "low", "high": the backtest's swap levels in log-ratio, NaN before the backtest window
    triggers: Mapping[str, np.ndarray] = field(default_factory=dict)
    # "entry", "exit": today's optimal OU levels (Bertram) in log-ratio, when the metrics give
    # them (the ``ou_entry`` / ``ou_exit`` fields); absent when the pair has no OU fit
    ou_levels: Mapping[str, float] = field(default_factory=dict)
    # "spread", "upper", "lower", "exit": a strategy's own decision line and its levels per
    # drawn day, for a panel under the ratio (the ``kalman_band`` strategy's Kalman spread and
    # its ±entry·√Q levels), NaN where undefined; empty for a strategy that draws none
    spread_lines: Mapping[str, np.ndarray] = field(default_factory=dict)


@runtime_checkable
class ChartRenderer(Protocol):
    """Draws a pair chart as PNG bytes. Must be thread-safe (no global plotting state)."""

    @property
    def name(self) -> str: ...

    def render(self, chart: ChartData, *, width_px: int, height_px: int) -> bytes: ...
