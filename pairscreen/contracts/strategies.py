"""The backtest strategy and scorer contracts: both legs of a walk-forward backtest per pair,
and a score that ranks the survivors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Protocol, runtime_checkable

import numpy as np

from pairscreen.contracts.panel import Leg, PairPanel

__all__ = ["BacktestBatch", "Scorer", "Strategy", "Trade"]


@dataclass(frozen=True)
class Trade:
    """One swap of a backtest: the row index in the panel's days and the coin bought."""

    day_index: int
    day: date
    bought: Leg  # "A" when the strategy swapped into A, "B" when into B
    log_ratio: float  # the decision value r_{t-1} (r_t for a strategy deciding at the close)


@dataclass(frozen=True)
class BacktestBatch:
    """One backtest leg for every pair of a panel.

    ``buy_hold_growth_pct`` is NaN where buy-and-hold is not reported (short histories).
    ``trades`` is filled only when asked for (charts); the screen does not need it.
    ``history_days`` counts calendar days; ``observations`` the closes inside them (equal for
    two assets with a close every day, fewer for a pair mixing calendars).
    """

    start_leg: Leg
    history_days: np.ndarray  # int, calendar days actually simulated
    growth_pct: np.ndarray
    n_trades: np.ndarray  # int
    max_drawdown_pct: np.ndarray
    buy_hold_growth_pct: np.ndarray
    trades: tuple[tuple[Trade, ...], ...] | None = None
    # int, the closes simulated (the panel's last ones); None from a strategy that does not
    # say, which then is read as one close per simulated day
    observations: np.ndarray | None = None
    # The fee per swap (a fraction) at which the closed swaps (up to the last swap back into
    # the start coin) end where the leg started; NaN with fewer than breakeven_min_swaps
    # closed swaps, None when the strategy does not compute it.
    breakeven_fee: np.ndarray | None = None
    # int, the closed swaps breakeven_fee counts; None when the strategy does not say
    breakeven_swaps: np.ndarray | None = None
    # The open position's move in the start coin at the last close, percent before fees;
    # NaN when the leg ends in its start coin, None when the strategy does not say
    open_position_pct: np.ndarray | None = None
    # The fewest closed swaps the strategy gives a break-even fee for: the strategy decides,
    # the core only says it in a null fee's reason; None when the strategy does not say.
    breakeven_min_swaps: int | None = None

    def simulated_closes(self) -> np.ndarray:
        """The number of closes simulated per pair (``observations``, else ``history_days``)."""
        return self.history_days if self.observations is None else self.observations


@runtime_checkable
class Strategy(Protocol):
    """A backtest strategy run walk-forward on every pair of a panel."""

    @property
    def name(self) -> str: ...

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        """Simulate the last ``bt_days`` days starting fully in ``start_leg``."""
        ...


@runtime_checkable
class Scorer(Protocol):
    """Ranks surviving pairs: higher is better, 0-100."""

    @property
    def name(self) -> str: ...

    def score(self, metrics: Mapping[str, np.ndarray]) -> np.ndarray:
        """Score every pair from its metric arrays (all the panel's fields, by name)."""
        ...
