"""The core's verdict on a pair: the guarantees no filter plugin can turn off, decided here
for every caller (the screen, ``/pair``, the verdict endpoint, ``evaluate`` and watchlist
notifications) so that each says the same reason for the same pair.

Before any metric, in this order (the first that fails is the pair's verdict):

1. **stale**: a leg whose last close is older than its class allows (``market.freshness``)
   is never evaluated: its prices stopped moving because the data stopped;
2. **no candles**: a leg with nothing stored cannot be aligned;
3. **short history**: fewer calendar days from the first to the last common close than the
   ``min_history_days`` setting (days are calendar days, whatever the legs' calendars).

:func:`core_verdicts` decides them over whole arrays and :func:`core_reason` says one
verdict in words. The screen decides in two steps, because it aligns only the pairs that
pass the first two (``history_days=None`` leaves the third undecided), which gives the same
verdict as deciding all three at once.

The one guarantee that needs the aligned batch is a rule: a pair with a leg in an active
depeg event fails with ``depeg``, whatever the chosen filter says, because a depegged leg's
prices say nothing about the pair's usual behaviour. :func:`engine.filtering.filter_reasons`
runs it before the filter's own rules. :class:`ShortHistory` is the history guarantee as a
filter rule (``pairscreen.ShortHistory``) for a filter that lets the universe raise the
minimum with its own ``min_history_days`` threshold, as ``default`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC

import numpy as np
from numpy.typing import ArrayLike

from pairscreen.types import DepeggedLeg, FilterContext, FilterRule

DEPEG = "depeg"
STALE = "stale"  # the reason code of a pair with a stale leg
SHORT_HISTORY = "insufficient_history"  # no candles, or too short a common history

# A pair's core verdict (uint8), in the order the guarantees are decided.
PASSES, STALE_LEG, NO_CANDLES, SHORT = range(4)
CODE_OF = {PASSES: "", STALE_LEG: STALE, NO_CANDLES: SHORT_HISTORY, SHORT: SHORT_HISTORY}


def enough_history(history_days: ArrayLike, min_history_days: float) -> np.ndarray:
    """Per pair, whether its calendar days of common history reach ``min_history_days``."""
    enough: np.ndarray = np.asarray(history_days) >= min_history_days
    return enough


def core_verdicts(
    stale: ArrayLike,
    no_candles: ArrayLike,
    history_days: ArrayLike | None,
    min_history_days: float,
) -> np.ndarray:
    """Per pair, its core verdict (:data:`PASSES`, :data:`STALE_LEG`, :data:`NO_CANDLES` or
    :data:`SHORT`): the first guarantee it fails. ``stale``: a leg is stale; ``no_candles``: a
    leg has none; ``history_days``: calendar days of common history (``None``: not aligned
    yet, the history guarantee left undecided)."""
    stale_legs = np.asarray(stale, dtype=bool)
    verdict = np.full(stale_legs.shape, PASSES, dtype=np.uint8)
    if history_days is not None:
        verdict[~enough_history(history_days, min_history_days)] = SHORT
    verdict[np.asarray(no_candles, dtype=bool)] = NO_CANDLES
    verdict[stale_legs] = STALE_LEG
    return verdict


def core_text(
    verdict: int,
    *,
    stale_legs: Sequence[str] = (),
    no_candles: Sequence[str] = (),
    history_days: int = 0,
    min_history_days: int = 0,
) -> str:
    """The words of a failed verdict without its code: each stale leg described (``X has no
    close since D (n days)``), the legs without candles, or the history and the minimum."""
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
    )
    return f"{CODE_OF[verdict]}: {text}"


class ShortHistory:
    """The history guarantee as a filter rule, at the filter's ``min_history_days``
    threshold (the core's minimum is the floor: pairs below it never reach a filter)."""

    code = SHORT_HISTORY
    inputs: tuple[str, ...] = ()
    threshold = "min_history_days"

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        return enough_history(context.history_days, context.thresholds[self.threshold])

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        days, needed = int(context.history_days[i]), context.thresholds[self.threshold]
        return f"{days} days of common history, at least {needed} days needed"


class ActiveDepeg:
    """Fails every pair with a leg in an active depeg event, naming the leg and since when."""

    code = DEPEG
    inputs: tuple[str, ...] = ()

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        return ~np.asarray(context.depegged, dtype=bool)

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        legs = context.depegged_legs[i] if i < len(context.depegged_legs) else ()
        if not legs:
            return "a leg is in an active depeg event"
        return "; ".join(_depegged(leg) for leg in legs)


def _depegged(leg: DepeggedLeg) -> str:
    if leg.since is None:
        return f"{leg.ticker} is in an active depeg event"
    since = leg.since.astimezone(UTC).replace(microsecond=0).isoformat()
    return f"{leg.ticker} is in an active depeg event since {since}"


CORE_RULES: tuple[FilterRule, ...] = (ActiveDepeg(),)
# The codes the core itself rejects with after ``stale`` and ``insufficient_history``.
CORE_CODES: tuple[str, ...] = tuple(rule.code for rule in CORE_RULES)
