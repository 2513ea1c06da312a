"""What happened after an as-of day: the forward move of each pair in a band zone.

For a pair in the bottom zone (A cheap against B) at day ``t`` and a horizon ``h``, the move
back toward the range is ``r(t+h) - r(t)`` of the log-ratio ``r = ln(A/B)``; in the top zone
it is the opposite. Holding the cheap leg for ``h`` days (two swaps, each paying the
strategy's fee) is worth ``ln((1-fee)^2 * exp(move)) = 2 ln(1-fee) + move`` in log points, and
holding the other leg instead (the bet against reversion, the baseline) ``2 ln(1-fee) - move``.
With the universe's ``[costs]`` each of the two swaps also pays that day's slippage ``s``
(both legs' slippage plus impact, as the backtest prices a swap): ``ln(1-fee-s_t) +
ln(1-fee-s_{t+h})`` replaces ``2 ln(1-fee)``; with no ``[costs]`` the numbers are unchanged.
Log points, not ``exp(move) - 1``: the mean of ``exp(move) - 1`` is positive when the mean move
is zero (Jensen), so on random walks both legs would look profitable. ``r(t+h)`` is the close
of the last common day at or before ``t+h``; a pair whose data ends before ``t+h`` has no
outcome. On an intraday universe ``t`` is a bar's close and ``h`` a count of its bars:
``r(t+h)`` is then the last common bar closed at or before ``t+h``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np

from pairscreen.engine.costs import swap_slippage
from pairscreen.evaluation.dates import after, point_of, stamp
from pairscreen.evaluation.verdicts import DateVerdicts, Market
from pairscreen.universe import SwapCosts

ZONE_SIGN = {"bottom": 1.0, "top": -1.0}


def in_zones(zone: np.ndarray) -> list[int]:
    """The indices of the pairs in a band zone, in order (the only pairs with an outcome)."""
    inside = np.zeros(zone.shape, dtype=bool)
    for name in ZONE_SIGN:
        inside |= zone == name
    return np.flatnonzero(inside).tolist()


@dataclass(frozen=True)
class Outcomes:
    """Per pair at one day and horizon; NaN where a pair is outside the zones or has no
    data at ``t + h``."""

    reversion: np.ndarray  # sign-adjusted change of the log-ratio
    hold_value: np.ndarray  # log value of holding the cheap leg, fees included
    hold_other_leg: np.ndarray  # log value of holding the other leg, fees included
    # the newest close an outcome read (a day, or a bar's close); None when none did
    last_close: date | None = None


def outcomes_at(
    market: Market,
    verdicts: DateVerdicts,
    horizon: int,
    fee: float,
    costs: SwapCosts | None = None,
) -> Outcomes:
    n = len(market.pairs)
    move = np.full(n, np.nan)
    priced = costs is not None and not costs.is_zero
    fees = np.full(n, np.nan) if priced else None
    end = after(verdicts.as_of, horizon, market.bar)
    start = stamp(verdicts.as_of, market.bar)
    newest: np.datetime64 | None = None
    for i in in_zones(verdicts.zone):
        sign, pair = ZONE_SIGN[str(verdicts.zone[i])], market.aligned[i]
        if pair is None or pair.dates[-1] < end:
            continue
        k = int(np.searchsorted(pair.dates, end, side="right")) - 1
        read = pair.dates[k] if market.bar.intraday else pair.dates[k].astype("datetime64[D]")
        newest = read if newest is None or read > newest else newest
        later = float(np.log(pair.close_a[k] / pair.close_b[k]))
        move[i] = sign * (later - verdicts.log_ratio[i])
        if fees is not None and costs is not None:
            t = int(np.searchsorted(pair.dates, start, side="right")) - 1
            a, b = market.pairs[i]
            on = [t, k]
            slip = swap_slippage(
                costs,
                np.array(costs.slippage(a)),
                np.array(costs.slippage(b)),
                pair.volume_a[on],
                pair.volume_b[on],
            )
            fees[i] = float(np.log((1.0 - fee) - slip).sum())
    last = None if newest is None else point_of(newest, market.bar)
    if fees is None:
        both = 2.0 * np.log1p(-fee)
        return Outcomes(move, both + move, both - move, last)
    return Outcomes(move, fees + move, fees - move, last)
