"""The core's verdict on a pair: the guarantees no filter plugin can turn off, decided here
for every caller (the screen, ``/pair``, the verdict endpoint, ``evaluate`` and watchlist
notifications) so that each says the same reason for the same pair.

In this order (the first that fails is the pair's verdict):

1. **stale**: a leg whose last close is older than its class allows (``market.freshness``)
   is never evaluated: its prices stopped moving because the data stopped;
2. **no candles**: a leg with nothing stored cannot be aligned;
3. **short history**: fewer calendar days from the first to the last common close than the
   ``min_history_days`` setting (days are calendar days, whatever the legs' calendars);
4. **depeg**: a leg in an active depeg event (``pegs.status``), whatever the chosen filter
   says, because a depegged leg's prices say nothing about the pair's usual behaviour.

:func:`core_verdicts` decides them over whole arrays and :func:`core_reason` says one
verdict in words. The screen decides in steps, because it aligns only the pairs that pass
the first two (``history_days=None`` leaves the third undecided) and learns which legs are
depegged per aligned batch (:func:`batch_verdicts`, run by
:func:`engine.filtering.filter_reasons` before the filter's rules), which gives the same
verdict as deciding all four at once.

A depegged pair still reaches the metrics (:func:`reaches_metrics`): the screen has always
counted it among the day's tested pairs, whose p-values the q-values are computed from, so
deciding the depeg here leaves every published number as it was. The history guarantee is
also a filter rule, ``pairscreen.contracts.ShortHistory`` (with :func:`enough_history`, the
comparison this module decides with), for a filter that lets the universe raise the minimum
with its own ``min_history_days`` threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC

import numpy as np
from numpy.typing import ArrayLike

from pairscreen.contracts.filters import DepeggedLeg, FilterContext, ShortHistory, enough_history

DEPEG = "depeg"
STALE = "stale"  # the reason code of a pair with a stale leg
SHORT_HISTORY = ShortHistory.code  # no candles, or too short a common history

# A pair's core verdict (uint8), in the order the guarantees are decided.
PASSES, STALE_LEG, NO_CANDLES, SHORT, DEPEGGED = range(5)
CODE_OF = {
    PASSES: "",
    STALE_LEG: STALE,
    NO_CANDLES: SHORT_HISTORY,
    SHORT: SHORT_HISTORY,
    DEPEGGED: DEPEG,
}
# The codes the core rejects with after metrics ran (the screen counts them beside the
# filter's): ``stale`` and ``insufficient_history`` are counted before any metric.
CORE_CODES: tuple[str, ...] = (DEPEG,)


def core_verdicts(
    stale: ArrayLike,
    no_candles: ArrayLike,
    history_days: ArrayLike | None,
    min_history_days: float,
    depegged: ArrayLike | None = None,
) -> np.ndarray:
    """Per pair, its core verdict (:data:`PASSES`, :data:`STALE_LEG`, :data:`NO_CANDLES`,
    :data:`SHORT` or :data:`DEPEGGED`): the first guarantee it fails. ``stale``: a leg is
    stale; ``no_candles``: a leg has none; ``history_days``: calendar days of common history
    (``None``: not aligned yet, the history guarantee left undecided); ``depegged``: a leg is
    in an active depeg event (``None``: not known yet, left undecided)."""
    stale_legs = np.asarray(stale, dtype=bool)
    verdict = np.full(stale_legs.shape, PASSES, dtype=np.uint8)
    if depegged is not None:
        verdict[np.asarray(depegged, dtype=bool)] = DEPEGGED
    if history_days is not None:
        verdict[~enough_history(history_days, min_history_days)] = SHORT
    verdict[np.asarray(no_candles, dtype=bool)] = NO_CANDLES
    verdict[stale_legs] = STALE_LEG
    return verdict


def reaches_metrics(verdicts: ArrayLike) -> np.ndarray:
    """Per pair, whether its metrics are computed: it passes, or only its depeg fails it (a
    tested pair, counted in the day's family of p-values, as the screen always has)."""
    codes = np.asarray(verdicts)
    tested: np.ndarray = (codes == PASSES) | (codes == DEPEGGED)
    return tested


def batch_verdicts(context: FilterContext) -> np.ndarray:
    """The core verdict of an aligned batch whose stale, candle and history guarantees its
    caller decided already: :data:`DEPEGGED` for a pair with a leg in an active depeg event
    (``context.depegged``), else :data:`PASSES`."""
    n = len(context.history_days)
    decided = np.zeros(n, dtype=bool)
    return core_verdicts(decided, decided, None, 0, depegged=context.depegged)


def batch_reason(verdict: int, context: FilterContext, i: int) -> str:
    """:func:`core_reason` of the batch's pair ``i``, its depegged legs named from the
    context (``context.depegged_legs``; a generic text when the caller did not name them)."""
    legs = context.depegged_legs[i] if i < len(context.depegged_legs) else ()
    return core_reason(verdict, depegged_legs=legs)


def core_text(
    verdict: int,
    *,
    stale_legs: Sequence[str] = (),
    no_candles: Sequence[str] = (),
    history_days: int = 0,
    min_history_days: int = 0,
    depegged_legs: Sequence[DepeggedLeg] = (),
) -> str:
    """The words of a failed verdict without its code: each stale leg described (``X has no
    close since D (n days)``), the legs without candles, the history and the minimum, or each
    depegged leg and since when."""
    if verdict == DEPEGGED:
        if not depegged_legs:
            return "a leg is in an active depeg event"
        return "; ".join(_depegged(leg) for leg in depegged_legs)
    if verdict == STALE_LEG:
        return "; ".join(stale_legs)
    if verdict == NO_CANDLES:
        return f"no candles stored for {' and '.join(no_candles)}"
    if verdict == SHORT:
        return f"{history_days} days of common history, at least {min_history_days} are needed"
    return ""


def core_reason(
    verdict: int,
    *,
    stale_legs: Sequence[str] = (),
    no_candles: Sequence[str] = (),
    history_days: int = 0,
    min_history_days: int = 0,
    depegged_legs: Sequence[DepeggedLeg] = (),
) -> str:
    """``"<code>: <text>"`` of a failed verdict (:func:`core_text`), ``""`` when it passes."""
    if verdict == PASSES:
        return ""
    text = core_text(
        verdict,
        stale_legs=stale_legs,
        no_candles=no_candles,
        history_days=history_days,
        min_history_days=min_history_days,
        depegged_legs=depegged_legs,
    )
    return f"{CODE_OF[verdict]}: {text}"


def _depegged(leg: DepeggedLeg) -> str:
    if leg.since is None:
        return f"{leg.ticker} is in an active depeg event"
    since = leg.since.astimezone(UTC).replace(microsecond=0).isoformat()
    return f"{leg.ticker} is in an active depeg event since {since}"
