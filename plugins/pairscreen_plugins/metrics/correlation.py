"""Correlation of the two legs' daily log returns over ``W``, batched over pairs.

One return per day of ``W`` (so the close before its first day is used when the history has
it). A pair trade bets on the spread, not on the market: the higher the correlation of the
legs, the less of each leg's own moves the ratio carries. Pearson's formula from centred
row sums: the same bits in any panel width. Null when a leg does not move (its variance is
0, so no correlation exists).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins.metrics._log_prices import window_log_closes

MIN_RETURNS = 3


def return_correlation(log_a: np.ndarray, log_b: np.ndarray) -> np.ndarray:
    """Per row, Pearson's correlation of the daily log returns of two log-price series."""
    ra = np.diff(log_a, axis=1)
    rb = np.diff(log_b, axis=1)
    if ra.shape[1] < MIN_RETURNS:
        return np.full(ra.shape[0], np.nan)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    saa = (ra * ra).sum(axis=1)
    sbb = (rb * rb).sum(axis=1)
    usable = (saa > 0) & (sbb > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (ra * rb).sum(axis=1) / np.sqrt(saa * sbb)
    return np.where(usable, np.clip(r, -1.0, 1.0), np.nan)


@dataclass(frozen=True)
class ReturnCorrelationMetric:
    """``return_correlation`` of the legs' daily log returns over W."""

    name: str = "return_correlation"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "return_correlation",
            description="Pearson correlation of the two legs' daily log returns over W "
            "(-1..1); null when a leg's price does not move.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        return {"return_correlation": return_correlation(*window_log_closes(panel))}


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The return-correlation metric."""
    return [ReturnCorrelationMetric()]
