"""Engle-Granger cointegration of the two legs' log prices over ``W``, batched over pairs.

The two-step test statsmodels' ``coint(log A, log B)`` runs with its defaults (trend "c",
AIC lag search): an OLS of ``log A`` on ``log B`` and a constant, then an ADF test without a
constant on its residuals, whose t-statistic is read against MacKinnon's tables for two
series. Step one is a per-pair closed form (slope = cov / var): no multi-column solve whose
last digits would depend on how many pairs share the panel. Step two is the batched ADF of
``_adf`` with ``regression="n"``.

Where statsmodels answers something a trader cannot use, the metric answers null: a flat
leg (its regression is singular; statsmodels' pseudo-inverse returns an arbitrary slope) and
a window too short for the lag search. Two legs whose log prices are (almost) exactly
collinear get statsmodels' own answer: p-value 0 (``res_adf = -inf``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins.metrics._adf import adf_statistics, mackinnon_pvalue
from pairscreen_plugins.metrics._log_prices import window_log_closes

# statsmodels' ``coint`` skips the ADF and reports -inf when R^2 >= 1 - 100 sqrt(eps).
_COLLINEAR_R2 = 1.0 - 100.0 * float(np.sqrt(np.finfo(np.double).eps))
# Fewer days than this leave the lag search almost nothing to choose from.
MIN_DAYS = 20


def window_logs(panel: PairPanel) -> tuple[np.ndarray, np.ndarray]:
    """``log A`` and ``log B`` over the closes of ``W``, each shape (pairs, closes)."""
    closes = panel.metric_window.observations
    log_a, log_b = window_log_closes(panel)
    return log_a[:, log_a.shape[1] - closes :], log_b[:, log_b.shape[1] - closes :]


def engle_granger(log_a: np.ndarray, log_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: statsmodels' ``coint(log_a, log_b)`` p-value and the hedge ratio (the OLS
    slope of ``log_a`` on ``log_b``); NaN for a flat leg or a row shorter than ``MIN_DAYS``."""
    y = log_a - log_a.mean(axis=1, keepdims=True)
    x = log_b - log_b.mean(axis=1, keepdims=True)
    sxx = (x * x).sum(axis=1)
    syy = (y * y).sum(axis=1)
    usable = (sxx > 0) & (syy > 0) & np.isfinite(sxx + syy) & (log_a.shape[1] >= MIN_DAYS)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(usable, (x * y).sum(axis=1) / sxx, np.nan)
        resid = y - slope[:, None] * x
        r_squared = 1.0 - (resid * resid).sum(axis=1) / syy
    collinear = usable & (r_squared >= _COLLINEAR_R2)
    tested = usable & ~collinear
    tstat = np.full(log_a.shape[0], np.nan)
    tstat[collinear] = -np.inf
    if tested.any():
        tstat[tested] = adf_statistics(resid[tested], constant=False)
    return mackinnon_pvalue(tstat, n_series=2), slope


@dataclass(frozen=True)
class CointegrationMetric:
    """``coint_pvalue`` and ``hedge_ratio``: the Engle-Granger test of log A on log B."""

    name: str = "cointegration"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "coint_pvalue",
            description="Engle-Granger p-value of log A and log B over W (statsmodels coint, "
            "constant, AIC lags, MacKinnon N=2); small = cointegrated. Null for a flat leg.",
            nullable=True,
        ),
        MetricField(
            "hedge_ratio",
            description="OLS slope of log A on log B over W: units of B's log price per unit "
            "of A's in the cointegrating spread. Null for a flat leg.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        pvalue, slope = engle_granger(*window_logs(panel))
        return {"coint_pvalue": pvalue, "hedge_ratio": slope}


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The Engle-Granger cointegration metric."""
    return [CointegrationMetric()]
