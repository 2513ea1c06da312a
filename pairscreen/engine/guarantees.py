"""The rules the core applies before any screen filter: no filter plugin can turn them off.

A pair with a stale leg (``market.freshness``) and a pair with fewer common days than the
``min_history_days`` setting never reach the engine: the screen counts them as ``stale`` and
``insufficient_history`` before aligning anything, and ``/pair`` refuses or fails them
first. The one guarantee that needs the aligned batch is here: a pair with a leg in an active
depeg event fails with ``depeg``, whatever the chosen filter says, because a depegged leg's
prices say nothing about the pair's usual behaviour. :func:`engine.filtering.filter_reasons`
runs these rules before the filter's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC

import numpy as np

from pairscreen.types import DepeggedLeg, FilterContext, FilterRule

DEPEG = "depeg"


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
