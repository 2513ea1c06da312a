"""What happened after an as-of day: the forward move of each pair in a band zone.

For a pair in the bottom zone (A cheap against B) at day ``t`` and a horizon ``h``, the move
back toward the range is ``r(t+h) - r(t)`` of the log-ratio ``r = ln(A/B)``; in the top zone
it is the opposite. Holding the cheap leg for ``h`` days (two swaps, each paying the
strategy's fee) is worth ``ln((1-fee)^2 * exp(move)) = 2 ln(1-fee) + move`` in log points, and
holding the other leg instead (the bet against reversion, the baseline) ``2 ln(1-fee) - move``.
Log points, not ``exp(move) - 1``: the mean of ``exp(move) - 1`` is positive when the mean move
is zero (Jensen), so on random walks both legs would look profitable. ``r(t+h)`` is the close
of the last common day at or before ``t+h``; a pair whose data ends before ``t+h`` has no
outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from pairscreen.evaluation.verdicts import DateVerdicts, Market

ZONE_SIGN = {"bottom": 1.0, "top": -1.0}


@dataclass(frozen=True)
class Outcomes:
    """Per pair at one day and horizon; NaN where a pair is outside the zones or has no
    data at ``t + h``."""

    reversion: np.ndarray  # sign-adjusted change of the log-ratio
    hold_value: np.ndarray  # log value of holding the cheap leg, fees included
    hold_other_leg: np.ndarray  # log value of holding the other leg, fees included
    last_close: date | None = None  # the newest close an outcome read; None when none did


def outcomes_at(market: Market, verdicts: DateVerdicts, horizon: int, fee: float) -> Outcomes:
    n = len(market.pairs)
    move = np.full(n, np.nan)
    end = np.datetime64(verdicts.as_of + timedelta(days=horizon), "D")
    newest: np.datetime64 | None = None
    for i, pair in enumerate(market.aligned):
        sign = ZONE_SIGN.get(str(verdicts.zone[i]))
        if sign is None or pair is None or pair.dates[-1] < end:
            continue
        k = int(np.searchsorted(pair.dates, end, side="right")) - 1
        read = pair.dates[k].astype("datetime64[D]")
        newest = read if newest is None or read > newest else newest
        later = float(np.log(pair.close_a[k] / pair.close_b[k]))
        move[i] = sign * (later - verdicts.log_ratio[i])
    fees = 2.0 * np.log1p(-fee)
    last = None if newest is None else newest.astype(date)
    return Outcomes(move, fees + move, fees - move, last)
