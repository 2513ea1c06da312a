"""From per-asset candles to :class:`PairPanel` s: align by date, cut, group by length.

A pair's rows are the inner join of its legs' dates. Pairs are grouped by usable history so
that every panel is a dense ``(pairs, days)`` array and no metric ever sees padding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.types import Candles, PairPanel


@dataclass(frozen=True)
class AlignedPair:
    a: str
    b: str
    dates: np.ndarray
    close_a: np.ndarray
    close_b: np.ndarray
    volume_a: np.ndarray
    volume_b: np.ndarray

    @property
    def n_days(self) -> int:
        return int(self.dates.shape[0])


def align(candles_a: Candles, candles_b: Candles) -> AlignedPair:
    """The days both legs have a candle, oldest first."""
    dates, ia, ib = np.intersect1d(
        candles_a.dates, candles_b.dates, assume_unique=True, return_indices=True
    )
    return AlignedPair(
        a=candles_a.ticker,
        b=candles_b.ticker,
        dates=dates,
        close_a=candles_a.close[ia],
        close_b=candles_b.close[ib],
        volume_a=candles_a.volume[ia],
        volume_b=candles_b.volume[ib],
    )


def panel_of(pairs: Sequence[AlignedPair], days: int, window_days: int) -> PairPanel:
    """Stack the last ``days`` days of pairs that all have at least that many."""
    return PairPanel(
        a=tuple(p.a for p in pairs),
        b=tuple(p.b for p in pairs),
        dates=np.stack([p.dates[-days:] for p in pairs]),
        close_a=np.stack([p.close_a[-days:] for p in pairs]),
        close_b=np.stack([p.close_b[-days:] for p in pairs]),
        volume_a=np.stack([p.volume_a[-days:] for p in pairs]),
        volume_b=np.stack([p.volume_b[-days:] for p in pairs]),
        window_days=window_days,
    )


def group_by_history(
    pairs: Sequence[AlignedPair], max_days: int, window_days: int
) -> list[tuple[list[int], PairPanel]]:
    """Panels of pairs with equal usable history (capped at ``max_days``), with row indices."""
    groups: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups[min(p.n_days, max_days)].append(i)
    return [
        (idx, panel_of([pairs[i] for i in idx], days, window_days))
        for days, idx in sorted(groups.items(), reverse=True)
    ]
