"""Test plugin: a backtest strategy ``hook_hold`` that never trades."""

from __future__ import annotations

import numpy as np

from pairscreen import BacktestBatch, Leg, PairPanel, hookimpl


class Hold:
    name = "hook_hold"

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        n = panel.n_pairs
        return BacktestBatch(
            start_leg=start_leg,
            history_days=np.full(n, min(bt_days, panel.n_days - 1)),
            growth_pct=np.zeros(n),
            n_trades=np.zeros(n, dtype=int),
            max_drawdown_pct=np.zeros(n),
            buy_hold_growth_pct=np.full(n, np.nan),
            trades=tuple(() for _ in range(n)) if with_trades else None,
        )


@hookimpl
def pairscreen_register_strategies() -> list[Hold]:
    return [Hold()]
