"""Test plugin: a scorer ``hook_by_hurst`` that ranks pairs by their Hurst exponent alone."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pairscreen import hookimpl


class ByHurst:
    name = "hook_by_hurst"

    def score(self, metrics: Mapping[str, np.ndarray]) -> np.ndarray:
        """100 for a Hurst exponent of 0, 0 for 1 and above."""
        hurst = np.asarray(metrics["hurst"], dtype=float)
        return np.clip(100.0 * (1.0 - hurst), 0.0, 100.0)


@hookimpl
def pairscreen_register_scorers() -> list[ByHurst]:
    return [ByHurst()]
