"""The Johansen trace test of two legs' log prices, batched over pairs.

Equal to statsmodels' ``coint_johansen(np.column_stack([log A, log B]), det_order=0,
k_ar_diff=1)``: ``lr1[0]`` (rank 0 against rank 1 or more) and ``cvt[0, 1]`` (its 95 %
critical value). statsmodels demeans the levels, regresses the differences ``dY_t`` and the
lagged levels ``Y_{t-1}`` on the (demeaned) lagged difference ``dY_{t-1}``, and takes the
eigenvalues ``a`` of ``S_kk^-1 S_k0 S_00^-1 S_0k`` from the residuals' moment matrices. The
trace statistic is ``-T sum(log(1 - a))``, and the sum of the logs is the log of
``det(I - S_kk^-1 S_k0 S_00^-1 S_0k)``: for two series a closed form in 2 x 2 matrices, so
every pair of a panel is done at once, without an eigen-decomposition.

A metric of its own (``johansen``), apart from the Engle-Granger ``cointegration`` metric:
no default rule reads it and it gets no q-value, so the screen computes it for the survivors
alone (a pair's numbers are the same in any panel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins.metrics._log_prices import window_logs

MIN_DAYS = 20  # as the Engle-Granger test: fewer leave the regressions almost no freedom
# statsmodels' ``c_sjt(2, 0)[1]`` (Osterwald-Lenum's table: two series, a constant, 95 %),
# kept as a number so that no worker imports statsmodels for it; the parity tests compare it.
TRACE_CRIT95 = 15.4943

_FIELDS: tuple[MetricField, ...] = (
    MetricField(
        "johansen_trace",
        description="Johansen trace statistic of log A and log B over W (statsmodels "
        "coint_johansen, det_order=0, k_ar_diff=1: rank 0 against rank >= 1); above "
        "johansen_trace_crit95 = cointegrated at 5 %. Null for a flat leg or a window under "
        "20 days.",
        nullable=True,
    ),
    MetricField(
        "johansen_trace_crit95",
        description="95 % critical value of johansen_trace (Osterwald-Lenum, two series, "
        "constant). Null where johansen_trace is.",
        nullable=True,
    ),
)


@dataclass(frozen=True)
class JohansenMetric:
    """``johansen_trace`` and its 95 % critical value, of log A and log B over ``W``."""

    name: str = "johansen"
    fields: tuple[MetricField, ...] = _FIELDS

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        trace, crit95 = johansen_trace(*window_logs(panel))
        return {"johansen_trace": trace, "johansen_trace_crit95": crit95}


def johansen_trace(log_a: np.ndarray, log_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the (pairs, days) arrays: the trace statistic and its 95 % critical value;
    NaN for a flat leg, (near-)singular moments or a row shorter than ``MIN_DAYS``.

    The six demeaned series (``dY_{t-1}``, ``dY_t``, ``Y_{t-1}``, two columns each) of every
    pair go through one batched Gram product; the residual moments are its Schur complement
    on the lagged differences, so no residual series is formed.
    """
    n_pairs, n = log_a.shape
    trace = np.full(n_pairs, np.nan)
    crit = np.full(n_pairs, np.nan)
    if n < MIN_DAYS or n_pairs == 0:
        return trace, crit
    diff_a, diff_b = np.diff(log_a, axis=1), np.diff(log_b, axis=1)
    series = np.stack(
        [
            diff_a[:, :-1],  # dY_{t-1}: the regressors
            diff_b[:, :-1],
            diff_a[:, 1:],  # dY_t
            diff_b[:, 1:],
            log_a[:, 1:-1],  # Y_{t-1}
            log_b[:, 1:-1],
        ],
        axis=1,
    )
    series -= series.mean(axis=2, keepdims=True)
    t = series.shape[2]
    gram = series @ np.swapaxes(series, 1, 2) / t  # (pairs, 6, 6)
    gzz = gram[:, :2, :2]
    fine = _well_conditioned(gzz)
    gzz = np.where(fine[:, None, None], gzz, np.eye(2))
    cross = gram[:, :2, 2:]
    moments = gram[:, 2:, 2:] - np.swapaxes(cross, 1, 2) @ _inv(gzz) @ cross  # (pairs, 4, 4)
    s00, skk, sk0 = moments[:, :2, :2], moments[:, 2:, 2:], moments[:, 2:, :2]
    usable = fine & _well_conditioned(s00) & _well_conditioned(skk)
    if not usable.any():
        return trace, crit
    s00, skk, sk0 = s00[usable], skk[usable], sk0[usable]
    # det(I - Skk^-1 Sk0 S00^-1 S0k) = det(Skk - Sk0 S00^-1 S0k) / det(Skk)
    inner = skk - sk0 @ _inv(s00) @ np.swapaxes(sk0, 1, 2)
    ratio = _det(inner) / _det(skk)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = -t * np.log(ratio)
    trace[usable] = np.where(ratio > 0, stat, np.nan)
    crit[usable] = np.where(ratio > 0, TRACE_CRIT95, np.nan)
    return trace, crit


def _det(m: np.ndarray) -> np.ndarray:
    det: np.ndarray = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    return det


def _inv(m: np.ndarray) -> np.ndarray:
    """Inverse of each 2 x 2 matrix (the adjugate over the determinant)."""
    adj = np.empty_like(m)
    adj[:, 0, 0], adj[:, 1, 1] = m[:, 1, 1], m[:, 0, 0]
    adj[:, 0, 1], adj[:, 1, 0] = -m[:, 0, 1], -m[:, 1, 0]
    inverse: np.ndarray = adj / _det(m)[:, None, None]
    return inverse


def _well_conditioned(m: np.ndarray) -> np.ndarray:
    """Whether a symmetric 2 x 2 moment matrix is far from singular (a flat or collinear leg
    makes statsmodels' inverse meaningless)."""
    diag = m[:, 0, 0] * m[:, 1, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ok: np.ndarray = (diag > 0) & (_det(m) / np.where(diag > 0, diag, 1.0) > 1e-10)
    return ok


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The Johansen trace metric."""
    return [JohansenMetric()]
