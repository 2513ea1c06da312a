"""The metric contract: fields a metric adds, computed for every pair of a panel at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from pairscreen.contracts.panel import PairPanel

__all__ = ["Metric", "MetricField"]

FieldType = Literal["number", "integer", "string"]


@dataclass(frozen=True)
class MetricField:
    """One field a metric adds to ``metrics`` in the screen and the snapshot.

    ``nullable`` fields may come back as NaN (number) and are served as ``null``.
    ``needs_full_window`` fields mean something only over a whole band window: the engine
    serves them as ``null`` for a pair with less than ``window_days + 1`` days of history,
    whatever the metric returned, so the metric need not check the history length itself.
    """

    name: str
    type: FieldType = "number"
    description: str = ""
    nullable: bool = False
    needs_full_window: bool = False


@runtime_checkable
class Metric(Protocol):
    """A statistic of the log-ratio computed for every pair of a panel at once."""

    @property
    def name(self) -> str: ...

    @property
    def fields(self) -> tuple[MetricField, ...]: ...

    def compute(self, panel: PairPanel) -> Mapping[str, np.ndarray]:
        """Return one array of shape ``(panel.n_pairs,)`` per field in ``fields``."""
        ...
