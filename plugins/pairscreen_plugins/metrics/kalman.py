"""A dynamic hedge ratio: the Kalman filter of ``ln A = β·ln B + alpha`` over ``W``, per pair.

The OLS hedge ratio of the cointegration metric is one slope for the whole window; a pair
whose relation drifts (a token re-pegged, a merger, a regime change) has none that fits
both halves. The Kalman filter lets ``β`` and ``alpha`` follow a random walk and reports where
they are now, the last close's forecast error against them (the spread a trader would trade)
in units of its own standard deviation, and how far ``β`` travelled over the window.

The recursion (``_kalman``) is ArbitrageLab's ``KalmanFilterStrategy.update`` after Chan,
run over the log closes of both legs on ``W``'s closes (the window the cointegration metric
regresses). ``q`` and ``r`` are this plugin's options; the defaults are the reference's
(ArbitrageLab's ``transition_covariance = 1e-4`` and ``observation_covariance = 1e-3``, which
are Chan's ``δ = 1e-4``, ``V_w = δ/(1-δ)·I ≈ 1e-4·I`` and ``V_e = 1e-3`` of his EWA-EWC example),
not fitted to any data. With the option ``fit = "mle"`` each pair's ``q`` and ``r`` are instead
its own maximum-likelihood estimates on the same closes (``_kalman_mle``), and the filter
runs with them; ``kalman_q`` and ``kalman_r`` say which variances each row ran with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, PluginOption, hookimpl
from pairscreen_plugins.metrics._kalman import KalmanRun, kalman_filter
from pairscreen_plugins.metrics._kalman_mle import fit_variances
from pairscreen_plugins.metrics._log_prices import window_logs

DEFAULT_Q = 1e-4  # state noise variance per close (ArbitrageLab's transition_covariance)
DEFAULT_R = 1e-3  # observation noise variance (ArbitrageLab's observation_covariance)
# The filter starts from β = alpha = 0 with no uncertainty; its first closes are that start
# wearing off, not the pair. The drift is measured from β after this many closes (a month
# of daily closes), and a window needs one close more than that for any field.
BURN_IN = 30
MIN_CLOSES = BURN_IN + 1
FITS = ("fixed", "mle")  # q and r as the options give them, or fitted per pair

_NULL = " Null with kalman_reason when W holds fewer than 31 closes or Q is not a positive number."


@dataclass(frozen=True)
class KalmanMetric:
    """The Kalman filter's latest hedge ratio, intercept, spread, its z and the drift of β."""

    q: float = DEFAULT_Q
    r: float = DEFAULT_R
    fit: str = "fixed"
    name: str = "kalman"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "kalman_hedge_ratio",
            description="β after W's last close in the Kalman filter of ln A = β ln B + alpha "
            "(random-walk state, q and r the plugin's options): ln A moves β per unit of "
            "ln B." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_intercept",
            description="alpha after W's last close in the same filter, in log units of A." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_spread",
            description="The last close's forecast error e = ln A - (β ln B + alpha) with the "
            "state before that close, in log units of A." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_spread_std",
            description="√Q, the standard deviation of kalman_spread the filter expects "
            "(Q = F R Fᵀ + r)." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_z",
            description="kalman_spread / kalman_spread_std: the last forecast error in its "
            "own standard deviations; null where kalman_spread_std is." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_hedge_drift",
            description="(β after W's last close - β after W's first 30 closes) / |β after "
            "the last|: how far the hedge ratio moved over the window as a fraction of its "
            "latest value; also null when that β is 0." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_q",
            description="The state noise variance q the filter ran with: the plugin's option, "
            "or with fit = \"mle\" this pair's maximum-likelihood estimate on W's closes. "
            "Also null when that fit has no interior maximum." + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_r",
            description="The observation noise variance r the filter ran with, as kalman_q."
            + _NULL,
            nullable=True,
        ),
        MetricField(
            "kalman_reason",
            type="string",
            description="Why Kalman fields are null (too few closes in W, Q not positive, "
            "a hedge ratio of 0); empty when all are set.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        log_a, log_b = window_logs(panel)
        closes = log_a.shape[1]
        if closes < MIN_CLOSES:  # every row of a panel has W on the same closes
            nan = np.full(panel.n_pairs, np.nan)
            reason = f"W holds {closes} closes, the Kalman filter needs at least {MIN_CLOSES}"
            return {
                **{f.name: nan for f in self.fields if f.type == "number"},
                "kalman_reason": np.full(panel.n_pairs, reason),
            }
        if self.fit == "fixed":
            q, r = np.full(panel.n_pairs, self.q), np.full(panel.n_pairs, self.r)
            with np.errstate(divide="ignore", invalid="ignore"):
                fields = published(
                    kalman_filter(log_a, log_b, q=self.q, r=self.r, burn_in=BURN_IN), q, r
                )
            return without_constant_b(fields, log_b)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            fit = fit_variances(log_a, log_b, burn=BURN_IN)
            fitted = np.isfinite(fit.q)
            # Rows without a fit run with the options only to keep the panel in one piece;
            # their numbers are dropped below.
            q, r = np.where(fitted, fit.q, self.q), np.where(fitted, fit.r, self.r)
            fields = published(kalman_filter(log_a, log_b, q=q, r=r, burn_in=BURN_IN), q, r)
        for name, column in fields.items():
            if name != "kalman_reason":
                column[~fitted] = np.nan
        fields["kalman_reason"] = np.where(fitted, fields["kalman_reason"], fit.reasons)
        return fields


CONSTANT_B = (
    "ln B is constant over W: the hedge ratio and the intercept cannot be told apart "
    "(not identified)"
)


def without_constant_b(fields: dict[str, np.ndarray], log_b: np.ndarray) -> dict[str, np.ndarray]:
    """``fields`` with every number null where ln B does not move over W: its regressor is
    then a second intercept, and the filter's split of the level between β and the
    intercept is an artefact of its start, not an estimate."""
    constant = np.ptp(log_b, axis=1) == 0
    if constant.any():
        for name, column in fields.items():
            if name != "kalman_reason":
                column[constant] = np.nan
        fields["kalman_reason"] = np.where(constant, CONSTANT_B, fields["kalman_reason"])
    return fields


def published(run: KalmanRun, q: np.ndarray, r: np.ndarray) -> dict[str, np.ndarray]:
    """The fields of a filter run, NaN where they have no meaning, and why.

    A row whose last ``Q`` is not a positive number (``q = r = 0`` leaves ``K = 0/0``) has no
    filter at all: every number is null. The drift is also null when ``β`` is exactly 0 (a
    a leg B that never moved would leave it there, but such a pair is null as a whole:
    :func:`without_constant_b`), as a fraction of 0 is no number.
    """
    filtered = np.isfinite(run.spread_var) & (run.spread_var > 0)
    filtered &= np.isfinite(run.hedge_ratio) & np.isfinite(run.intercept)
    filtered &= np.isfinite(run.spread) & np.isfinite(run.hedge_ratio_at_burn_in)
    beta = np.where(filtered, run.hedge_ratio, np.nan)
    std = np.where(filtered, np.sqrt(np.where(filtered, run.spread_var, 1.0)), np.nan)
    moved = beta != 0  # False for NaN too
    drift = np.where(
        moved, (beta - run.hedge_ratio_at_burn_in) / np.abs(np.where(moved, beta, 1.0)), np.nan
    )
    reasons = np.full(beta.shape, "", dtype=object)
    for i in np.flatnonzero(~filtered):
        reasons[i] = (
            f"the forecast-error variance Q = {float(run.spread_var[i]):.6g} is not a positive "
            "number: the filter is undefined"
        )
    for i in np.flatnonzero(filtered & ~moved):
        reasons[i] = "the hedge ratio is 0: its drift as a fraction of it is undefined"
    spread = np.where(filtered, run.spread, np.nan)
    return {
        "kalman_hedge_ratio": beta,
        "kalman_intercept": np.where(filtered, run.intercept, np.nan),
        "kalman_spread": spread,
        "kalman_spread_std": std,
        "kalman_z": spread / std,
        "kalman_hedge_drift": drift,
        "kalman_q": np.where(filtered, q, np.nan),
        "kalman_r": np.where(filtered, r, np.nan),
        "kalman_reason": reasons.astype(str),
    }


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """``q`` and ``r``, the filter's noise variances, and whether to fit them."""
    return [
        PluginOption(
            "q",
            DEFAULT_Q,
            "state noise variance per close of β and alpha (Q = q·I); larger follows the hedge "
            "ratio faster (default 1e-4, ArbitrageLab's and Chan's δ/(1-δ) with δ = 1e-4)",
        ),
        PluginOption(
            "r",
            DEFAULT_R,
            "observation noise variance of ln A around β ln B + alpha (default 1e-3, Chan's V_e)",
        ),
        PluginOption(
            "fit",
            "fixed",
            '"fixed" runs every pair with q and r; "mle" fits each pair\'s own q and r by '
            "maximum likelihood on W's closes (about 70 filter runs per pair)",
        ),
    ]


@hookimpl
def pairscreen_register_metrics(options: Mapping[str, Any]) -> list[Metric]:
    """The Kalman metric with the table's ``q``, ``r`` and ``fit`` (refused unless q > 0 and
    r > 0: a negative variance is no model, q = 0 with the start's zero covariance never moves
    the state from 0, and r = 0 lets Q vanish; and unless fit is one of ``FITS``)."""
    q, r, fit = float(options["q"]), float(options["r"]), str(options["fit"])
    if not (math.isfinite(q) and q > 0):
        raise ValueError(f"q = {q} must be a finite number > 0")
    if not (math.isfinite(r) and r > 0):
        raise ValueError(f"r = {r} must be a finite number > 0")
    if fit not in FITS:
        raise ValueError(f'fit = {fit!r} must be "fixed" or "mle"')
    return [KalmanMetric(q=q, r=r, fit=fit)]
