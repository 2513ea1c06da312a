"""The built-in survivor score: 0-100, higher is better.

``35 c((0.5 - hurst) / 0.2) + 15 c(1 - adf_pvalue / 0.7) + 20 c(range_width / 1.0)
+ 15 c(min(touches_low, touches_high) / 6) + 15 c(|position - 0.5| / 0.5)``, ``c`` clipping to
[0, 1]. It rewards strong mean reversion, a wide range, repeated oscillation and a ratio near
an edge of its band. A missing input (NaN, e.g. ``range_width`` below a full window, or a
field whose metric failed) earns that term nothing rather than poisoning the whole score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np

from pairscreen.contracts import Scorer, hookimpl

WEIGHTS = {"hurst": 35.0, "adf": 15.0, "range": 20.0, "touches": 15.0, "edge": 15.0}


def clip01(x: np.ndarray) -> np.ndarray:
    """``c``: clip to [0, 1], with NaN counted as 0."""
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, np.nan_to_num(np.clip(np.asarray(x, dtype=float), 0.0, 1.0), nan=0.0))


def score(metrics: Mapping[str, np.ndarray]) -> np.ndarray:
    """The score (docs/methodology.md) of every pair from its metric arrays."""
    m = _Inputs(metrics)
    touches = np.minimum(m["touches_low"], m["touches_high"])
    return (
        WEIGHTS["hurst"] * clip01((0.5 - m["hurst"]) / 0.2)
        + WEIGHTS["adf"] * clip01(1.0 - m["adf_pvalue"] / 0.7)
        + WEIGHTS["range"] * clip01(m["range_width"] / 1.0)
        + WEIGHTS["touches"] * clip01(touches / 6.0)
        + WEIGHTS["edge"] * clip01(np.abs(m["position"] - 0.5) / 0.5)
    )


class _Inputs:
    """The metric arrays as floats; a field whose metric failed on this batch reads as NaN
    for every pair, so its term earns nothing instead of raising ``KeyError``."""

    def __init__(self, metrics: Mapping[str, np.ndarray]):
        self.metrics = metrics
        self.n = len(next(iter(metrics.values()), ()))

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.metrics:
            return np.full(self.n, np.nan)
        return np.asarray(self.metrics[name], dtype=float)


@dataclass(frozen=True)
class DefaultScorer:
    """Scorer ``score``: the weighted, clipped sum of docs/methodology.md."""

    name: str = "score"

    def score(self, metrics: Mapping[str, np.ndarray]) -> np.ndarray:
        return score(metrics)


@hookimpl
def pairscreen_register_scorers() -> list[Scorer]:
    """The built-in score."""
    return [DefaultScorer()]
