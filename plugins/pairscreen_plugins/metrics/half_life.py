"""Half-life of mean reversion of the log-ratio over ``W``, batched over pairs.

The AR(1) fit ``Δr_t = a + β r_{t-1} + ε`` on the window's log-ratios, in closed form per pair
(``β = cov(r_{t-1}, Δr_t) / var(r_{t-1})``, sums along each row: the same bits whatever the
panel's width). A deviation from the mean shrinks by ``1 + β`` a day, so it halves after
``-ln 2 / ln(1 + β)`` days. ``β >= 0`` means no reversion at all and ``β <= -1`` a ratio that
overshoots its mean every day: the half-life is null for both, and for a flat window.

The fit counts steps between consecutive closes; the half-life is then converted into
calendar days with the window's actual spacing, ``Δ = (last day - first day of W) / (closes
of W - 1)``: exactly 1 for two assets with a close every day (so nothing changes there), about
1.45 for a crypto x equity pair whose common closes are the exchange's trading days.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl

MIN_DAYS = 3  # two differences: the least a slope with a constant can be fitted on


def ar1_beta(series: np.ndarray) -> np.ndarray:
    """Per row, the OLS ``β`` of ``Δr_t`` on ``r_{t-1}`` with a constant; NaN for a flat row."""
    r = np.asarray(series, dtype=float)
    if r.shape[1] < MIN_DAYS:
        return np.full(r.shape[0], np.nan)
    lagged = r[:, :-1] - r[:, :-1].mean(axis=1, keepdims=True)
    step = np.diff(r, axis=1)
    step -= step.mean(axis=1, keepdims=True)
    sxx = (lagged * lagged).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sxx > 0, (lagged * step).sum(axis=1) / sxx, np.nan)


def half_life_days(beta: np.ndarray) -> np.ndarray:
    """``-ln 2 / ln(1 + β)`` where ``-1 < β < 0``, NaN elsewhere (no reversion to time)."""
    reverting = (beta < 0) & (beta > -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(reverting, -math.log(2.0) / np.log1p(np.where(reverting, beta, 0)), np.nan)


@dataclass(frozen=True)
class HalfLifeMetric:
    """``half_life_days`` of the log-ratio from its AR(1) fit over W."""

    name: str = "half_life"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "half_life_days",
            description="Calendar days for a deviation of the log-ratio from its mean to "
            "halve: -ln 2 / ln(1 + β) steps from the AR(1) fit Δr = a + β r(t-1) over W's "
            "closes, times W's mean calendar days per step; null when β >= 0 (no mean "
            "reversion) or the window is flat.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        steps = half_life_days(ar1_beta(panel.window))  # in steps between closes
        return {"half_life_days": steps * panel.spacing(panel.metric_window)}


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The half-life metric."""
    return [HalfLifeMetric()]
