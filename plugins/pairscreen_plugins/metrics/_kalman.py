"""The Kalman filter of a dynamic hedge ratio, run over many pairs at once.

The model is Chan's (Algorithmic Trading, 2013, ch. 3) as ArbitrageLab's
``KalmanFilterStrategy.update`` runs it: the state ``s = (β, alpha)`` is a random walk
(transition ``I``, state noise ``q·I``) observed through ``ln A_t = β·ln B_t + alpha + e_t``
with variance ``r`` (``F_t = [ln B_t, 1]``). The state starts at zero with covariance zero,
and each close runs

    R = P + q·I   (R = 0 on the first close: there is no previous P yet)
    e = y - F·s,  Q = F·R·Fᵀ + r,  K = R·Fᵀ / Q,  s ← s + K·e,  P = R - K·F·R

On the first close ``R = 0`` makes ``K = 0``: the state and ``P`` stay zero and only ``e``
and ``Q`` (= ``r``) come out of it, so the loop below starts at the second close with ``P =
0``.

A loop over the closes is unavoidable (each step needs the last), but every step works on
whole columns: the 2x2 algebra is written out per entry over arrays of shape ``(pairs,)``,
updated in place in buffers allocated once, so no per-pair loop and no per-step temporaries.
``P`` is kept as its three distinct entries (it is symmetric); ``R·Fᵀ`` and ``F·R`` are then
the same vector ``g``, and ``K·F·R = g·gᵀ / Q``.

Given ``keep_from``, the run also keeps every close's ``e`` and ``Q`` from that close on (the
``kalman_band`` strategy decides on each day's ``e/√Q``, and its chart draws them).

``q`` and ``r`` are one number for every pair or one per pair (the maximum-likelihood fit
runs the filter with each pair's own), real or complex: every step is analytic, so a run at
``q + ih`` carries the derivative by ``q`` in its imaginary parts (the complex step). Given
``likelihood_from``, the run also sums, from that close on, the two terms of the Gaussian
log-likelihood's prediction-error decomposition, ``ln Q_t`` and ``e_t²/Q_t``
(``_kalman_mle``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KalmanRun:
    """Per pair, what the filter leaves after the last close of the window.

    ``hedge_ratio`` and ``intercept`` are the state after the last close; ``spread`` and
    ``spread_var`` are that close's forecast error ``e`` and its variance ``Q`` (the state
    before the close predicts it); ``hedge_ratio_at_burn_in`` is ``β`` after the first
    ``burn_in`` closes.
    """

    hedge_ratio: np.ndarray
    intercept: np.ndarray
    spread: np.ndarray
    spread_var: np.ndarray
    hedge_ratio_at_burn_in: np.ndarray
    spreads: np.ndarray | None = None  # (pairs, closes - keep_from): each close's e
    spread_vars: np.ndarray | None = None  # (pairs, closes - keep_from): each close's Q
    log_q_sum: np.ndarray | None = None
    scaled_sq_sum: np.ndarray | None = None


Variance = float | np.ndarray


def kalman_filter(
    log_a: np.ndarray,
    log_b: np.ndarray,
    *,
    q: Variance,
    r: Variance,
    burn_in: int,
    keep_from: int | None = None,
    likelihood_from: int | None = None,
) -> KalmanRun:
    """Run the recursion over each row of ``log_a`` (``y``) and ``log_b`` (``x``), shape
    (pairs, closes) with at least one close; ``1 <= burn_in <= closes``; ``q`` and ``r``
    scalars or of shape (pairs,). With ``keep_from = k`` the run's ``spreads`` and
    ``spread_vars`` hold ``e`` and ``Q`` of the closes ``t >= k`` (counted from 0); with
    ``likelihood_from = k`` its ``log_q_sum`` and ``scaled_sq_sum`` are the sums of ``ln Q_t``
    and ``e_t²/Q_t`` over closes ``t >= k``."""
    pairs, closes = log_a.shape
    if closes < 1 or not 1 <= burn_in <= closes:
        raise ValueError(f"{closes} closes cannot hold a burn-in of {burn_in}")
    if keep_from is not None and not 0 <= keep_from < closes:
        raise ValueError(f"{closes} closes hold no close {keep_from} to keep from")
    if likelihood_from is not None and not 0 <= likelihood_from < closes:
        raise ValueError(f"{closes} closes hold no likelihood from close {likelihood_from}")
    # Column-major time: each step reads one contiguous row of (pairs,).
    ys = np.ascontiguousarray(log_a.T, dtype=np.float64)
    xs = np.ascontiguousarray(log_b.T, dtype=np.float64)
    # Complex q or r run the same steps in complex numbers (the fit's complex-step derivative).
    kind = np.result_type(q, r, np.float64)
    beta, alpha = np.zeros(pairs, kind), np.zeros(pairs, kind)
    p11, p12, p22 = np.zeros(pairs, kind), np.zeros(pairs, kind), np.zeros(pairs, kind)
    g1, g2 = np.empty(pairs, kind), np.empty(pairs, kind)
    big_q, e, k, tmp = (np.empty(pairs, kind) for _ in range(4))
    # The first close: R = 0, so K = 0, the state and P stay zero; e = y, Q = r.
    np.copyto(e, ys[0])
    big_q[...] = r
    beta_burn = beta.copy()
    kept = 0 if keep_from is None else closes - keep_from
    spreads, spread_vars = np.empty((kept, pairs), kind), np.empty((kept, pairs), kind)
    if keep_from == 0:
        spreads[0], spread_vars[0] = e, big_q
    sum_from = closes if likelihood_from is None else likelihood_from
    log_q_sum, sq_sum = np.zeros(pairs, kind), np.zeros(pairs, kind)
    if likelihood_from == 0:
        add_likelihood_terms(e, big_q, log_q_sum, sq_sum, tmp)
    for t in range(1, closes):
        x, y = xs[t], ys[t]
        # R = P + q·I, in place in P's buffers (P's old value is not needed again).
        p11 += q
        p22 += q
        # g = R·Fᵀ = (r11·x + r12, r12·x + r22)
        np.multiply(p11, x, out=g1)
        g1 += p12
        np.multiply(p12, x, out=g2)
        g2 += p22
        # Q = F·R·Fᵀ + r = g1·x + g2 + r
        np.multiply(g1, x, out=big_q)
        big_q += g2
        big_q += r
        # e = y - (β·x + alpha)
        np.multiply(beta, x, out=tmp)
        tmp += alpha
        np.subtract(y, tmp, out=e)
        # P = R - g·gᵀ/Q, then s ← s + g·e/Q (K = g/Q), one K entry at a time.
        np.divide(g1, big_q, out=k)
        np.multiply(k, g1, out=tmp)
        p11 -= tmp
        np.multiply(k, g2, out=tmp)
        p12 -= tmp
        np.multiply(k, e, out=tmp)
        beta += tmp
        np.divide(g2, big_q, out=k)
        np.multiply(k, g2, out=tmp)
        p22 -= tmp
        np.multiply(k, e, out=tmp)
        alpha += tmp
        if t == burn_in - 1:
            np.copyto(beta_burn, beta)
        if kept and t >= closes - kept:
            spreads[t - closes + kept], spread_vars[t - closes + kept] = e, big_q
        if t >= sum_from:
            add_likelihood_terms(e, big_q, log_q_sum, sq_sum, tmp)
    return KalmanRun(
        beta,
        alpha,
        e,
        big_q,
        beta_burn,
        spreads.T if keep_from is not None else None,
        spread_vars.T if keep_from is not None else None,
        log_q_sum if likelihood_from is not None else None,
        sq_sum if likelihood_from is not None else None,
    )


def add_likelihood_terms(
    e: np.ndarray, big_q: np.ndarray, log_q_sum: np.ndarray, sq_sum: np.ndarray, tmp: np.ndarray
) -> None:
    """Add one close's ``ln Q`` and ``e²/Q`` to the sums, in place (``tmp`` is scratch)."""
    np.log(big_q, out=tmp)
    log_q_sum += tmp
    np.square(e, out=tmp)
    tmp /= big_q
    sq_sum += tmp
