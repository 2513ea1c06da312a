"""``breakeven_fee``: the highest fee per swap at which the pair's backtest still breaks even.

The screen's backtest (both legs over 360 days, with the universe's slippage) of the built-in
strategy the service runs (``PAIRSCREEN_STRATEGY``; the accumulation strategy when that names
a third-party one); each leg's break-even fee is the fee at which its same swaps end where
the leg started (solved exactly, see ``strategies.accumulation.breakeven_fee``). The pair's is
the lower of its two legs', so "this pair's edge survives up to 0.35 % per swap" holds for
both directions. It exists so that the ``min_breakeven_fee`` rule of the ``default`` filter
can read it; it is the same number the legs report under ``backtest``. The strategies cache
their legs on the panel, and the screen gives the survivors' metrics and legs one panel, so
the legs are simulated once for both.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from pairscreen import Metric, MetricField, PairPanel, Settings, Strategy, hookimpl
from pairscreen_plugins.strategies.accumulation import AccumulationStrategy
from pairscreen_plugins.strategies.kalman_band import KalmanBandStrategy
from pairscreen_plugins.strategies.ou_optimal import OUOptimalStrategy

log = logging.getLogger(__name__)

BT_DAYS = 360  # the screen's backtest window
BUILT_IN: dict[str, Strategy] = {
    "accumulation": AccumulationStrategy(),
    "ou_optimal": OUOptimalStrategy(),
    "kalman_band": KalmanBandStrategy(),  # its default options (a metric sees no other table)
}


@dataclass(frozen=True)
class BreakevenMetric:
    """The lower of the two legs' break-even fees of the screen's backtest."""

    strategy: Strategy
    name: str = "breakeven"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "breakeven_fee",
            description="The lower of the two backtest legs' break-even fees over the "
            "screen's 360-day backtest: the fee per swap (a fraction, 0.0035 = 0.35 %) up "
            "to which both legs' swaps still end no worse than they started; null when "
            "neither leg swaps.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        fees = []
        for leg in ("A", "B"):
            batch = self.strategy.run(panel, bt_days=BT_DAYS, start_leg=leg)
            if batch.breakeven_fee is None:
                fees.append(np.full(panel.n_pairs, np.nan))
            else:
                fees.append(np.asarray(batch.breakeven_fee, dtype=float))
        both = np.stack(fees)
        lowest = np.where(np.isnan(both), np.inf, both).min(axis=0)
        return {"breakeven_fee": np.where(np.isinf(lowest), np.nan, lowest)}


@hookimpl
def pairscreen_register_metrics(settings: Settings) -> list[Metric]:
    """The break-even fee of the service's strategy."""
    strategy = BUILT_IN.get(settings.strategy)
    if strategy is None:
        log.info(
            "breakeven_fee uses the accumulation strategy: %r is not a built-in strategy",
            settings.strategy,
        )
        strategy = BUILT_IN["accumulation"]
    return [BreakevenMetric(strategy)]
