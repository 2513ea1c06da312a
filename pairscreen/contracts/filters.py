"""The screen filter contract: ordered rules over whole metric arrays, each with a reason
code, and what a rule sees besides the metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["DepeggedLeg", "Filter", "FilterContext", "FilterRule", "ShortHistory", "enough_history"]


@dataclass(frozen=True)
class DepeggedLeg:
    """A leg in an active depeg event, so a reason can name the asset and the event's start.

    ``since`` is the event's first unhealthy peg sample (None when the caller does not know it).
    """

    ticker: str
    since: datetime | None = None


@dataclass(frozen=True)
class FilterContext:
    """What a filter rule sees besides the metrics, one entry per pair of the batch.

    ``thresholds`` are the filter's own :attr:`Filter.thresholds` with the universe file's
    ``[screen]`` values applied, so a rule reads its limits here and never from a constant.
    ``depegged_legs`` names, per pair, the legs behind ``depegged`` so that a rejection can
    say which asset depegged and since when; it is empty when the caller does not know them
    (a rule then falls back to ``depegged`` alone). Plain data, so a chunk job carrying it
    pickles to a worker.
    """

    history_days: np.ndarray  # (pairs,) int: every day of common history of the pair
    depegged: np.ndarray  # (pairs,) bool: a leg is in an active depeg event
    thresholds: Mapping[str, float]
    depegged_legs: tuple[tuple[DepeggedLeg, ...], ...] = ()  # (pairs,) or () when unknown


@runtime_checkable
class FilterRule(Protocol):
    """One check of a filter, vectorised over the pairs of a batch.

    The engine runs a filter's rules in order on the pairs no earlier rule rejected. A rule
    whose ``inputs`` are not all available (their metric failed on this batch) rejects those
    pairs itself, with a reason that names the missing fields and the failed metric, so
    ``check`` and ``explain`` always find every input they declare.

    A rule that is off at some thresholds may also define ``inputs_for(thresholds)``: the
    fields it reads with those thresholds (none while off). The screen computes on every pair
    only the fields the core or some rule reads; the other metrics run on the survivors.
    """

    @property
    def code(self) -> str:
        """The reason code, the part of a reason before ``": "`` (``hurst``, ``adf`` ...)."""
        ...

    @property
    def inputs(self) -> tuple[str, ...]:
        """The metric fields the rule reads (empty for a rule on the context only)."""
        ...

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        """True for every pair that passes, shape ``(pairs,)``."""
        ...

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        """Why pair ``i`` failed, with its values: the text after ``"<code>: "``."""
        ...


@runtime_checkable
class Filter(Protocol):
    """Decides which pairs of the screen survive: an ordered list of rules and their limits.

    A pair's ``filter_reason`` is ``""`` when every rule passes, else ``"<code>: <text>"`` of
    the first rule that fails. ``thresholds`` are the defaults of every limit the rules read
    from :attr:`FilterContext.thresholds`; the universe file's ``[screen]`` table may set any
    of them (and only them), and ``/screen/latest`` shows the values used.
    """

    @property
    def name(self) -> str: ...

    @property
    def thresholds(self) -> Mapping[str, float]: ...

    @property
    def rules(self) -> Sequence[FilterRule]: ...


def enough_history(history_days: ArrayLike, min_history_days: float) -> np.ndarray:
    """Per pair, whether its calendar days of common history reach ``min_history_days``."""
    enough: np.ndarray = np.asarray(history_days) >= min_history_days
    return enough


class ShortHistory:
    """The core's history guarantee as a filter rule, at the filter's ``min_history_days``
    threshold, for a filter that lets the universe raise the minimum (the core's minimum is
    the floor: pairs below it never reach a filter)."""

    code = "insufficient_history"
    inputs: tuple[str, ...] = ()
    threshold = "min_history_days"

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        return enough_history(context.history_days, context.thresholds[self.threshold])

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        days, needed = int(context.history_days[i]), context.thresholds[self.threshold]
        return f"{days} days of common history, at least {needed} days needed"
