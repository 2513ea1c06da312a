"""``breakeven_fee``: the highest fee per swap at which the pair's backtest still breaks even.

The screen's backtest (both legs over 360 days, with the universe's slippage) of the built-in
strategy the service runs (``settings.strategy``, as ``[components] strategy`` or
``PAIRSCREEN_STRATEGY`` chose it; the accumulation strategy when that names
a third-party one); each leg's break-even fee is the fee at which its same swaps end where
the leg started (solved exactly, see ``strategies.accumulation.breakeven_fee``). The pair's is
the lower of its two legs', so "this pair's edge survives up to 0.35 % per swap" holds for
both directions. It is an in-sample figure: the swaps it counts are the history the pair was
chosen on, and only closed swaps count (at least three of them; an open position's paper gain
is not an edge). It exists so that the ``min_breakeven_fee`` rule of the ``default`` filter
can read it; it is the same number the legs report under ``backtest``. The strategies cache
their legs on the panel, and the screen gives the survivors' metrics and legs one panel, so
the legs are simulated once for both.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, Settings, Strategy, hookimpl
from pairscreen_plugins.strategies.accumulation import MIN_CLOSED_SWAPS, AccumulationStrategy
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
            description="In-sample history figure: the lower of the two backtest legs' "
            "break-even fees over the screen's 360-day backtest, the fee per swap (a "
            "fraction, 0.0035 = 0.35 %) up to which a leg's closed swaps (up to its last "
            "swap back into its start coin; an open position is not counted) still end no "
            "worse than they started; null with breakeven_fee_reason when neither leg closed "
            f"{MIN_CLOSED_SWAPS} swaps.",
            nullable=True,
        ),
        MetricField(
            "breakeven_swaps",
            type="integer",
            description="The closed swaps breakeven_fee counts (of the leg it comes from; "
            "when it is null, the more of the two legs').",
        ),
        MetricField(
            "breakeven_fee_reason",
            type="string",
            description="Why breakeven_fee is null (too few closed swaps in the backtest); "
            "empty when it is set.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        fees, swaps = [], []
        for leg in ("A", "B"):
            batch = self.strategy.run(panel, bt_days=BT_DAYS, start_leg=leg)
            nan = np.full(panel.n_pairs, np.nan)
            fees.append(nan if batch.breakeven_fee is None else np.asarray(batch.breakeven_fee))
            closed = batch.breakeven_swaps
            swaps.append(np.zeros(panel.n_pairs) if closed is None else np.asarray(closed))
        both, counts = np.stack(fees).astype(float), np.stack(swaps).astype(float)
        lowest = np.where(np.isnan(both), np.inf, both)
        leg = lowest.argmin(axis=0)
        fee = lowest.min(axis=0)
        rows = np.arange(panel.n_pairs)
        unset = np.isinf(fee)
        reasons = np.array(
            [
                f"the legs closed {int(a)} and {int(b)} swaps in the backtest, at least "
                f"{MIN_CLOSED_SWAPS} needed"
                if none
                else ""
                for a, b, none in zip(counts[0], counts[1], unset, strict=True)
            ],
            dtype=object,
        )
        return {
            "breakeven_fee": np.where(unset, np.nan, fee),
            "breakeven_swaps": np.where(unset, counts.max(axis=0), counts[leg, rows]).astype(
                np.int64
            ),
            "breakeven_fee_reason": reasons,
        }


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
