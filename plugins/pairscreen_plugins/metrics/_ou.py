"""The log-ratio as an Ornstein-Uhlenbeck process, and Bertram's optimal bands, over arrays.

``dX = μ(θ - X) dt + sigma dW`` sampled every ``Δ`` days is an AR(1), ``X_t = a + b X_{t-1} + ε``
with ``b = e^{-μΔ}``, ``a = θ(1 - b)`` and ``Var ε = sigma²(1 - b²) / (2μ)``. The exact conditional
maximum-likelihood fit is therefore the OLS fit of the AR(1), mapped back (docs/methodology.md).

Bertram (2010) trades the process at ``a`` (enter) and ``m = 2θ - a`` (exit). With
``u = (a - θ)√μ / sigma`` and ``k = c√μ / (2 sigma)``, his first-order condition for the
maximum of the expected return per unit time (eq. 13, from eq. 5 over the trade length of
eq. 9) reduces to
``D(u) - u = k``, ``D`` Dawson's function: ``f(u) = D(u) - u`` falls strictly on ``u < 0``
from ``+∞`` to ``0``, so for ``c > 0`` there is one root, and it lies in ``(-k - 1, -k)``
(``|D| < 0.55``). Everything is elementwise, so a whole panel (or every simulated day of a
backtest) is solved at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import days_between

DAYS_PER_YEAR = 365.0  # calendar days: μ is per calendar day
_NEWTON_STEPS = 60


@dataclass(frozen=True)
class OUFit:
    """Per row: θ, μ (per day), sigma (per √day) and the AR(1) slope ``b``; NaN where no fit."""

    mean: np.ndarray
    speed: np.ndarray
    sigma: np.ndarray
    slope: np.ndarray
    step_days: np.ndarray

    @property
    def half_life_days(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            half: np.ndarray = np.log(2.0) / self.speed
        return half


def ar1_sums(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """OLS of ``y`` on ``x`` with a constant, per row: ``(b, a, s²)``, ``s²`` the mean
    squared residual over the row's transitions (NaN slope for a flat ``x``).

    Sums run along each row (``sum(axis=1)``), so a row gets the same bits in any panel.
    """
    n = x.shape[1]
    mean_x = x.sum(axis=1) / n
    mean_y = y.sum(axis=1) / n
    dx = x - mean_x[:, None]
    dy = y - mean_y[:, None]
    sxx = (dx * dx).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(sxx > 0, (dx * dy).sum(axis=1) / sxx, np.nan)
        a = mean_y - b * mean_x
        resid = dy - b[:, None] * dx
        s2 = (resid * resid).sum(axis=1) / n
    return b, a, s2


def ou_from_ar1(
    b: np.ndarray, a: np.ndarray, s2: np.ndarray, step_days: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """θ, μ and sigma from the AR(1) ``(b, a, s²)`` sampled every ``step_days``; NaN unless
    ``0 < b < 1`` (``b ≥ 1`` does not revert, ``b ≤ 0`` has no continuous-time OU)."""
    ok = (b > 0) & (b < 1) & (step_days > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe_b = np.where(ok, b, 0.5)
        speed = -np.log(safe_b) / np.where(ok, step_days, 1.0)
        mean = a / (1.0 - safe_b)
        sigma = np.sqrt(s2 * 2.0 * speed / (1.0 - safe_b * safe_b))
    nan = np.nan
    return np.where(ok, mean, nan), np.where(ok, speed, nan), np.where(ok, sigma, nan)


def fit_ou(window: np.ndarray, dates: np.ndarray) -> OUFit:
    """The exact conditional MLE of the OU process on every row of ``window``.

    ``dates`` are the rows' days (same shape); the step ``Δ`` is the row's calendar span over
    its transitions: exactly 1 day for a close every day, more where the calendars leave gaps.
    """
    r = np.asarray(window, dtype=float)
    if r.shape[1] < 3:
        return fit_ou_step(r, np.full(r.shape[0], np.nan))
    span = days_between(dates[:, -1], dates[:, 0])
    return fit_ou_step(r, span / (r.shape[1] - 1))


def fit_ou_step(window: np.ndarray, step: np.ndarray) -> OUFit:
    """:func:`fit_ou` with the step ``Δ`` (calendar days between observations, per row)
    given, as a panel's :meth:`~pairscreen.contracts.PairPanel.spacing` gives it."""
    r = np.asarray(window, dtype=float)
    n_pairs, n = r.shape
    if n < 3:
        blank = np.full(n_pairs, np.nan)
        return OUFit(blank, blank, blank, blank, blank)
    step = np.asarray(step, dtype=float)
    b, a, s2 = ar1_sums(r[:, :-1], r[:, 1:])
    mean, speed, sigma = ou_from_ar1(b, a, s2, step)
    return OUFit(mean, speed, sigma, b, step)


def no_fit_reasons(fit: OUFit) -> np.ndarray:
    """Why each row has no OU fit (``""`` where it has one)."""
    out = np.full(fit.slope.shape, "", dtype=object)
    for i in np.flatnonzero(~np.isfinite(fit.speed)):
        b = float(fit.slope[i])
        if not math.isfinite(b):
            out[i] = "the window's log-ratio does not move"
        elif b >= 1:
            out[i] = f"no mean reversion: AR(1) slope b = {b:.4f} >= 1"
        elif b <= 0:
            out[i] = f"AR(1) slope b = {b:.4f} <= 0: the ratio overshoots its mean every step"
        else:
            out[i] = "no usable calendar span"
    return out.astype(str)


def round_trip_cost(per_swap: np.ndarray | float) -> np.ndarray:
    """``c = -2 ln(1 - cost per swap)``: two swaps' cost in log-ratio units."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(-2.0 * np.log1p(-np.asarray(per_swap, dtype=float)))


@dataclass(frozen=True)
class BertramBands:
    """Per row: entry ``a < θ``, exit ``m = 2θ - a``, the expected trade length (days) and
    the expected log return per year; NaN where the fit or the cost does not allow them."""

    entry: np.ndarray
    exit: np.ndarray
    trade_days: np.ndarray
    return_per_year: np.ndarray


# D(u) - u = sum_n>=1 (-2)^n u^(2n+1) / (2n+1)!!: near 0, where dawsn(u) - u would cancel.
_SERIES = tuple((-2.0) ** n / math.prod(range(1, 2 * n + 2, 2)) for n in range(1, 14))
_SERIES_BELOW = 0.25


def dawson_excess(u: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``D(u) - u`` to full relative precision (``d`` is ``D(u)``): the series near 0."""
    u2 = u * u
    series = np.zeros_like(u)
    for c in reversed(_SERIES):
        series = series * u2 + c
    near: np.ndarray = np.abs(u) < _SERIES_BELOW
    excess: np.ndarray = np.where(near, series * u2 * u, d - u)
    return excess


def dawson_root(k: np.ndarray) -> np.ndarray:
    """The ``u < 0`` with ``D(u) - u = k`` for every ``k > 0`` (NaN elsewhere).

    Newton's steps (``f' = -2uD(u)``) kept inside the bracket ``(-k - 1, -k)``, which shrinks
    around the root every step; a step leaving it is replaced by the bisection. Each element
    stops on its own once a step moves it by a few ulps, so its iterates (and its bits) never
    depend on the other elements: a pair gets the same levels in any panel.
    """
    from scipy.special import dawsn

    k = np.asarray(k, dtype=float)
    flat_k = k.ravel()
    out = np.full(flat_k.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(flat_k) & (flat_k > 0))
    kk = flat_k[idx]
    lo, hi = -kk - 1.0, -kk
    # Small k: D(u) - u ≈ -2u³/3; large k: u ≈ -k. Start near whichever holds.
    u = np.clip(-np.cbrt(1.5 * kk) - kk, lo, hi)
    for _ in range(_NEWTON_STEPS):
        if idx.size == 0:
            break
        d = dawsn(u)
        f = dawson_excess(u, d) - kk
        lo = np.where(f > 0, u, lo)
        hi = np.where(f <= 0, u, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = u - f / (-2.0 * u * d)
        inside = np.isfinite(newton) & (newton >= lo) & (newton <= hi)
        nxt = np.where(f == 0, u, np.where(inside, newton, 0.5 * (lo + hi)))
        done = np.abs(nxt - u) <= 1e-14 * np.abs(u)
        out[idx[done]] = nxt[done]
        keep = ~done
        idx, kk, lo, hi, u = idx[keep], kk[keep], lo[keep], hi[keep], nxt[keep]
    out[idx] = u  # not settled within the step budget (never seen): the last iterate
    return out.reshape(k.shape)


def bertram_bands(
    mean: np.ndarray, speed: np.ndarray, sigma: np.ndarray, cost: np.ndarray
) -> BertramBands:
    """Bertram's thresholds maximising the expected return per unit time, symmetric about θ.

    ``cost`` is the round-trip cost ``c`` in log-ratio units. The expected trade length is
    eq. 9, ``(π/μ)(erfi((m - θ)√μ/sigma) - erfi((a - θ)√μ/sigma))``, in days since μ is per day; the
    expected return per unit time is eq. 5, ``(m - a - c)`` over it, here per 365 days.
    """
    from scipy.special import erfi

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = sigma / np.sqrt(speed)  # sigma/√μ: log-ratio units per unit of u
        u = dawson_root(cost / (2.0 * scale))
        entry = mean + u * scale
        exit_ = mean - u * scale
        trade_days = (np.pi / speed) * (erfi(-u) - erfi(u))
        per_day = (exit_ - entry - cost) / trade_days
    return BertramBands(entry, exit_, trade_days, per_day * DAYS_PER_YEAR)
