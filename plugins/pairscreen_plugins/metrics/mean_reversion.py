"""Mean-reversion metrics of the filter window ``W``, batched over pairs.

Four metrics, so that one failing leaves the others in the response:

* ``variance_ratio``: ``hurst`` = 0.5 + ln(VR) / (2 ln 20) with VR the debiased, overlapping
  Lo-MacKinlay variance ratio at 20 days (arch's ``VarianceRatio(W, lags=20, trend="c")``),
  plus ``variance_ratio`` itself. This is the ``hurst`` the filter uses: a random walk scores
  0.5 on average, mean reversion less.
* ``variance_ratio_test``: its heteroskedasticity-robust ``variance_ratio_pvalue``.
* ``hurst_rs``: pairscan-rmr's rescaled-range Hurst exponent, kept for comparison (it reads
  about 1.0 on log-ratio levels whatever the dynamics, which is why the filter does not use it);
  null with ``hurst_rs_reason`` when ``W`` holds fewer than 200 closes.
* ``adf``: statsmodels' ADF p-value with the AIC lag search (see ``_adf``).

Arch's variance ratio sums with Python's ``sum`` (strictly left to right); the sums here run
over the days axis in the same order, so that ``variance_ratio`` equals arch's bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl
from pairscreen_plugins.metrics._adf import adf_pvalues

VR_LAGS = 20
RS_MAX_LAG = 100
_RS_MIN_LAG = 10
_RS_MIN_POINTS = 4
_RS_BLOCK = 512  # pairs per block of the transposed R/S: ~2 MB work buffers
_BLOCK = 512  # pairs per block of the variance ratio
_FEW_ROWS = 8  # up to this many pairs (a live snapshot), whole-axis accumulations beat loops


def _sum_in_order(a: np.ndarray) -> np.ndarray:
    """Sum over the first axis strictly in order, as Python's ``sum`` adds (``np.sum`` may
    add pairwise, depending on the array's shape). ``add.accumulate`` is sequential too and
    faster for a few columns (a snapshot); for many, row-by-row adds stay cache-friendly."""
    if a.shape[1] <= _FEW_ROWS:
        # numpy types ufuncs on untyped-dtype arrays as Any
        return cast(np.ndarray, np.add.accumulate(a, axis=0)[-1])
    total = a[0].copy()
    for row in a[1:]:
        total += row
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, total)


def _at_least_two_rows(x: np.ndarray) -> np.ndarray:
    """``x`` with its one row doubled, so that the days-first layout keeps a strided axis.

    With one pair, the days-first array is contiguous along days and numpy then sums it
    pairwise instead of in order: the last digits would depend on the panel's width, and a
    live snapshot would disagree with the screen. Two identical rows take the batch path.
    """
    return np.repeat(x, 2, axis=0) if x.shape[0] == 1 else x


def variance_ratio(y: np.ndarray, q: int = VR_LAGS) -> tuple[np.ndarray, np.ndarray]:
    """Debiased overlapping variance ratio at ``q`` and its robust two-sided p-value, per row.

    Same formulas as arch's ``VarianceRatio(trend="c", debiased=True, overlap=True,
    robust=True)``; a constant row has an undefined ratio (NaN), as in arch. Rows go in
    blocks so the temporaries stay cache-sized.
    """
    return _in_blocks(y, q, with_pvalue=True)


def variance_ratio_only(y: np.ndarray, q: int = VR_LAGS) -> np.ndarray:
    """:func:`variance_ratio`'s ratio alone (the same bits), without the robust variance its
    p-value needs: that is most of the work, and the screen's filter reads the ratio only."""
    return _in_blocks(y, q, with_pvalue=False)[0]


def _in_blocks(y: np.ndarray, q: int, *, with_pvalue: bool) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=float)
    vr = np.empty(y.shape[0])
    pvalue = np.full(y.shape[0], np.nan)
    for start in range(0, y.shape[0], _BLOCK):
        rows = slice(start, start + _BLOCK)
        block = y[rows]
        block_vr, block_p = _variance_ratio_block(_at_least_two_rows(block), q, with_pvalue)
        vr[rows] = block_vr[: len(block)]
        if block_p is not None:
            pvalue[rows] = block_p[: len(block)]
    return vr, pvalue


def _variance_ratio_block(
    y: np.ndarray, q: int, with_pvalue: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    # Days down the first axis: each sum adds the days one after another, across all pairs at
    # once, in Python's ``sum`` order, so the ratio is arch's to the bit.
    days = np.ascontiguousarray(y.T)
    nobs = days.shape[0]
    mu = (days[-1] - days[0]) / (nobs - 1)
    delta_y = np.diff(days, axis=0)
    nq = delta_y.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = (delta_y - mu) ** 2.0
        total = _sum_in_order(z2)
        sigma2_1 = total / nq
        delta_y_q = days[q:] - days[:-q]
        sigma2_q = _sum_in_order((delta_y_q - q * mu) ** 2.0) / (nq * q)
        sigma2_1 = sigma2_1 * (nq / (nq - 1))
        m = q * (nq - q + 1) * (1 - (q / nq))
        sigma2_q = sigma2_q * ((nq * q) / m)
        vr = sigma2_q / sigma2_1
        if not with_pvalue:
            return vr, None
        scale = total**2.0
        theta = np.zeros(days.shape[1])
        scaled = nq * z2
        for k in range(1, q):
            delta = np.einsum("tp,tp->p", scaled[k:], z2[:-k]) / scale
            theta = theta + 4 * (1 - k / q) ** 2.0 * delta
        stat = math.sqrt(nq) * (vr - 1) / np.sqrt(theta)
    from scipy.special import ndtr  # imported when computed: start-up stays light

    pvalue = 2 - 2 * ndtr(np.abs(stat))
    return vr, pvalue


def hurst_from_vr(vr: np.ndarray, q: int = VR_LAGS) -> np.ndarray:
    """``0.5 + ln(VR) / (2 ln q)``: the Hurst exponent a variance ratio at ``q`` implies."""
    with np.errstate(divide="ignore", invalid="ignore"):
        # numpy types ufuncs on untyped-dtype arrays as Any
        return cast(np.ndarray, 0.5 + np.log(vr) / (2.0 * math.log(q)))


def _rs_lags(max_lag: int) -> np.ndarray:
    min_lag = max(2, min(10, max_lag // 4)) if max_lag < 30 else _RS_MIN_LAG
    if min_lag >= max_lag:
        min_lag = 2
    lags = np.unique(np.geomspace(min_lag, max_lag, num=12).astype(int))
    if lags.size < _RS_MIN_POINTS:
        lags = np.arange(min_lag, max_lag + 1)
    return lags


def hurst_rs(series: np.ndarray, max_lag: int = RS_MAX_LAG) -> np.ndarray:
    """Rescaled-range Hurst exponent per row, as ``pairscan_rmr.hurst_exponent``.

    Mean R/S over non-overlapping chunks at each lag (chunks with zero std skipped), then the
    least-squares slope of log R/S on log lag. NaN for a constant row or fewer than four
    usable lags. Rows need at least ``2 * max_lag`` values (the engine guarantees 200).

    Rows holding a run of equal values long enough to fill a chunk follow numpy's exact
    arithmetic row by row: whether such a chunk's std is exactly zero (and the chunk skipped)
    depends on the last bit of its mean. Every other row takes a transposed layout whose
    short reductions are vectorised across pairs, equal to the reference within ~1e-15.
    """
    x = np.asarray(series, dtype=float)
    n_pairs, n = x.shape
    if n < 2 * max_lag:
        raise ValueError(f"hurst_rs needs at least {2 * max_lag} values, got {n}")
    lags = [int(lag) for lag in _rs_lags(max_lag) if n // lag >= 2]
    out = np.full(n_pairs, np.nan)
    constant = x.max(axis=1) == x.min(axis=1)
    careful = _has_run(x, min(lags) if lags else n) & ~constant
    fast = ~careful & ~constant
    if not lags:
        return out
    if fast.any():
        if fast.sum() <= _FEW_ROWS:
            log_rs = _log_rs_few(x[fast], lags)
        else:
            log_rs = _log_rs_transposed(x[fast], lags)
        if len(lags) >= _RS_MIN_POINTS:
            out[fast] = _slopes(np.log(lags), log_rs)
    for i in np.flatnonzero(careful):
        out[i] = _hurst_rs_row(x[i], lags)
    return out


def _slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slope of every row of ``y`` on ``x``, with sums over ``x`` in order.

    ``np.polyfit`` fits many rows through one multi-column lstsq whose last digits depend
    on how many rows it is given; element-wise sums give every row the same bits in any
    panel (and agree with polyfit within ~1e-15).
    """
    centred = x - x.mean()
    mean_y = y[:, 0].copy()
    for j in range(1, x.size):
        mean_y += y[:, j]
    mean_y /= x.size
    covariance = np.zeros(y.shape[0])
    for j in range(x.size):
        covariance += centred[j] * (y[:, j] - mean_y)
    return covariance / float(centred @ centred)


def _has_run(x: np.ndarray, length: int) -> np.ndarray:
    """Rows with ``length`` consecutive equal values somewhere."""
    same = np.diff(x, axis=1) == 0
    if length <= 1:
        return np.ones(x.shape[0], dtype=bool)
    counts = np.cumsum(same, axis=1, dtype=np.int32)
    window = length - 1  # equal neighbours in a run of ``length`` values
    if counts.shape[1] < window:
        return np.zeros(x.shape[0], dtype=bool)
    run = counts[:, window - 1 :] - np.concatenate(
        [np.zeros((x.shape[0], 1), dtype=np.int32), counts[:, :-window]], axis=1
    )
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, (run == window).any(axis=1))


def _log_rs_transposed(x: np.ndarray, lags: list[int]) -> np.ndarray:
    """log mean R/S per row and lag, for rows without constant chunks; shape (rows, lags).

    Days run down the first axis so every short reduction is vectorised across pairs; pairs
    go in blocks whose work buffers stay cache-sized. The cumulative deviations are summed
    position by position with their running max and min (numpy's ``cumsum`` along a short,
    non-contiguous axis is several times slower, and the sums are the same).
    """
    out = np.empty((x.shape[0], len(lags)))
    for start in range(0, x.shape[0], _RS_BLOCK):
        block = x[start : start + _RS_BLOCK]
        days_first = np.ascontiguousarray(block.T)
        deviations = np.empty_like(days_first)
        n = days_first.shape[0]
        for j, lag in enumerate(lags):
            used = (n // lag) * lag
            chunks = days_first[:used].reshape(-1, lag, block.shape[0])
            dev = deviations[:used].reshape(chunks.shape)
            np.subtract(chunks, (chunks.sum(axis=1) / lag)[:, None, :], out=dev)
            running = dev[:, 0].copy()
            high = running.copy()
            low = running.copy()
            for k in range(1, lag):
                running += dev[:, k]
                np.maximum(high, running, out=high)
                np.minimum(low, running, out=low)
            stds = np.sqrt(np.einsum("ckp,ckp->cp", dev, dev) / (lag - 1))
            out[start : start + block.shape[0], j] = np.log(((high - low) / stds).mean(axis=0))
    return out


def _log_rs_few(x: np.ndarray, lags: list[int]) -> np.ndarray:
    """:func:`_log_rs_transposed` for a few rows (a live snapshot), with the same bits.

    Rows first, so each chunk is contiguous and one ``cumsum`` per quantity replaces the
    per-position loop. ``cumsum`` adds in order, exactly like the days-first reductions
    across pairs, so each sum is the batch path's to the bit (tests/test_chunk_independence.py
    compares the two); max and min are exact in any order.
    """
    out = np.empty((x.shape[0], len(lags)))
    n = x.shape[1]
    for j, lag in enumerate(lags):
        chunks = x[:, : (n // lag) * lag].reshape(x.shape[0], -1, lag)
        dev = chunks - (np.cumsum(chunks, axis=2)[..., -1] / lag)[..., None]
        cumulative = np.cumsum(dev, axis=2)
        spread = cumulative.max(axis=2) - cumulative.min(axis=2)
        stds = np.sqrt(np.cumsum(dev * dev, axis=2)[..., -1] / (lag - 1))
        ratios = spread / stds
        out[:, j] = np.log(np.cumsum(ratios, axis=1)[:, -1] / ratios.shape[1])
    return out


def _hurst_rs_row(row: np.ndarray, lags: list[int]) -> float:
    """One row with numpy's own reductions, exactly as the reference computes it."""
    used: list[int] = []
    rs_values: list[float] = []
    for lag in lags:
        n_chunks = row.size // lag
        chunks = row[: n_chunks * lag].reshape(n_chunks, lag)
        cumdev = (chunks - chunks.mean(axis=1, keepdims=True)).cumsum(axis=1)
        ranges = cumdev.max(axis=1) - cumdev.min(axis=1)
        stds = chunks.std(axis=1, ddof=1)
        valid = stds > 0
        if valid.any():
            rs_values.append(float(np.mean(ranges[valid] / stds[valid])))
            used.append(lag)
    if len(used) < _RS_MIN_POINTS:
        return float("nan")
    return float(np.polyfit(np.log(used), np.log(rs_values), 1)[0])


@dataclass(frozen=True)
class VarianceRatioMetric:
    """``hurst`` and ``variance_ratio`` of ``W``: what the filter reads, on every pair."""

    name: str = "variance_ratio"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "hurst",
            description="0.5 + ln(VR) / (2 ln 20), VR the debiased variance ratio at 20 days; "
            "< 0.5 mean-reverting. Null for a constant window.",
            nullable=True,
        ),
        MetricField(
            "variance_ratio",
            description="Debiased overlapping Lo-MacKinlay variance ratio of W at 20 days.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        vr = variance_ratio_only(panel.window)
        return {"hurst": hurst_from_vr(vr), "variance_ratio": vr}


@dataclass(frozen=True)
class VarianceRatioTestMetric:
    """``variance_ratio_pvalue``: the robust test of ``variance_ratio`` = 1. A metric of its
    own so that the screen computes it for its survivors only (no rule reads it, and its
    robust variance is most of the variance ratio's cost)."""

    name: str = "variance_ratio_test"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "variance_ratio_pvalue",
            description="Heteroskedasticity-robust two-sided p-value of VR = 1.",
            nullable=True,
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        return {"variance_ratio_pvalue": variance_ratio(panel.window)[1]}


@dataclass(frozen=True)
class HurstRSMetric:
    """``hurst_rs``: pairscan-rmr's R/S Hurst exponent of ``W`` (max lag 100)."""

    name: str = "hurst_rs"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "hurst_rs",
            description="Rescaled-range Hurst exponent of W (lags 10-100), as pairscan-rmr; "
            "null with hurst_rs_reason when W holds too few closes.",
            nullable=True,
        ),
        MetricField(
            "hurst_rs_reason",
            type="string",
            description="Why hurst_rs is null when W holds fewer closes than its lags need "
            "(a pair mixing calendars with a short history); empty when it is set.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        window = panel.window
        closes = window.shape[1]
        if closes < 2 * RS_MAX_LAG:
            # A pair mixing calendars can pass the engine's 200 calendar days with fewer
            # closes: not enough data is an answer (null, said why), not a failure.
            why = f"W holds {closes} closes, at least {2 * RS_MAX_LAG} are needed"
            return {
                "hurst_rs": np.full(panel.n_pairs, np.nan),
                "hurst_rs_reason": np.full(panel.n_pairs, why),
            }
        return {"hurst_rs": hurst_rs(window), "hurst_rs_reason": np.full(panel.n_pairs, "")}


@dataclass(frozen=True)
class ADFMetric:
    """``adf_pvalue``: augmented Dickey-Fuller p-value of ``W`` (constant, AIC lags)."""

    name: str = "adf"
    fields: tuple[MetricField, ...] = (
        MetricField(
            "adf_pvalue",
            description="ADF p-value of W (constant, AIC lag choice, MacKinnon); "
            "1.0 for a constant window.",
        ),
    )

    def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
        return {"adf_pvalue": adf_pvalues(panel.window)}


@hookimpl
def pairscreen_register_metrics() -> list[Metric]:
    """The variance-ratio Hurst and its test, the R/S Hurst and the ADF p-value."""
    return [VarianceRatioMetric(), VarianceRatioTestMetric(), HurstRSMetric(), ADFMetric()]
