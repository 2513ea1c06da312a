"""Both legs' log closes over ``W`` and the close before it, shared through the panel's cache.

The cointegration and Johansen metrics regress the log prices of ``W``'s days; the correlation
metric differences them, which needs the close before ``W``'s first day too. One array serves
all three, so the logarithms are taken once per panel.
"""

from __future__ import annotations

import numpy as np

from pairscreen.contracts import PairPanel


def window_log_closes(panel: PairPanel) -> tuple[np.ndarray, np.ndarray]:
    """``log close_A`` and ``log close_B`` over ``W``'s closes and the common close before
    ``W``'s first one (when the panel has it), each shape (pairs, closes).

    ``W`` is the panel's calendar window (``panel.metric_window``): the last ``window_days``
    closes, plus the one before, for a pair with a close every day.
    """

    def compute() -> tuple[np.ndarray, np.ndarray]:
        first = max(panel.metric_window.start - 1, 0)
        (log_a,), (log_b,) = panel.each_leg(_logs, slice(first, None))
        return log_a, log_b

    return panel.cached("window_log_closes", compute)


def centred_window_logs(
    panel: PairPanel,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Per leg: its log closes over ``W`` minus their mean, and their sum of squares (what
    both Engle-Granger regressions share), each computed once per distinct asset. Not kept
    on the panel: the cointegration metric alone reads them, once."""
    closes = panel.metric_window.observations
    (centred_a, squares_a), (centred_b, squares_b) = panel.each_leg(
        _centred_logs, slice(panel.n_days - closes, None)
    )
    return (centred_a, squares_a), (centred_b, squares_b)


def _logs(closes: np.ndarray) -> tuple[np.ndarray]:
    return (np.log(closes),)


def _centred_logs(closes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return centred_rows(np.log(closes))


def centred_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row minus its mean, and the sum of squares of the result (per row)."""
    centred = values - values.mean(axis=1, keepdims=True)
    return centred, (centred * centred).sum(axis=1)


def window_logs(panel: PairPanel) -> tuple[np.ndarray, np.ndarray]:
    """``log A`` and ``log B`` over the closes of ``W`` alone (views), each shape (pairs,
    closes)."""
    closes = panel.metric_window.observations
    log_a, log_b = window_log_closes(panel)
    return log_a[:, log_a.shape[1] - closes :], log_b[:, log_b.shape[1] - closes :]
