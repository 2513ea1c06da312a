"""The ``kalman_band`` backtest: swaps on the Kalman spread's z, walk-forward, in coins.

The spread is the Kalman filter's forecast error of the ``kalman`` metric (Chan's dynamic
hedge ratio, ``_kalman``): ``e_t = ln A_t - (β ln B_t + alpha)`` with the state before close
``t``, and ``z_t = e_t / √Q_t`` in its own standard deviations. Holding the start coin, the
leg swaps all of it into the other coin at day ``t``'s close when ``z_t > entry`` (the start
coin is dear against ``β`` of the other); holding the other, it swaps all back when
``z_t < exit``. The hedge ratio weighs the spread that decides, not the amount swapped: a
coin-accumulation portfolio holds one coin at a time (no cash, no short leg), so a swap is
all-in, counted in coins exactly as the accumulation strategy counts them (same fee,
slippage and bookkeeping).

No lookahead: the filter starts at the first close of the first simulated day's band window
(the ``L`` calendar days before it) from ``β = alpha = 0``, and day ``t``'s ``z_t`` is read
from closes up to ``t`` only; the decision is taken at ``t``'s close and the swap executes
at that close. Leg "B" is the same strategy on (B, A): its filter regresses ``ln B`` on
``ln A``. Every pair of a block runs the filter at once (one loop over the closes).

Defaults: ``entry = 1`` and ``exit = 0`` standard deviations, Chan's (Algorithmic Trading,
2013, the Kalman-filter example: enter at one standard deviation of the forecast error,
exit at its mean); ``q`` and ``r`` the ``kalman`` metric's defaults.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pairscreen.contracts import BacktestBatch, Leg, PairPanel, PluginOption, Strategy, hookimpl
from pairscreen_plugins.metrics._kalman import kalman_filter
from pairscreen_plugins.metrics.kalman import DEFAULT_Q, DEFAULT_R, MIN_CLOSES
from pairscreen_plugins.strategies.accumulation import (
    FEE,
    Columns,
    columns,
    hold_sequence,
    plan_of,
    walk_forward,
)

DEFAULT_ENTRY = 1.0  # Chan: enter one standard deviation of the forecast error away
DEFAULT_EXIT = 0.0  # Chan: exit when the forecast error is back at its mean


@dataclass(frozen=True)
class Spread:
    """Per pair and simulated day: the filter's forecast error ``e`` and its standard
    deviation ``√Q``, NaN on days whose filter has seen fewer than 31 closes."""

    spread: np.ndarray
    std: np.ndarray

    @property
    def z(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            # numpy types ufuncs on untyped-dtype arrays as Any
            return np.asarray(self.spread / self.std)


def spread_path(
    panel: PairPanel, cols: Columns, rows: slice, leg: Leg, *, q: float, r: float
) -> Spread:
    """The filter run from the first simulated day's band window on, per simulated day.

    ``leg`` "A" regresses ``ln A`` on ``ln B``, "B" ``ln B`` on ``ln A``. Day ``first + k``
    reads the closes ``lo[0] .. first + k`` only (one recursion, kept from ``first``).
    """
    start = int(cols.lo[0]) if cols.lo.size else cols.first
    own, other = (panel.close_a, panel.close_b) if leg == "A" else (panel.close_b, panel.close_a)
    log_y, log_x = np.log(own[rows, start:]), np.log(other[rows, start:])
    keep_from = cols.first - start
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        run = kalman_filter(log_y, log_x, q=q, r=r, burn_in=1, keep_from=keep_from)
        assert run.spreads is not None and run.spread_vars is not None
        seen = keep_from + 1 + np.arange(run.spreads.shape[1])  # closes the filter has read
        ok = (seen >= MIN_CLOSES) & np.isfinite(run.spread_vars) & (run.spread_vars > 0)
        std = np.where(ok, np.sqrt(np.where(ok, run.spread_vars, 1.0)), np.nan)
        return Spread(np.where(ok, run.spreads, np.nan), std)


@dataclass(frozen=True)
class KalmanBandStrategy:
    """Walk-forward swaps when the Kalman spread's z crosses ``entry`` and ``exit``."""

    name: str = "kalman_band"
    fee: float = FEE  # per swap, as the accumulation strategy's
    entry: float = DEFAULT_ENTRY
    exit: float = DEFAULT_EXIT
    q: float = DEFAULT_Q
    r: float = DEFAULT_R

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        key = (
            f"backtest:{self.name}:{self.fee!r}:{self.entry!r}:{self.exit!r}:{self.q!r}:"
            f"{self.r!r}:{bt_days}:{start_leg}:{with_trades}"
        )
        return panel.cached(key, lambda: self._run(panel, bt_days, start_leg, with_trades))

    def _run(
        self, panel: PairPanel, bt_days: int, start_leg: Leg, with_trades: bool
    ) -> BacktestBatch:
        p = plan_of(panel, bt_days)
        cols = columns(panel, p)

        def holds(rows: slice, decided_on: np.ndarray) -> np.ndarray:
            z = spread_path(panel, cols, rows, start_leg, q=self.q, r=self.r).z
            with np.errstate(invalid="ignore"):
                return hold_sequence(z < self.exit, z > self.entry)

        return walk_forward(
            panel,
            p,
            cols,
            start_leg,
            holds,
            fee=self.fee,
            with_trades=with_trades,
            decide_at_close=True,
        )

    def chart_lines(self, panel: PairPanel, bt_days: int) -> dict[str, np.ndarray]:
        """Leg A's spread of the first pair and its ``±entry`` and ``exit`` levels in log
        units (``entry·√Q_t`` ...), one value per column of the panel, NaN before the
        backtest window: what the chart draws in a panel under the ratio."""
        p = plan_of(panel, bt_days)
        cols = columns(panel, p)
        out = {name: np.full(panel.n_days, np.nan) for name in ("spread", "upper", "lower", "exit")}
        if cols.lo.size == 0:
            return out
        path = spread_path(panel, cols, slice(0, 1), "A", q=self.q, r=self.r)
        std = path.std[0]
        out["spread"][cols.first :] = path.spread[0]
        out["upper"][cols.first :] = self.entry * std
        out["lower"][cols.first :] = -self.entry * std
        out["exit"][cols.first :] = self.exit * std
        return out


def _number(options: Mapping[str, Any], name: str) -> float:
    value = float(options[name])
    if not math.isfinite(value):
        raise ValueError(f"{name} = {value} must be a finite number")
    return value


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The z levels and the filter's noise variances."""
    return [
        PluginOption(
            "entry",
            DEFAULT_ENTRY,
            "swap out of the held start coin when the Kalman spread's z rises above this "
            "(standard deviations, > 0; default 1, Chan's)",
        ),
        PluginOption(
            "exit",
            DEFAULT_EXIT,
            "swap back when z falls below this (standard deviations, below entry; default "
            "0, Chan's)",
        ),
        PluginOption(
            "q",
            DEFAULT_Q,
            "the filter's state noise variance per close (as the kalman metric's q; default 1e-4)",
        ),
        PluginOption(
            "r",
            DEFAULT_R,
            "the filter's observation noise variance (as the kalman metric's r; default 1e-3)",
        ),
    ]


@hookimpl
def pairscreen_register_strategies(options: Mapping[str, Any]) -> list[Strategy]:
    """The strategy with the table's levels, refused unless ``entry > 0``, ``exit < entry``
    (a day could otherwise ask for both coins), ``q > 0`` (with the start's zero covariance
    q = 0 never moves the state from 0, as for the metric) and ``r > 0``."""
    entry, exit_, q, r = (_number(options, n) for n in ("entry", "exit", "q", "r"))
    if entry <= 0:
        raise ValueError(f"entry = {entry} must be above 0 standard deviations")
    if exit_ >= entry:
        raise ValueError(f"exit = {exit_} must be below entry = {entry}")
    if q <= 0:
        raise ValueError(f"q = {q} must be a finite number > 0")
    if r <= 0:
        raise ValueError(f"r = {r} must be a finite number > 0")
    return [KalmanBandStrategy(entry=entry, exit=exit_, q=q, r=r)]
