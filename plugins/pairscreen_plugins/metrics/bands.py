"""The band metric: where today's log-ratio sits in the percentile band of ``H``.

``H`` is the ``window_days`` log-ratios before today. The percentiles are numpy's linear
percentiles read off one sort of each row (bit-identical to ``np.percentile`` of each row,
see ``_percentiles``), so ``p5``, ``p95`` and ``position`` equal
``pairscan_rmr.current_signal`` on the last 541 log-ratios. They are cached on the panel as
``band_percentiles`` for other metrics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins._percentiles import sorted_percentiles, sorted_rows

BAND_PERCENTILES = (5.0, 15.0, 85.0, 95.0)
ZONE_LOW = 0.2
ZONE_HIGH = 0.8


def band_percentiles(panel: PairPanel) -> np.ndarray:
    """p5, p15, p85, p95 of ``H`` per pair, shape (4, pairs); computed once per panel."""
    return panel.cached(
        "band_percentiles",
        lambda: sorted_percentiles(sorted_rows(panel.band_history), BAND_PERCENTILES),
    )


def position_in_band(r: np.ndarray, p_low: np.ndarray, p_high: np.ndarray) -> np.ndarray:
    """``(r - p_low) / (p_high - p_low)``, unclamped; 0.5 where the band has no width."""
    width = p_high - p_low
    flat = width == 0
    return np.where(flat, 0.5, (r - p_low) / np.where(flat, 1.0, width))


def zones(position: np.ndarray) -> np.ndarray:
    """Zone names: bottom below 0.2, top above 0.8, mid otherwise (strict inequalities)."""
    return np.where(position < ZONE_LOW, "bottom", np.where(position > ZONE_HIGH, "top", "mid"))


@dataclass(frozen=True)
class BandsMetric:
    """Band percentiles of ``H``, today's log-ratio, its position, zone and z-score."""

    name: str = "bands"
    fields: tuple[MetricField, ...] = (
        MetricField("p5", description="5th percentile of the 540 log-ratios before today."),
        MetricField(
            "p15",
            description="15th percentile of H; null without a full 540-day band window.",
            nullable=True,
            needs_full_window=True,
        ),
        MetricField(
            "p85",
            description="85th percentile of H; null without a full 540-day band window.",
            nullable=True,
            needs_full_window=True,
        ),
        MetricField("p95", description="95th percentile of the 540 log-ratios before today."),
        MetricField("r_current", description="Today's log-ratio ln(A/B)."),
        MetricField("position", description="(r_current - p5) / (p95 - p5), unclamped."),
        MetricField("zone", type="string", description="bottom, mid or top."),
        MetricField(
            "z_score",
            description="(r_current - mean(H)) / std(H, ddof=1); null when H is constant.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        p5, p15, p85, p95 = band_percentiles(panel)
        full = panel.has_full_window
        history = panel.band_history
        r = panel.r_current
        position = position_in_band(r, p5, p95)
        std = history.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(std > 0, (r - history.mean(axis=1)) / std, np.nan)
        return {
            "p5": p5,
            "p15": np.where(full, p15, np.nan),
            "p85": np.where(full, p85, np.nan),
            "p95": p95,
            "r_current": r.copy(),
            "position": position,
            "zone": zones(position),
            "z_score": z,
        }


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The band metric."""
    return [BandsMetric()]
