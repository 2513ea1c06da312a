"""The fewest closed swaps a break-even fee needs is the strategy's to decide: its batch
carries it (``BacktestBatch.breakeven_min_swaps``) and the core only repeats it in a null
fee's reason, for the built-in accumulation strategy (3) as for one that asks for 5."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from pairscreen_plugins.strategies.accumulation import AccumulationStrategy

from pairscreen import BacktestBatch, Leg, PairPanel
from pairscreen.engine.evaluate import leg_breakeven
from pairscreen.testing import pair_panel, run_strategy


@dataclass(frozen=True)
class FiveSwaps:
    """A strategy that closed 4 swaps on every pair and gives a fee from 5 on."""

    name: str = "five_swaps"

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        n = panel.n_pairs
        return BacktestBatch(
            start_leg=start_leg,
            history_days=np.full(n, bt_days),
            growth_pct=np.zeros(n),
            n_trades=np.full(n, 8),
            max_drawdown_pct=np.zeros(n),
            buy_hold_growth_pct=np.full(n, np.nan),
            breakeven_fee=np.full(n, np.nan),
            breakeven_swaps=np.full(n, 4),
            breakeven_min_swaps=5,
        )


def _panel() -> PairPanel:
    days = np.arange(900)
    return pair_panel(100 + np.sin(days / 9), 50 + np.cos(days / 13))


def test_a_strategy_that_declares_five_swaps_gets_a_reason_saying_five() -> None:
    legs = run_strategy(FiveSwaps(), _panel(), 360)
    for leg in ("A", "B"):
        said = leg_breakeven(legs[leg], 0)
        assert said["breakeven_fee"] is None and said["breakeven_swaps"] == 4
        assert said["breakeven_fee_reason"] == "4 closed swaps in the backtest, at least 5 needed"


def test_the_accumulation_strategy_says_its_own_three() -> None:
    flat = pair_panel(np.full(900, 100.0), np.full(900, 50.0))  # a constant ratio: no swap
    legs = run_strategy(AccumulationStrategy(), flat, 360)
    assert legs["A"].breakeven_min_swaps == 3
    said = leg_breakeven(legs["A"], 0)
    assert said["breakeven_fee"] is None
    assert said["breakeven_fee_reason"] == "0 closed swaps in the backtest, at least 3 needed"


def test_a_strategy_that_does_not_say_its_minimum_gets_no_invented_number() -> None:
    legs = run_strategy(FiveSwaps(), _panel(), 360)
    silent = replace(legs["A"], breakeven_min_swaps=None)
    assert leg_breakeven(silent, 0)["breakeven_fee_reason"] == (
        "4 closed swaps in the backtest, too few for the strategy's break-even fee"
    )
