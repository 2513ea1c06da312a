"""Cointegration of the two legs' log prices over ``W``, batched over pairs.

Engle-Granger depends on which leg is regressed on which, so both orders are tested and
``coint_pvalue`` is the larger p-value (a pair is called cointegrated only if it is so both
ways). Each order is the two-step test statsmodels' ``coint(y, x)`` runs with its defaults
(trend "c", AIC lag search): an OLS of ``y`` on ``x`` and a constant, then an ADF test without a
constant on its residuals, whose t-statistic is read against MacKinnon's tables for two
series. Step one is a per-pair closed form (slope = cov / var): no multi-column solve whose
last digits would depend on how many pairs share the panel. Step two is the batched ADF of
``_adf`` with ``regression="n"``.

Where statsmodels answers something a trader cannot use, the metric answers null: a flat
leg (its regression is singular; statsmodels' pseudo-inverse returns an arbitrary slope) and
a window too short for the lag search. Two legs whose log prices are (almost) exactly
collinear get statsmodels' own answer: p-value 0 (``res_adf = -inf``).

The Johansen trace test of the same log prices is a metric of its own (``johansen.py``): its
numbers decide nothing in the default screen, so it runs on the survivors alone, while this
metric's p-value gets a q-value over every tested pair and so runs on every pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins.metrics._adf import adf_statistics, mackinnon_pvalue
from pairscreen_plugins.metrics._log_prices import centred_rows, centred_window_logs

# statsmodels' ``coint`` skips the ADF and reports -inf when R^2 >= 1 - 100 sqrt(eps).
_COLLINEAR_R2 = 1.0 - 100.0 * float(np.sqrt(np.finfo(np.double).eps))
# Fewer days than this leave the lag search almost nothing to choose from.
MIN_DAYS = 20


def engle_granger(log_a: np.ndarray, log_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: statsmodels' ``coint(log_a, log_b)`` p-value and the hedge ratio (the OLS
    slope of ``log_a`` on ``log_b``); NaN for a flat leg or a row shorter than ``MIN_DAYS``."""
    return engle_granger_both(log_a, log_b)[0]


def engle_granger_both(
    log_a: np.ndarray, log_b: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """:func:`engle_granger` of ``(log_a, log_b)`` and of ``(log_b, log_a)``.

    The two orders share the centred legs and their sums of squares and cross products
    (a product and its mirror are the same float), so those are computed once.
    """
    return engle_granger_centred(centred_rows(log_a), centred_rows(log_b))


def engle_granger_centred(
    leg_a: tuple[np.ndarray, np.ndarray], leg_b: tuple[np.ndarray, np.ndarray]
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """:func:`engle_granger_both` from each leg's centred log prices and their sum of
    squares (which a panel computes once per asset: ``centred_window_logs``)."""
    (centred_a, saa), (centred_b, sbb) = leg_a, leg_b
    sab = (centred_b * centred_a).sum(axis=1)
    return (
        _engle_granger(centred_a, centred_b, sbb, saa, sab),
        _engle_granger(centred_b, centred_a, saa, sbb, sab),
    )


def _engle_granger(
    y: np.ndarray, x: np.ndarray, sxx: np.ndarray, syy: np.ndarray, sxy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The test of centred ``y`` on centred ``x`` from their sums of squares and products."""
    usable = (sxx > 0) & (syy > 0) & np.isfinite(sxx + syy) & (y.shape[1] >= MIN_DAYS)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(usable, sxy / sxx, np.nan)
        resid = y - slope[:, None] * x
        r_squared = 1.0 - (resid * resid).sum(axis=1) / syy
    collinear = usable & (r_squared >= _COLLINEAR_R2)
    tested = usable & ~collinear
    tstat = np.full(y.shape[0], np.nan)
    tstat[collinear] = -np.inf
    # A tested row's residuals are finite (both legs and the slope are) and vary (constant
    # residuals would make R^2 one, a collinear row): the ADF need not check.
    if tested.all():  # the usual case: the residuals as they are, no copy
        tstat = adf_statistics(resid, constant=False, finite_and_varying=True)
    elif tested.any():
        tstat[tested] = adf_statistics(resid[tested], constant=False, finite_and_varying=True)
    return mackinnon_pvalue(tstat, n_series=2), slope


_NULL_FLAT = " Null for a flat leg or a window under 20 days."


@dataclass(frozen=True)
class CointegrationMetric:
    """Engle-Granger both ways over ``W``: ``coint_pvalue`` the larger p-value, each order's
    p-value and hedge ratio."""

    name: str = "cointegration"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "coint_pvalue",
            description="Engle-Granger p-value over W, the larger of the two orders (A on B, "
            "B on A); small = cointegrated both ways." + _NULL_FLAT,
            nullable=True,
        ),
        MetricField(
            "coint_pvalue_ab",
            description="Engle-Granger p-value of log A on log B over W (statsmodels coint, "
            "constant, AIC lags, MacKinnon N=2)." + _NULL_FLAT,
            nullable=True,
        ),
        MetricField(
            "coint_pvalue_ba",
            description="Engle-Granger p-value of log B on log A over W (statsmodels coint, "
            "constant, AIC lags, MacKinnon N=2)." + _NULL_FLAT,
            nullable=True,
        ),
        MetricField(
            "hedge_ratio",
            description="OLS slope of log A on log B over W: units of B's log price per unit "
            "of A's in the A-on-B spread." + _NULL_FLAT,
            nullable=True,
        ),
        MetricField(
            "hedge_ratio_ba",
            description="OLS slope of log B on log A over W: units of A's log price per unit "
            "of B's in the B-on-A spread." + _NULL_FLAT,
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        (p_ab, slope_ab), (p_ba, slope_ba) = engle_granger_centred(*centred_window_logs(panel))
        return {
            "coint_pvalue": np.maximum(p_ab, p_ba),
            "coint_pvalue_ab": p_ab,
            "coint_pvalue_ba": p_ba,
            "hedge_ratio": slope_ab,
            "hedge_ratio_ba": slope_ba,
        }


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The cointegration metric (Engle-Granger both ways)."""
    return [CointegrationMetric()]
