"""Both legs' log closes over ``W`` and the close before it, shared through the panel's cache.

The cointegration and Johansen metrics regress the log prices of ``W``'s days; the correlation
metric differences them, which needs the close before ``W``'s first day too. One array serves
all three, so the logarithms are taken once per panel.
"""

from __future__ import annotations

import numpy as np

from pairscreen import PairPanel


def window_log_closes(panel: PairPanel) -> tuple[np.ndarray, np.ndarray]:
    """``log close_A`` and ``log close_B`` over ``W``'s closes and the common close before
    ``W``'s first one (when the panel has it), each shape (pairs, closes).

    ``W`` is the panel's calendar window (``panel.metric_window``): the last ``window_days``
    closes, plus the one before, for a pair with a close every day.
    """

    def compute() -> tuple[np.ndarray, np.ndarray]:
        first = max(panel.metric_window.start - 1, 0)
        return np.log(panel.close_a[:, first:]), np.log(panel.close_b[:, first:])

    return panel.cached("window_log_closes", compute)


def window_logs(panel: PairPanel) -> tuple[np.ndarray, np.ndarray]:
    """``log A`` and ``log B`` over the closes of ``W`` alone (views), each shape (pairs,
    closes)."""
    closes = panel.metric_window.observations
    log_a, log_b = window_log_closes(panel)
    return log_a[:, log_a.shape[1] - closes :], log_b[:, log_b.shape[1] - closes :]
