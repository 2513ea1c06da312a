"""A panel's log-ratios: the windows' alone first, the whole history later, the same floats.

The metrics read ``W`` and ``H`` only (the last ~540 days), so a panel takes the logarithm
of those columns first; the backtest reads every day, and then the panel adds the older
days to the same array. Either order gives every value ``np.log(close_a / close_b)`` gives,
and the panel keeps one array, not two.
"""

from __future__ import annotations

import numpy as np

from pairscreen import PairPanel


def make_panel(days: int = 900, pairs: int = 7) -> PairPanel:
    rng = np.random.default_rng(2)
    close_a = 30.0 * np.exp(np.cumsum(rng.normal(0, 0.02, (pairs, days)), axis=1))
    close_b = 70.0 * np.exp(np.cumsum(rng.normal(0, 0.02, (pairs, days)), axis=1))
    dates = np.broadcast_to(np.datetime64("2024-01-01") + np.arange(days), (pairs, days))
    volume = np.ones((pairs, days))
    return PairPanel(
        a=tuple(f"A{k}" for k in range(pairs)),
        b=tuple(f"B{k}" for k in range(pairs)),
        dates=dates,
        close_a=close_a,
        close_b=close_b,
        volume_a=volume,
        volume_b=volume,
        window_days=540,
    )


def test_windows_first_then_the_whole_history_give_numpys_floats() -> None:
    panel = make_panel()
    want = np.log(panel.close_a / panel.close_b)
    window, band, current = panel.window.copy(), panel.band_history.copy(), panel.r_current.copy()
    assert window.tobytes() == want[:, panel.metric_window.columns].tobytes()
    assert band.tobytes() == want[:, panel.band_window.columns].tobytes()
    assert current.tobytes() == want[:, -1].tobytes()
    whole = panel.log_ratio
    assert whole.tobytes() == want.tobytes()
    # the windows now read the whole array: one copy of the log-ratios, not two
    assert np.shares_memory(panel.window, whole)
    assert panel.window.tobytes() == window.tobytes()


def test_the_whole_history_first_serves_the_windows_as_views() -> None:
    panel = make_panel()
    whole = panel.log_ratio
    assert np.shares_memory(panel.band_history, whole)
    want = np.log(panel.close_a / panel.close_b)
    assert panel.band_history.tobytes() == want[:, panel.band_window.columns].tobytes()
