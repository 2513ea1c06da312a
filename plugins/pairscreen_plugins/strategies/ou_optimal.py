"""The ``ou_optimal`` backtest: swaps at Bertram's optimal OU levels, walk-forward.

On every simulated day ``t`` the log-ratio of the ``L`` calendar days strictly before ``t``
(the band window the accumulation strategy uses, its common closes) is fitted as an OU
process (the exact conditional MLE of ``_ou``) and Bertram's entry and exit levels are solved
for the round-trip cost of that day's swaps (``-2 ln(1 - fee - slippage)``). Holding the
start coin, the leg swaps into the other when ``r[t-1]`` reaches the exit level (the start
coin is dear); holding the other, it swaps back when ``r[t-1]`` falls to the entry level. No
fit (the window does not mean-revert) means no signal that day. Swaps execute at day-``t``
closes, counted in coins exactly as the accumulation strategy counts them (same fee,
slippage and bookkeeping).

The rolling fits come from running sums: each window's sums are differences of cumulative
sums of the log-ratio less its first window's first value, so day ``t``'s fit reads no value
after ``t - 1`` (tests/test_no_lookahead.py checks it bit for bit), and a window of any
length costs the same (a pair mixing calendars has bands of varying length); the time step
is the window's mean spacing in calendar days (1 for a close every day).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import (
    BacktestBatch,
    Leg,
    PairPanel,
    Strategy,
    days_between,
    hookimpl,
)
from pairscreen_plugins.metrics._ou import bertram_bands, ou_from_ar1, round_trip_cost
from pairscreen_plugins.strategies.accumulation import (
    FEE,
    Columns,
    _mirror_log_ratio,
    columns,
    hold_sequence,
    once_per_panel,
    plan_of,
    walk_forward,
)


@dataclass(frozen=True)
class Levels:
    """Per pair and simulated day: the OU entry and exit levels in the leg's orientation."""

    entry: np.ndarray
    exit: np.ndarray


def rolling_levels(
    ratio: np.ndarray, dates: np.ndarray, cost: np.ndarray, starts: np.ndarray, stops: np.ndarray
) -> Levels:
    """Bertram's levels for each simulated day from the values of its band window.

    ``ratio`` and ``dates`` hold each row's values ``r[base .. n-2]``; day ``j``'s window is
    ``ratio[:, starts[j] : stops[j]]`` (its length may vary from day to day: a pair mixing
    calendars), and ``cost`` (rows, simulated) is each day's round-trip cost. Day ``j``'s fit
    reads that window only; a window of fewer than three values gives no fit (NaN levels).
    """
    rows = ratio.shape[0]
    z = ratio - ratio[:, :1]  # centred on a past value: the sums stay small, nothing ahead

    def running(values: np.ndarray) -> np.ndarray:
        out = np.zeros((rows, values.shape[1] + 1))
        np.cumsum(values, axis=1, out=out[:, 1:])
        return out

    level = running(z)
    square = running(z * z)
    cross = running(z[:, :-1] * z[:, 1:])
    lo = np.asarray(starts, dtype=np.intp)
    hi = np.maximum(np.asarray(stops, dtype=np.intp), lo + 1)  # an empty window: no fit
    m = hi - lo - 1  # transitions per window
    ok = m >= 2
    last = hi - 1
    sum_x = level[:, last] - level[:, lo]
    sum_y = level[:, hi] - level[:, lo + 1]
    sum_xx = square[:, last] - square[:, lo]
    sum_yy = square[:, hi] - square[:, lo + 1]
    sum_xy = cross[:, last] - cross[:, lo]
    with np.errstate(divide="ignore", invalid="ignore"):
        sxx = sum_xx - sum_x * sum_x / m
        sxy = sum_xy - sum_x * sum_y / m
        syy = sum_yy - sum_y * sum_y / m
        b = np.where(ok & (sxx > 0), sxy / sxx, np.nan)
        a = sum_y / m - b * sum_x / m
        s2 = np.maximum(syy - b * sxy, 0.0) / m
        span = days_between(dates[:, last], dates[:, lo])
        mean, speed, sigma = ou_from_ar1(b, a, s2, span / m)
    bands = bertram_bands(mean + ratio[:, :1], speed, sigma, cost)
    return Levels(bands.entry, bands.exit)


def _levels(panel: PairPanel, cols: Columns, rows: slice, leg: Leg, fee: float) -> Levels:
    base = int(cols.lo.min(initial=cols.first))
    columns = slice(base, panel.n_days - 1)  # r[base .. n-2]: every day's window
    if leg == "A":
        ratio = panel.log_ratio[rows, columns]
    else:
        ratio = _mirror_log_ratio(panel, columns, rows)
    slippage = panel.swap_slippage[rows, cols.first :]
    cost = round_trip_cost(fee + slippage)
    starts = cols.lo - base
    stops = cols.first + np.arange(cols.lo.size) - base
    return rolling_levels(ratio, panel.dates[rows, columns], cost, starts, stops)


@dataclass(frozen=True)
class OUOptimalStrategy:
    """Walk-forward swaps at Bertram's optimal OU entry and exit levels."""

    name: str = "ou_optimal"
    fee: float = FEE  # per swap, as the accumulation strategy's

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        return once_per_panel(self, self._run, panel, bt_days, start_leg, with_trades)

    def _run(
        self, panel: PairPanel, bt_days: int, start_leg: Leg, with_trades: bool
    ) -> BacktestBatch:
        p = plan_of(panel, bt_days)
        cols = columns(panel, p)

        def holds(rows: slice, decided_on: np.ndarray) -> np.ndarray:
            levels = _levels(panel, cols, rows, start_leg, self.fee)
            with np.errstate(invalid="ignore"):
                return hold_sequence(decided_on <= levels.entry, decided_on >= levels.exit)

        return walk_forward(panel, p, cols, start_leg, holds, fee=self.fee, with_trades=with_trades)


@hookimpl
def pairscreen_register_strategies() -> list[Strategy]:
    """The OU-optimal strategy."""
    return [OUOptimalStrategy()]
