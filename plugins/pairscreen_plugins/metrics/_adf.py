"""Batched augmented Dickey-Fuller tests, equal to statsmodels' ``adfuller`` to 1e-9.

``adfuller(x, regression="c", autolag="AIC")`` fits ``maxlag + 1`` OLS regressions per series
(lag search on a common sample, then a re-fit with the chosen lag on the full sample). Doing
that with statsmodels for thousands of pairs costs tens of ms each, so here every pair of a
chunk is solved at once from Cholesky factors of small Gram matrices:

* The constant is removed by centring every column over the sample (Frisch-Waugh-Lovell),
  after shifting each series by its mean so the centring correction is small. Without a
  constant (``regression="n"``, the Engle-Granger residual test) the raw products serve.
* The lag columns are shifts of one series, so their Gram block is built from one row of
  dot products and rank-one updates down its diagonals (see ``_Products.of``); the re-fit's
  sample only adds the first ``maxlag - lag`` rows to the search's.
* The lag search regressions are nested (level, lag 1, ..., lag k), so one Cholesky factor of
  the Gram matrix of ``[level, lag_1..lag_maxlag, y]`` gives every SSR at once: the SSR of the
  first ``c`` regressors is the sum of squares of the last row of the factor from ``c`` on.
* In the re-fit the level is ordered last, so its t-statistic is
  ``L[y, level] * sqrt(df) / L[y, y]`` with no inversion; lags beyond a pair's choice are
  decoupled so that one factorisation serves every lag length.

Rows where this shortcut could disagree with statsmodels (a constant or near-collinear
column, where statsmodels' pseudo-inverse and rank logic take over, or two lag lengths whose
AIC tie to within rounding) are recomputed with statsmodels itself, so the answer is always
statsmodels' answer.
"""

from __future__ import annotations

import warnings
from typing import cast

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pairscreen_plugins.metrics._mackinnon import (
    TAU_C_LARGEP,
    TAU_C_SMALLP,
    TAU_MAX_C,
    TAU_MIN_C,
    TAU_STAR_C,
)

# A pivot of the Cholesky factor below this fraction of its column's norm means the
# regressors are (numerically) collinear: statsmodels' pinv/rank handling decides then.
_COLLINEAR_RTOL = 1e-10
# Two lag lengths whose AIC differ by less than this may be ordered differently by rounding.
_AIC_TIE_ATOL = 1e-7
# Pairs per chunk: the screen decides 500 pairs at a time (DECIDE_ROWS), so one chunk takes
# them all (512 measured ~3% faster than 256); the largest temporaries are chunk x nobs doubles.
_CHUNK = 512


def mackinnon_pvalue(tstat: np.ndarray, n_series: int = 1) -> np.ndarray:
    """MacKinnon's approximate p-value of ADF t-statistics (regression "c"), vectorised.

    ``n_series`` is MacKinnon's N: 1 for a unit-root test of one series, 2 for the
    Engle-Granger test of two. The same piecewise formula and response-surface tables
    (``_mackinnon``) as ``statsmodels.tsa.adfvalues.mackinnonp``: 1 above the table's
    maximum, 0 below its minimum, otherwise the normal CDF of a polynomial in the statistic
    (small-p coefficients at or below the cut-off, large-p ones above it).
    """
    from scipy.special import ndtr  # the normal CDF alone: no scipy.stats at start-up

    row = n_series - 1
    t = np.asarray(tstat, dtype=float)
    with np.errstate(invalid="ignore"):  # an infinite statistic: the table's ends decide
        small = ndtr(np.polyval(TAU_C_SMALLP[row][::-1], t))
        large = ndtr(np.polyval(TAU_C_LARGEP[row][::-1], t))
    p = np.where(t <= TAU_STAR_C[row], small, large)
    p = np.where(t > TAU_MAX_C[row], 1.0, p)
    p = np.where(t < TAU_MIN_C[row], 0.0, p)
    return np.where(np.isnan(t), np.nan, p)


def default_maxlag(nobs: int, constant: bool = True) -> int:
    """statsmodels' default maximum lag (Schwert's rule, capped by the sample size)."""
    maxlag = int(np.ceil(12.0 * np.power(nobs / 100.0, 1 / 4.0)))
    return min(nobs // 2 - int(constant) - 1, maxlag)


def adf_pvalues(x: np.ndarray) -> np.ndarray:
    """ADF p-value of every row of ``x`` (pairs, days); a constant row gives 1.0.

    Equal to ``adfuller(row, regression="c", autolag="AIC")[1]`` to 1e-9 (in practice to
    ~1e-14); the constant-row convention is pairscan-rmr's ``adf_pvalue``.
    """
    x = np.ascontiguousarray(x, dtype=float)
    high, low = x.max(axis=1), x.min(axis=1)
    constant_row = high == low
    out = mackinnon_pvalue(_statistics(x, True, constant_row, _finite(high, low)))
    out[constant_row] = 1.0
    return out


def adf_statistics(
    x: np.ndarray, *, constant: bool, finite_and_varying: bool = False
) -> np.ndarray:
    """ADF t-statistic of every row of ``x`` (pairs, days), AIC lag search.

    Equal to ``adfuller(row, regression="c" if constant else "n", autolag="AIC")[0]``; NaN
    for a constant row or one with a non-finite value (statsmodels refuses both). A caller
    that knows every row to be finite and not constant says so, and the check (two passes
    over ``x``) is skipped.
    """
    x = np.ascontiguousarray(x, dtype=float)
    if finite_and_varying:
        everything = np.ones(x.shape[0], dtype=bool)
        return _statistics(x, constant, ~everything, everything)
    high, low = x.max(axis=1), x.min(axis=1)
    return _statistics(x, constant, high == low, _finite(high, low))


def _finite(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Whether every value of a row is finite, from its max and min alone: numpy's max and
    min propagate a NaN, and an infinity is the max or the min."""
    finite: np.ndarray = np.isfinite(high) & np.isfinite(low)
    return finite


def _statistics(
    x: np.ndarray, constant: bool, constant_row: np.ndarray, finite: np.ndarray
) -> np.ndarray:
    """:func:`adf_statistics` of contiguous ``x`` with its rows' flags at hand."""
    n_pairs, n = x.shape
    out = np.full(n_pairs, np.nan)
    todo = np.flatnonzero(~constant_row & finite)
    if n < 8:  # too short for any lag search; let statsmodels say what it says
        out[todo] = [_statsmodels_tstat(x[i], constant) for i in todo]
        return out
    every = todo.size == n_pairs  # then a chunk's rows are a slice: a view, not a copy
    for start in range(0, todo.size, _CHUNK):
        rows = slice(start, start + _CHUNK) if every else todo[start : start + _CHUNK]
        out[rows] = _adf_chunk(x[rows], constant)
    return out


def _adf_chunk(x: np.ndarray, constant: bool) -> np.ndarray:
    n = x.shape[1]
    maxlag = default_maxlag(n, constant)
    # With a constant, shifting a series by a constant changes nothing in the regression; it
    # keeps the centring corrections below small, so they cost no precision.
    level = x - x.mean(axis=1, keepdims=True) if constant else x
    diffs = np.diff(x, axis=1)
    if constant:
        diffs -= diffs.mean(axis=1, keepdims=True)
    search = _Products.of(level, diffs, maxlag, constant)
    bestlag, unsure = _search_lags(search, maxlag, constant)
    tstat, bad = _final_tstat(search, level, diffs, maxlag, bestlag, constant)
    unsure |= bad
    for i in np.flatnonzero(unsure):
        tstat[i] = _statsmodels_tstat(x[i], constant)
    return tstat


class _Products:
    """Uncentred cross products ``z z'``, column sums and row counts of the design
    ``z = [level x[t], dx[t-1], ..., dx[t-maxlag], dx[t]]`` over a sample of rows."""

    def __init__(self, gram: np.ndarray, sums: np.ndarray | None, nobs: np.ndarray) -> None:
        self.gram, self.sums, self.nobs = gram, sums, nobs

    @classmethod
    def of(cls, level: np.ndarray, diffs: np.ndarray, maxlag: int, constant: bool) -> _Products:
        """The products over the search sample, rows ``t >= maxlag`` (the column sums only
        with a ``constant``, the one design that centres the columns).

        The lag columns are shifted copies of one series, so their cross products form a
        near-Toeplitz block: one row of dot products (``sum dx[t] dx[t-h]``) plus, down each
        diagonal, the rank-one terms of the rows that enter and leave as the lags shift
        (``D[i+1, j+1] = D[i, j] + dx[K-1-i] dx[K-1-j] - dx[N-1-i] dx[N-1-j]``). Two rows of
        dots instead of a full Gram product: about ten times less arithmetic, no copies.
        """
        n_pairs, n_diffs = diffs.shape
        k = maxlag
        nobs = n_diffs - k
        lagged = sliding_window_view(diffs, nobs, axis=1)[:, ::-1]  # [:, h] = dx[t - h]
        current = diffs[:, k:]
        lev = level[:, k : k + nobs]
        first_row = np.einsum("pt,pht->ph", current, lagged)
        level_row = np.einsum("pt,pht->ph", lev, lagged)
        size = k + 2
        gram = np.empty((n_pairs, size, size))
        shifted = _diagonal_updates(diffs, k, scratch=gram)  # gram is written after

        # Every distinct entry once, in one row per pair (see _gram_layout), then gathered
        # into the design order (level, lag 1..k, regressand) in one take.
        parts = np.empty((n_pairs, k * (k + 1) + 2 * (k + 1) + 1))
        # D[i, i + h] = dots[h] + the change after i shifts, for lags i >= 1 (the same sum as
        # dots + change: addition commutes). A reshape that splits the contiguous row: a view.
        lag_block = parts[:, : k * (k + 1)].reshape(n_pairs, k, k + 1)
        np.add(shifted, first_row[:, None, :], out=lag_block)
        # D[0, h], the regressand's row and column: the dots (plus the zero change of no shift).
        np.add(first_row, 0.0, out=parts[:, k * (k + 1) : (k + 1) ** 2])
        parts[:, (k + 1) ** 2 : (k + 1) * (k + 2)] = level_row
        parts[:, -1] = np.einsum("pt,pt->p", lev, lev)
        np.take(
            parts,
            _gram_layout(k),
            axis=1,
            out=gram.reshape(n_pairs, size * size),
            mode="clip",  # the indices are in range; "raise" would buffer the output
        )
        if not constant:  # the column sums serve only to centre the columns
            return cls(gram, None, np.full(n_pairs, float(nobs)))

        front, back = _prefix_sums(diffs, k)
        lag_sums = back[:, ::-1] - front[:, ::-1]  # [:, h] = prefix[N - h] - prefix[K - h]
        sums = np.empty((n_pairs, size))
        sums[:, 0] = lev.sum(axis=1)
        sums[:, 1 : size - 1] = lag_sums[:, 1:]
        sums[:, size - 1] = lag_sums[:, 0]
        return cls(gram, sums, np.full(n_pairs, float(nobs)))

    def design(self, constant: bool) -> np.ndarray:
        """The Gram matrix of the regression: with a constant, that of the columns centred
        over the sample (the constant partialled out, Frisch-Waugh-Lovell)."""
        if not constant:
            return self.gram
        if self.sums is None:
            raise ValueError("products kept without their column sums cannot be centred")
        # gram - sums sums' / nobs with the quotient in place (subtracting into the
        # subtrahend's own buffer measured three times slower than a fresh result).
        correction = self.sums[:, :, None] * self.sums[:, None, :]
        np.divide(correction, self.nobs[:, None, None], out=correction)
        centred: np.ndarray = self.gram - correction
        return centred


def _gram_layout(k: int) -> np.ndarray:
    """Where each entry of the flat search Gram matrix (level, lag 1..k, regressand) sits in
    the row :meth:`_Products.of` assembles: the lag block's diagonal sums (``k`` rows of
    ``k + 1``, ``[i - 1, h]`` for entry ``(i, i + h)``), the regressand's dots (lag 0..k),
    the level's dots (lag 0..k), the level's square."""
    size = k + 2
    i, j = np.arange(size)[:, None], np.arange(size)[None, :]
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    lag_block = (lo - 1) * (k + 1) + (hi - lo)
    regressand = k * (k + 1) + np.where(lo == size - 1, 0, lo)  # the other column's lag
    level = (k + 1) ** 2 + np.where(hi == size - 1, 0, hi)
    square = (k + 1) * (k + 2)
    at = np.where(hi == size - 1, regressand, lag_block)
    at = np.where(lo == 0, np.where(hi == 0, square, level), at)
    return at.ravel()


def _diagonal_updates(diffs: np.ndarray, k: int, scratch: np.ndarray) -> np.ndarray:
    """``[:, i - 1, h]``: the total change of the lag block's diagonal ``h`` after ``i`` shifts
    (see :meth:`_Products.of`), a running sum of the rank-one terms
    ``dx[K-1-r] dx[K-1-r-h] - dx[N-1-r] dx[N-1-r-h]``, for ``h < K - i + 1`` only: the lag
    block has no diagonal ``h`` at row ``i`` beyond that, so the entries there (whose terms
    would read before ``dx[0]``) are left as they fall and must not be read.

    Both factors of each term are read through sliding-window views of the first and last
    ``2k`` differences, not gathered index by index. ``scratch`` (at least pairs x k x
    (k + 1) doubles, contiguous) holds a temporary, so no fresh array of that size is taken.
    """
    n_pairs, n_diffs = diffs.shape
    front = diffs[:, :k]
    padded = np.empty((n_pairs, 2 * k))  # [:, q] = dx[max(q - k, 0)]
    padded[:, :k] = front[:, :1]
    padded[:, k:] = front
    # [:, r, h] = dx[max(K-1-r-h, 0)] and dx[N-1-r-h]
    before = sliding_window_view(padded[:, ::-1], k + 1, axis=1)[:, :k]
    back = diffs[:, n_diffs - 2 * k :][:, ::-1]  # [:, q] = dx[N-1-q]
    after = sliding_window_view(back, k + 1, axis=1)[:, :k]
    corrections = front[:, ::-1, None] * before
    leaving = scratch.reshape(-1)[: corrections.size].reshape(corrections.shape)
    corrections -= np.multiply(back[:, :k, None], after, out=leaving)
    for i in range(1, k):  # the sums a diagonal of the lag block reads, no further
        corrections[:, i, : k - i] += corrections[:, i - 1, : k - i]
    return corrections


def _prefix_sums(diffs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The running sums ``prefix[m] = dx[0] + ... + dx[m-1]`` (added in that order) at
    ``m = 0..k`` and ``m = N-k..N``, each (pairs, k + 1).

    One vector add per day across the pairs: the same additions as a ``cumsum`` along each
    row, several times faster than numpy's accumulate there, and only the sums needed kept.
    """
    n_pairs, n_diffs = diffs.shape
    front = np.empty((n_pairs, k + 1))
    back = np.empty((n_pairs, k + 1))
    running = np.zeros(n_pairs)
    front[:, 0] = running
    for m in range(k):  # running = prefix[m + 1]
        running += diffs[:, m]
        front[:, m + 1] = running
    for m in range(k, n_diffs - k):
        running += diffs[:, m]
    back[:, 0] = running  # prefix[N - k]
    for m in range(n_diffs - k, n_diffs):
        running += diffs[:, m]
        back[:, m + 1 - (n_diffs - k)] = running
    return front, back


def _cholesky(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky factors of the Gram matrices, and a flag for (near-)collinear columns."""
    diag = np.diagonal(gram, axis1=1, axis2=2)
    # One flag per matrix: ``all(axis=1)`` of the 2-d diagonals is an array, not a scalar.
    bad = cast(np.ndarray, ~(diag > 0).all(axis=1))
    safe = gram
    if bad.any():  # keep the batch factorisable; those rows are recomputed anyway
        safe = gram.copy()
        safe[bad] = np.eye(gram.shape[1])
    try:
        chol = np.linalg.cholesky(safe)
    except np.linalg.LinAlgError:
        chol = np.empty_like(safe)
        for i in range(safe.shape[0]):
            try:
                chol[i] = np.linalg.cholesky(safe[i])
            except np.linalg.LinAlgError:
                chol[i] = np.eye(safe.shape[1])
                bad[i] = True
    pivots = np.diagonal(chol, axis1=1, axis2=2)
    ratio = pivots**2 / np.where(diag > 0, diag, 1.0)
    # The regressand's pivot is the residual, which may legitimately be small.
    bad |= (ratio[:, :-1] < _COLLINEAR_RTOL).any(axis=1)
    return chol, bad


def _search_lags(search: _Products, maxlag: int, constant: bool) -> tuple[np.ndarray, np.ndarray]:
    """statsmodels' AIC lag choice on the common sample; also flags rows to recompute.

    The candidate regressions are nested (level, lag 1, ..., lag k), so one Cholesky factor
    gives every SSR: that of the first ``c`` regressors is the sum of squares of the
    regressand's row of the factor from column ``c`` on.
    """
    nobs = search.nobs[0]
    chol, bad = _cholesky(search.design(constant))
    yrow = chol[:, -1, :-1]  # the regressand's coordinates on the orthogonalised regressors
    resid2 = chol[:, -1, -1] ** 2
    # ssr of the model with regressors 0..c-1 (level + c-1 lags), c = 1..maxlag+1.
    tail = np.cumsum((yrow**2)[:, ::-1], axis=1)[:, ::-1]  # tail[:, c] = sum_{j>=c} yrow_j^2
    ssr = np.concatenate([tail[:, 1:], np.zeros((yrow.shape[0], 1))], axis=1) + resid2[:, None]
    nobs2 = nobs / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        llf = -nobs2 * np.log(2 * np.pi) - nobs2 * np.log(ssr / nobs) - nobs2
    k_params = np.arange(maxlag + 1) + 1.0 + constant  # (constant +) level + lags
    aic = -2 * llf + 2 * k_params
    best = np.argmin(aic, axis=1)
    ordered = np.sort(aic, axis=1)
    unsure = bad | ~np.isfinite(ordered[:, 0]) | (ordered[:, 1] - ordered[:, 0] < _AIC_TIE_ATOL)
    return best, unsure


def _final_tstat(
    search: _Products,
    level: np.ndarray,
    diffs: np.ndarray,
    maxlag: int,
    lags: np.ndarray,
    constant: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """t-statistic of the lagged level in each pair's re-fit with its ``lags`` on the full
    sample (rows ``t >= lags``), and a flag for rows to recompute.

    The re-fit's sample is the search sample plus the rows ``lags..maxlag-1``, so its products
    are the search's plus those few rows'. Lags beyond a pair's choice are decoupled (unit
    diagonal, zero elsewhere): one batched factorisation serves every lag length. With the
    level ordered just before the regressand, its t-statistic is ``L[y, level] sqrt(df) /
    L[y, y]``: no inversion. ``search``'s Gram buffer is reused for the re-fit's: ``search``
    is spent after this.
    """
    n_pairs = level.shape[0]
    masks = _LagMasks.of(maxlag)
    extra = np.zeros((n_pairs, maxlag + 2, maxlag))  # the rows t < maxlag of the design
    extra[:, 0] = level[:, :maxlag]
    for j in range(1, maxlag + 1):
        extra[:, j, j:] = diffs[:, : maxlag - j]
    extra[:, maxlag + 1] = diffs[:, :maxlag]
    extra *= masks.rows[lags][:, None, :]  # only rows t >= the pair's lags
    gram = extra @ np.swapaxes(extra, 1, 2)
    gram += search.gram  # extra extra' + search.gram: the same sum (addition commutes)
    full = _Products(
        gram,
        None if search.sums is None else search.sums + extra.sum(axis=2),
        search.nobs + (maxlag - lags),
    )
    order = np.array([*range(1, maxlag + 1), 0, maxlag + 1])  # lags, level, regressand
    size = maxlag + 2
    # Reordered into the search's own buffer, which nothing reads any more: one fresh
    # (pairs, k, k) array fewer.
    gram = search.gram
    np.take(
        full.design(constant).reshape(n_pairs, size * size),
        (order[:, None] * size + order[None, :]).ravel(),
        axis=1,
        out=gram.reshape(n_pairs, size * size),
        mode="clip",  # the indices are in range; "raise" would buffer the output
    )
    flat = gram.reshape(n_pairs, size * size)
    flat *= masks.keep[lags]
    lag_diagonal = flat[:, : maxlag * (size + 1) : size + 1]
    lag_diagonal += masks.dropped[lags]  # a view of the lag block's diagonal, no scatter
    chol, bad = _cholesky(gram)
    df = full.nobs - (lags + 1 + constant)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = chol[:, -1, -2] * np.sqrt(df) / chol[:, -1, -1]
    return t, bad | ~np.isfinite(t)


class _LagMasks:
    """Per chosen lag ``L`` (row ``L``), the re-fit's masks as 1.0 / 0.0 factors: one row
    gather per pair instead of broadcasting boolean comparisons, and multiplying by them
    gives the very bits multiplying by the booleans did."""

    def __init__(self, rows: np.ndarray, keep: np.ndarray, dropped: np.ndarray) -> None:
        self.rows, self.keep, self.dropped = rows, keep, dropped

    @classmethod
    def of(cls, maxlag: int) -> _LagMasks:
        """``rows``: the design rows ``t < maxlag`` the re-fit adds (``t >= L``); ``dropped``:
        the lags beyond ``L``; ``keep``: the flat re-fit Gram matrix (lags, level,
        regressand) without the dropped lags' rows and columns."""
        choice = np.arange(maxlag + 1)[:, None]
        dropped = np.arange(1, maxlag + 1)[None, :] > choice
        keep = np.concatenate([~dropped, np.ones((maxlag + 1, 2), dtype=bool)], axis=1)
        both = (keep[:, :, None] & keep[:, None, :]).reshape(maxlag + 1, -1)
        rows = np.arange(maxlag)[None, :] >= choice
        return cls(rows.astype(float), both.astype(float), dropped.astype(float))


def _statsmodels_tstat(row: np.ndarray, constant: bool) -> float:
    """The reference itself, for the rare rows the batched shortcut cannot vouch for."""
    from statsmodels.tsa.stattools import adfuller

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        regression = "c" if constant else "n"
        return float(adfuller(row, regression=regression, autolag="AIC")[0])
