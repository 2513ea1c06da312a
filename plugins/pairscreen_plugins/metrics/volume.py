"""Liquidity of each leg: mean daily quote-currency volume over the common closes of the last
``volume_days`` calendar days.

A day whose volume the market source did not report is NaN in the panel; a mean over such a
day is NaN too (served as ``null``), since averaging only the known days, or counting the
unknown ones as 0, would state a liquidity nobody measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl


def mean_recent(volume: np.ndarray, days: int) -> np.ndarray:
    """Mean of the last ``days`` columns of each row (all of them when the row is shorter);
    NaN for a row with an unknown volume among them."""
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, np.asarray(volume, dtype=float)[:, -days:].mean(axis=1))


@dataclass(frozen=True)
class VolumeMetric:
    """``volume_a`` and ``volume_b``: quote volumes are comparable across legs."""

    name: str = "volume"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "volume_a",
            description="Mean daily quote volume of leg A over 30 days; null when unknown.",
            nullable=True,
        ),
        MetricField(
            "volume_b",
            description="Mean daily quote volume of leg B over 30 days; null when unknown.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        # The closes of the last ``volume_days`` calendar days (30 closes for daily legs).
        closes = panel.calendar_window(panel.volume_days).observations
        return {
            "volume_a": mean_recent(panel.volume_a, closes),
            "volume_b": mean_recent(panel.volume_b, closes),
        }


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The volume metric."""
    return [VolumeMetric()]
