"""Percentiles read off a sort equal ``np.percentile`` bit for bit, and the vectorised
touches count equals pairscan-rmr's state machine run row by row.

The band and range metrics sort each window once and read every percentile and extreme off
that sort (``pairscreen_plugins._percentiles``); the published numbers must stay numpy's to
the last bit, signed zeros and NaNs included.
"""

from __future__ import annotations

import numpy as np
import pytest

from pairscreen_plugins._percentiles import sorted_percentiles, sorted_rows  # isort: skip
from pairscreen_plugins.metrics.range_stats import (  # isort: skip
    _touches_one,
    alternating_touches,
)

PCTS = ((5.0, 15.0, 85.0, 95.0), (5.0, 95.0), (0.0, 50.0, 100.0), (37.5,))


def awkward_rows(n: int, seed: int) -> np.ndarray:
    """Random walks with ties, a row of -0.0, a constant row, a NaN row and infinities.

    No row mixes -0.0 with 0.0: which of two equal zeros a partition or a sort puts first is
    unspecified, so there even two numpy calls may disagree on the sign (a log-ratio is
    never -0.0).
    """
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.normal(0, 0.03, (60, n)), axis=1)
    x[::5] = np.round(x[::5], 1) + 0.0  # ties (+ 0.0: no -0.0 beside 0.0)
    x[1] = -0.0
    x[2] = 0.25
    x[3, n // 2] = np.nan
    x[4, : max(1, n // 3)] = np.inf
    x[6, -1] = -np.inf
    return x


@pytest.mark.parametrize("n", [1, 2, 3, 20, 540, 541])
@pytest.mark.parametrize("pcts", PCTS)
def test_percentiles_of_a_sort_are_numpys_bits(n: int, pcts: tuple[float, ...]) -> None:
    x = awkward_rows(n, n)
    with np.errstate(invalid="ignore"):
        expected = np.percentile(x, pcts, axis=1)
        got = sorted_percentiles(sorted_rows(x), pcts)
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 2, 540])
def test_touches_equal_the_state_machine_row_by_row(n: int) -> None:
    x = awkward_rows(n, 100 + n)[:, :]
    x = np.where(np.isfinite(x), x, 0.0)
    x = np.concatenate([x, np.repeat(x[:1], 2000, axis=0)])  # more rows than one block
    low, high = np.percentile(x, (5.0, 95.0), axis=1)
    low[7] = high[7] = float(x[7, 0])  # coinciding thresholds: both sides at once
    low_count, high_count = alternating_touches(x, low, high)
    for i in range(x.shape[0]):
        assert (low_count[i], high_count[i]) == _touches_one(x[i], float(low[i]), float(high[i]))
    assert low_count.dtype == high_count.dtype == np.int64
