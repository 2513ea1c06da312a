"""The log-ratio as an Ornstein-Uhlenbeck process over ``W``, and Bertram's optimal bands.

Two metrics, batched over the panel (the math is in ``_ou``):

* ``ou``: the exact conditional MLE of ``dX = μ(θ - X)dt + sigma dW`` on the window's log-ratios
  (``ou_mean`` θ, ``ou_speed`` μ per calendar day, ``ou_sigma`` sigma per √day,
  ``ou_half_life_days`` ln 2 / μ), null with ``ou_reason`` when the AR(1) slope is not in
  (0, 1).
* ``ou_bands``: Bertram's (2010) entry and exit levels for the round-trip cost ``ou_cost`` =
  ``-2 ln(1 - fee - slippage)`` of the accumulation strategy's swaps on the pair's last day,
  the expected trade length and the expected log return per year.

The window is the panel's ``W`` (``metric_window``, the same calendar span as every other
metric), and the step between observations is its mean spacing in calendar days
(``PairPanel.spacing``): exactly 1 for a pair with a close every day.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins.metrics._ou import (
    OUFit,
    bertram_bands,
    fit_ou_step,
    no_fit_reasons,
    round_trip_cost,
)
from pairscreen_plugins.strategies.accumulation import FEE


def window_fit(panel: PairPanel) -> OUFit:
    """The OU fit of ``W``, computed once per panel (both metrics read it)."""

    def compute() -> OUFit:
        span = panel.metric_window
        step = np.full(panel.n_pairs, panel.spacing(span))
        return fit_ou_step(panel.log_ratio[:, span.columns], step)

    return panel.cached("ou_fit", compute)


@dataclass(frozen=True)
class OUMetric:
    """θ, μ, sigma and the half-life of the log-ratio as an OU process over ``W``."""

    name: str = "ou"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "ou_mean",
            description="θ, the log-ratio's long-run mean in the OU fit over W; null with "
            "ou_reason when the ratio does not mean-revert.",
            nullable=True,
        ),
        MetricField(
            "ou_speed",
            description="μ, the OU speed of mean reversion, per calendar day (-ln b / Δ, b "
            "the AR(1) slope, Δ the days between closes); null with ou_reason.",
            nullable=True,
        ),
        MetricField(
            "ou_sigma",
            description="sigma, the OU volatility of the log-ratio per √day; null with ou_reason.",
            nullable=True,
        ),
        MetricField(
            "ou_half_life_days",
            description="ln 2 / μ: calendar days for a deviation from θ to halve, from the "
            "exact OU fit; null with ou_reason.",
            nullable=True,
        ),
        MetricField(
            "ou_reason",
            type="string",
            description="Why the OU fields are null (the AR(1) slope b is not in (0, 1), or "
            "the window is flat); empty when they are set.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        fit = window_fit(panel)
        return {
            "ou_mean": fit.mean,
            "ou_speed": fit.speed,
            "ou_sigma": fit.sigma,
            "ou_half_life_days": fit.half_life_days,
            "ou_reason": no_fit_reasons(fit),
        }


def last_day_cost(panel: PairPanel, fee: float = FEE) -> np.ndarray:
    """``c`` per pair: the round trip of two swaps at the fee plus the last day's slippage."""
    per_swap = fee + panel.swap_slippage[:, -1]
    return round_trip_cost(per_swap)


@dataclass(frozen=True)
class OUBandsMetric:
    """Bertram's optimal entry and exit levels of the OU fit, for the strategy's costs."""

    name: str = "ou_bands"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "ou_entry",
            description="Bertram's optimal entry level of the log-ratio (below θ): the level "
            "that, with ou_exit, maximises the expected return per unit time net of ou_cost; "
            "null when the OU fit is.",
            nullable=True,
        ),
        MetricField(
            "ou_exit",
            description="Bertram's optimal exit level, 2θ - ou_entry; null when the fit is.",
            nullable=True,
        ),
        MetricField(
            "ou_expected_trade_days",
            description="Expected calendar days from entry to exit and back to entry at "
            "these levels (Bertram eq. 9); null when the fit is.",
            nullable=True,
        ),
        MetricField(
            "ou_expected_return_per_year",
            description="Expected log return per 365 days trading at these levels, net of "
            "ou_cost per round trip (Bertram eq. 5); null when the fit is.",
            nullable=True,
        ),
        MetricField(
            "ou_cost",
            description="c, the round-trip cost in log-ratio units: -2 ln(1 - fee - "
            "slippage), two swaps at the strategy's fee plus the pair's slippage.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        fit = window_fit(panel)
        cost = last_day_cost(panel)
        bands = bertram_bands(fit.mean, fit.speed, fit.sigma, cost)
        return {
            "ou_entry": bands.entry,
            "ou_exit": bands.exit,
            "ou_expected_trade_days": bands.trade_days,
            "ou_expected_return_per_year": bands.return_per_year,
            "ou_cost": cost,
        }


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The OU fit and Bertram's bands."""
    return [OUMetric(), OUBandsMetric()]
