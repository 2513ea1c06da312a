"""Maximum-likelihood ``q`` and ``r`` of the Kalman filter, for many pairs at once.

The likelihood is the Gaussian one of the filter's own forecast errors (the prediction-error
decomposition): ``ln L = -½ Σ_t (ln 2π + ln Q_t + e_t²/Q_t)``, summed over the closes after
the first ``burn`` (the start at β = alpha = 0 with no uncertainty wearing off, the same
closes the drift is measured after; the reference model, statsmodels' ``MLEModel`` with that
start ``initialize_known`` and ``loglikelihood_burn``, sums the same terms).

Scaling ``q`` and ``r`` together by ``c`` scales every ``R``, ``P`` and ``Q`` by ``c`` and
leaves ``K``, the states and ``e`` as they were, so for a ratio ``λ = q/r`` the best ``r``
has a closed form, ``s² = mean(e_t²/Q̃_t)`` with ``Q̃`` the run at ``q = λ``, ``r = 1``, and
the likelihood is maximised over ``ln λ`` alone (the profile likelihood): ``-½ (n (ln 2π + 1
+ ln s²) + Σ ln Q̃_t)``. That one-dimensional search runs on every pair at once: a grid over
``ln λ`` finds the best cell, golden-section search narrows it, and a few regula falsi steps
on the slope (the derivative by ``ln λ``, exact to rounding by a complex step: the filter
run at ``ln λ + i·h``) find where it is zero; each evaluation is one run of the vectorised
filter over the whole panel, so there is no loop over pairs. A best ratio at either end of
the grid is a maximum on the boundary (the data do not identify it): no fit, with a reason;
so is a leg constant over the window (the filter learns it exactly and the likelihood grows
without bound as ``r`` goes to 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pairscreen_plugins.metrics._kalman import kalman_filter

# ln(q/r) searched: a state noise from 1e-8 to 100 times the observation noise. Chan's
# and ArbitrageLab's 0.1 sits inside; below, the state hardly moves from its start; above,
# it follows every close and the observation noise tends to 0 (the data tell no r).
LN_RATIO_LOW = math.log(1e-8)
LN_RATIO_HIGH = math.log(1e2)
GRID_STEP = 1.0  # in ln(q/r), about: the grid's ends are the range's
# Golden-section steps from a bracket of two grid steps: its width shrinks by 0.618 a step,
# to 1.5e-3 in ln(q/r) after 15. Much closer, the likelihood's rounding (1e-13 of it) can
# hide where the top is when it is flat (tried: 25 steps lost the top of BTC/PAXG by 4e-5);
# the slope cannot: regula falsi on the complex-step derivative finishes the search, to
# 1e-6 of statsmodels' q and r in 4 steps (8 gave the same).
GOLDEN_STEPS = 15
REFINE_STEPS = 4
_STEP = 1e-30  # the complex step: exact to rounding at any size, as no difference is taken
_INVERSE_PHI = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class KalmanFit:
    """Per pair, the maximum-likelihood variances (NaN where there is none, with why)."""

    q: np.ndarray
    r: np.ndarray
    log_likelihood: np.ndarray
    reasons: np.ndarray


def profile_log_likelihood(
    log_a: np.ndarray, log_b: np.ndarray, ln_ratio: np.ndarray, *, burn: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the log-likelihood maximised over the scale at ``q/r = exp(ln_ratio)``, and
    that scale (the best ``r``); NaN where the forecast errors are all zero."""
    closes = log_a.shape[1]
    n = closes - burn
    run = kalman_filter(log_a, log_b, q=np.exp(ln_ratio), r=1.0, burn_in=burn, likelihood_from=burn)
    assert run.log_q_sum is not None and run.scaled_sq_sum is not None
    scale = run.scaled_sq_sum / n
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = -0.5 * (n * (math.log(2.0 * math.pi) + 1.0 + np.log(scale)) + run.log_q_sum)
    ll = np.where(np.isfinite(ll) & (scale > 0), ll, np.nan)
    return ll, scale


def fit_variances(log_a: np.ndarray, log_b: np.ndarray, *, burn: int) -> KalmanFit:
    """The maximum-likelihood ``q`` and ``r`` of every row (see the module doc); the rows
    need more than ``burn`` closes."""
    pairs = log_a.shape[0]
    points = round((LN_RATIO_HIGH - LN_RATIO_LOW) / GRID_STEP) + 1  # both ends exact
    grid = np.linspace(LN_RATIO_LOW, LN_RATIO_HIGH, points)
    values = np.full((grid.size, pairs), -np.inf)
    for k, point in enumerate(grid):
        ll, _ = profile_log_likelihood(log_a, log_b, np.full(pairs, point), burn=burn)
        values[k] = np.where(np.isnan(ll), -np.inf, ll)
    best = np.argmax(values, axis=0)
    defined = np.isfinite(values[best, np.arange(pairs)])
    inside = defined & (best > 0) & (best < grid.size - 1)
    inner = np.clip(best, 1, grid.size - 2)
    low, high = _golden(log_a, log_b, grid[inner - 1], grid[inner + 1], burn)
    ln_ratio = _zero_slope(log_a, log_b, low, high, burn)
    ll_best, scale = profile_log_likelihood(log_a, log_b, ln_ratio, burn=burn)
    flat_a = np.ptp(log_a, axis=1) == 0
    flat_b = np.ptp(log_b, axis=1) == 0
    ok = inside & np.isfinite(ll_best) & ~flat_a & ~flat_b
    reasons = np.full(pairs, "", dtype=object)
    for i in np.flatnonzero(~defined):
        reasons[i] = "the likelihood of q and r is undefined: the forecast errors are all 0"
    for i in np.flatnonzero(defined & ~inside):
        edge = "1e-8" if best[i] == 0 else "100"
        reasons[i] = (
            f"the likelihood is largest at q/r = {edge}, the end of the range searched: "
            "q and r are not identified"
        )
    for flat, leg in ((flat_b, "B"), (flat_a, "A")):
        for i in np.flatnonzero(flat):
            reasons[i] = f"ln {leg} is constant over W: q and r have no maximum-likelihood estimate"
    return KalmanFit(
        q=np.where(ok, np.exp(ln_ratio) * scale, np.nan),
        r=np.where(ok, scale, np.nan),
        log_likelihood=np.where(ok, ll_best, np.nan),
        reasons=reasons.astype(str),
    )


def _golden(
    log_a: np.ndarray, log_b: np.ndarray, low: np.ndarray, high: np.ndarray, burn: int
) -> tuple[np.ndarray, np.ndarray]:
    """Golden-section search for the largest profile likelihood in ``[low, high]``, all rows
    in step; the bracket left."""
    c = high - _INVERSE_PHI * (high - low)
    d = low + _INVERSE_PHI * (high - low)
    fc = _finite(profile_log_likelihood(log_a, log_b, c, burn=burn)[0])
    fd = _finite(profile_log_likelihood(log_a, log_b, d, burn=burn)[0])
    for _ in range(GOLDEN_STEPS):
        # f(c) >= f(d): the maximum is in [low, d], where c is the upper inner point;
        # otherwise in [c, high], where d is the lower one. One new point either way.
        left = fc >= fd
        high = np.where(left, d, high)
        low = np.where(left, low, c)
        kept, kept_f = np.where(left, c, d), np.where(left, fc, fd)
        width = _INVERSE_PHI * (high - low)
        point = np.where(left, high - width, low + width)
        value = _finite(profile_log_likelihood(log_a, log_b, point, burn=burn)[0])
        c, fc = np.where(left, point, kept), np.where(left, value, kept_f)
        d, fd = np.where(left, kept, point), np.where(left, kept_f, value)
    return low, high


def _zero_slope(
    log_a: np.ndarray, log_b: np.ndarray, low: np.ndarray, high: np.ndarray, burn: int
) -> np.ndarray:
    """Where the slope of the profile likelihood is zero in ``[low, high]``: regula falsi,
    Illinois variant (an end kept twice has its slope halved, so neither end sticks); the
    bracket's middle for a row whose slope does not change sign there."""
    s_low, s_high = _slope(log_a, log_b, low, burn), _slope(log_a, log_b, high, burn)
    point = (low + high) / 2
    turns = (s_low > 0) & (s_high < 0)
    moved_low = np.zeros(low.shape, dtype=bool)
    moved_high = np.zeros(low.shape, dtype=bool)
    for _ in range(REFINE_STEPS):
        with np.errstate(divide="ignore", invalid="ignore"):
            guess = low - s_low * (high - low) / (s_high - s_low)
        live = turns & (guess > low) & (guess < high)
        point = np.where(live, guess, point)
        slope = _slope(log_a, log_b, point, burn)
        rising, falling = live & (slope > 0), live & (slope < 0)
        s_high = np.where(rising & moved_low, s_high / 2, s_high)
        s_low = np.where(falling & moved_high, s_low / 2, s_low)
        low, s_low = np.where(rising, point, low), np.where(rising, slope, s_low)
        high, s_high = np.where(falling, point, high), np.where(falling, slope, s_high)
        moved_low, moved_high = rising, falling
    return np.asarray(point, dtype=np.float64)


def _slope(log_a: np.ndarray, log_b: np.ndarray, ln_ratio: np.ndarray, burn: int) -> np.ndarray:
    """d(profile log-likelihood)/d(ln q/r) at ``ln_ratio``, by the complex step."""
    n = log_a.shape[1] - burn
    run = kalman_filter(
        log_a, log_b, q=np.exp(ln_ratio + 1j * _STEP), r=1.0, burn_in=burn, likelihood_from=burn
    )
    assert run.log_q_sum is not None and run.scaled_sq_sum is not None
    ll = -0.5 * (n * np.log(run.scaled_sq_sum / n) + run.log_q_sum)
    return np.asarray(ll.imag / _STEP, dtype=np.float64)


def _finite(ll: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(ll), -np.inf, ll)
