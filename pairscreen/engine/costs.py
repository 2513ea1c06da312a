"""The universe's swap costs on a panel: each day's slippage and impact per pair.

A strategy pays its fee plus :attr:`~pairscreen.contracts.PairPanel.slippage` on every swap. The
engine fills that array from the universe's ``[costs]`` (:class:`~pairscreen.universe.
SwapCosts`): both legs' slippage (a swap sells one and buys the other) plus, when an impact is
set, ``coefficient x trade_size / the day's quote volume`` for each leg, capped together at
:data:`~pairscreen.universe.MAX_SWAP_SLIPPAGE`. With no costs set the panel is returned as is
(``slippage`` None), so the backtest is the fee-only one to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from pairscreen.contracts import Asset, PairPanel
from pairscreen.universe import MAX_SWAP_SLIPPAGE, SwapCosts


def leg_slippage(costs: SwapCosts, assets: Sequence[Asset]) -> np.ndarray:
    """(assets,) each asset's slippage per swap as a fraction."""
    return np.array([costs.slippage(a) for a in assets], dtype=float)


def with_costs(
    panel: PairPanel, costs: SwapCosts, slippage_a: np.ndarray, slippage_b: np.ndarray
) -> PairPanel:
    """The panel with its per-day swap slippage set (``slippage_a``/``_b``: (pairs,) each
    row's leg slippage); the panel itself when the universe sets no costs."""
    if costs.is_zero:
        return panel
    per_day = swap_slippage(
        costs,
        np.asarray(slippage_a)[:, None],
        np.asarray(slippage_b)[:, None],
        panel.volume_a,
        panel.volume_b,
    )
    return replace(panel, slippage=per_day)  # a copy's caches start empty


def swap_slippage(
    costs: SwapCosts,
    slippage_a: np.ndarray,
    slippage_b: np.ndarray,
    volume_a: np.ndarray,
    volume_b: np.ndarray,
) -> np.ndarray:
    """What one swap costs beyond the fee on the days of ``volume_a``/``_b`` (legs'
    slippage broadcast against them): both legs' slippage plus each leg's impact, capped.
    Shared by the backtest's panels and the evaluation's holding values, so a swap costs
    the same wherever it is priced."""
    shape = np.broadcast_shapes(np.shape(volume_a), np.shape(slippage_a))
    per_day = np.broadcast_to(np.asarray(slippage_a) + np.asarray(slippage_b), shape).copy()
    if costs.has_impact:
        for volume in (volume_a, volume_b):
            with np.errstate(divide="ignore", invalid="ignore"):
                impact = costs.impact_coefficient * costs.impact_trade_size / volume
            per_day += np.where(np.isfinite(impact), impact, 0.0)
    np.minimum(per_day, MAX_SWAP_SLIPPAGE, out=per_day)
    return per_day
