"""Benjamini-Hochberg q-values over every pair a screen tested.

A screen runs the same test on up to millions of pairs, so a p-value below 5 % on its own
says little: about one pair in twenty passes by chance. The q-value of a p-value ``p`` is the
smallest false-discovery rate at which the Benjamini-Hochberg procedure would call it a
discovery, ``min over p_(j) >= p of m p_(j) / j``: equal to statsmodels'
``multipletests(p, method="fdr_bh")[1]``. A null p-value (the test could not run) is no test:
it is left out of ``m`` and its q-value is null.

The q-value of a pair depends only on its own p-value and the sorted p-values of the screen
(tied p-values get the same q-value), so the screen keeps the p-values as one float array
per test while its chunks stream in and looks each survivor up afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def bh_qvalues(pvalues: np.ndarray) -> np.ndarray:
    """The Benjamini-Hochberg q-value of each p-value; NaN stays NaN (and is not counted)."""
    return QValues.of(pvalues).lookup(pvalues)


@dataclass(frozen=True)
class QValues:
    """The sorted finite p-values of one test over a screen, with their q-values."""

    sorted_p: np.ndarray
    sorted_q: np.ndarray

    @classmethod
    def of(cls, pvalues: np.ndarray) -> QValues:
        p = np.asarray(pvalues, dtype=float)
        p = np.sort(p[np.isfinite(p)])
        m = p.size
        if m == 0:
            return cls(p, p.copy())
        raw = p * (m / np.arange(1, m + 1, dtype=float))
        q = np.minimum.accumulate(raw[::-1])[::-1]
        return cls(p, np.minimum(q, 1.0))

    @property
    def tests(self) -> int:
        """How many pairs had a p-value (``m``)."""
        return int(self.sorted_p.size)

    def lookup(self, pvalues: np.ndarray) -> np.ndarray:
        """The q-value of p-values that are among this screen's (NaN for NaN)."""
        p = np.asarray(pvalues, dtype=float)
        out = np.full(p.shape, np.nan)
        finite = np.isfinite(p)
        if self.tests == 0 or not finite.any():
            return out
        at = np.searchsorted(self.sorted_p, p[finite], side="left")
        out[finite] = self.sorted_q[np.minimum(at, self.tests - 1)]
        return out
