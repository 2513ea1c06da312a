"""Both legs' log closes over ``W`` and the close before it, shared through the panel's cache.

The cointegration metric regresses the log prices of ``W``'s days; the correlation metric
differences them, which needs the close before ``W``'s first day too. One array serves both,
so the logarithms are taken once per panel.
"""

from __future__ import annotations

import numpy as np

from pairscreen import PairPanel


def window_log_closes(panel: PairPanel) -> tuple[np.ndarray, np.ndarray]:
    """``log close_A`` and ``log close_B`` over the last ``window_days + 1`` days (all of
    them on a shorter history), each shape (pairs, days)."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        days = min(panel.window_days + 1, panel.n_days)
        return np.log(panel.close_a[:, -days:]), np.log(panel.close_b[:, -days:])

    return panel.cached("window_log_closes", compute)
