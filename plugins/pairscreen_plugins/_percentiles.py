"""numpy's linear percentile from order statistics, bit for bit, for metrics and strategies.

``np.percentile`` partitions a copy of its input for each call. When a row is already
sorted (or tracked in sorted order, as the backtest's rolling bands are) its percentiles are
two order statistics and numpy's interpolation of them: the same indexes, weight and
``_lerp`` formula as numpy's, so the values are numpy's to the last bit. One sort of a
window then serves every percentile and every extreme a panel's metrics read of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np


def percentile_neighbours(n: int, pct: float) -> tuple[int, int, float]:
    """The order statistics (0-based) and weight numpy's linear percentile uses on ``n`` values.

    At the top (``pct`` 100, or one value) numpy reads the last value through index -1 and
    takes its weight from that index (``virtual + 1``): the weight decides the sign of a zero
    result, so it is numpy's here too.
    """
    q = np.true_divide(pct, 100)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    if virtual >= n - 1:
        previous = -1.0
    if virtual < 0:
        previous = 0.0
    gamma = float(virtual - previous)
    lo = hi = int(previous) % n if n else 0
    if virtual < n - 1 and virtual >= 0:
        hi = lo + 1
    return lo, hi, gamma


def lerp(
    lower: np.ndarray, upper: np.ndarray, gamma: float, out: np.ndarray | None = None
) -> np.ndarray:
    """numpy's ``_lerp``: ``a + (b-a)*g``, or ``b - (b-a)*(1-g)`` when ``g >= 0.5``."""
    diff = np.subtract(upper, lower, out=out)
    # numpy types ufuncs on untyped-dtype arrays as Any
    if gamma >= 0.5:
        return cast(
            np.ndarray, np.subtract(upper, np.multiply(diff, 1 - gamma, out=diff), out=diff)
        )
    return cast(np.ndarray, np.add(lower, np.multiply(diff, gamma, out=diff), out=diff))


def sorted_percentiles(ordered: np.ndarray, pcts: Sequence[float]) -> np.ndarray:
    """``np.percentile(rows, pcts, axis=1)`` from ``ordered = np.sort(rows, axis=1)``, shape
    (len(pcts), rows), with the same bits.

    A row holding a NaN (sorted last) gets NaN, as numpy gives it; an empty row goes to
    numpy itself. A row mixing -0.0 and 0.0 may get a zero of the other sign (which of two
    equal zeros a partition puts first is unspecified); a log-ratio is never -0.0.
    """
    rows, n = ordered.shape
    if n == 0:
        # numpy types np.percentile of an untyped-dtype array as Any
        return cast(np.ndarray, np.percentile(ordered, pcts, axis=1))
    out = np.empty((len(pcts), rows))
    for i, pct in enumerate(pcts):
        lo, hi, gamma = percentile_neighbours(n, pct)
        lerp(ordered[:, lo], ordered[:, hi], gamma, out=out[i])
    nan = np.isnan(ordered[:, -1])
    if nan.any():
        out[:, nan] = ordered[nan, -1]  # numpy copies the row's NaN itself
    return out


def sorted_rows(values: np.ndarray) -> np.ndarray:
    """Each row of ``values`` sorted (NaN last): the input of :func:`sorted_percentiles`."""
    return np.sort(values, axis=1)
