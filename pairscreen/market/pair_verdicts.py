"""The core's verdict on named pairs from each leg's freshness, the pair's common history and
the legs in an active depeg event: the inputs :func:`pairscreen.engine.guarantees.core_verdicts`
decides on, gathered the same way for ``evaluate`` and watchlist notifications, and the reason
in its words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pairscreen.contracts import DepeggedLeg
from pairscreen.engine.guarantees import PASSES, core_reason, core_verdicts
from pairscreen.market.freshness import AssetFreshness

Pair = tuple[str, str]
NO_DEPEGS: Mapping[str, DepeggedLeg] = {}


def _stale(fresh: Mapping[str, AssetFreshness], ticker: str) -> bool:
    leg = fresh.get(ticker)
    return leg is not None and leg.stale


def pair_verdicts(
    fresh: Mapping[str, AssetFreshness],
    pairs: Sequence[Pair],
    history_days: Sequence[int | None],
    min_history_days: int,
    depegs: Mapping[str, DepeggedLeg] = NO_DEPEGS,
) -> np.ndarray:
    """Per pair, its core verdict; ``history_days`` is ``None`` for a pair with a leg
    without candles (nothing to align); ``depegs``: the legs in an active depeg event, by
    ticker (``pegs.status.active_depegs``)."""
    stale = np.array([_stale(fresh, a) or _stale(fresh, b) for a, b in pairs], dtype=bool)
    no_candles = np.array([days is None for days in history_days], dtype=bool)
    days = np.array([0 if d is None else d for d in history_days], dtype=np.int64)
    depegged = np.array([a in depegs or b in depegs for a, b in pairs], dtype=bool)
    return core_verdicts(stale, no_candles, days, min_history_days, depegged)


def pair_reason(
    fresh: Mapping[str, AssetFreshness],
    pair: Pair,
    verdict: int,
    history_days: int | None,
    min_history_days: int,
    depegs: Mapping[str, DepeggedLeg] = NO_DEPEGS,
) -> str:
    """The pair's core reason in the screen's words, ``""`` when it passes."""
    if verdict == PASSES:
        return ""
    return core_reason(
        verdict,
        stale_legs=[fresh[t].describe() for t in pair if _stale(fresh, t)],
        no_candles=[t for t in pair if t not in fresh or fresh[t].last_day is None],
        history_days=history_days or 0,
        min_history_days=min_history_days,
        depegged_legs=[depegs[t] for t in pair if t in depegs],
    )
