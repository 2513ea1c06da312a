"""What the model's in-sample promise realised: the screen's survivors grouped by their
``ou_expected_return_per_year`` at each as-of day (quintiles over every survivor
observation), each group's mean realised outcome over the next 30 days with a 95 % interval.

The realised outcome is the strategy's: its forward log return from the as-of day minus
holding both legs half and half (``excess`` of
:mod:`pairscreen.evaluation.strategy_outcomes`, fees and ``[costs]`` included), the
relative-value return the OU model's figure is a promise of. Without a strategy it is the
log value of holding the cheap leg for 30 days (``hold_value`` of
:mod:`pairscreen.evaluation.outcomes`); ``measure`` says which. Either exists only for
survivors in a band zone.

Observations of one as-of day share its market move, and a horizon longer than the step
between days makes neighbouring days share their forward windows; so a group's interval
treats blocks of ``block_days`` consecutive as-of days as the independent units (a
cluster-robust standard error of the mean, Student's t with one fewer degrees of freedom
than blocks), never the observations themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit

from pairscreen.contracts.bars import BarSize

CALIBRATION_HORIZON = 30  # days after the as-of day
STRATEGY_MEASURE = "excess"  # the StrategyOutcomes field realised, with a strategy
HOLDING_MEASURE = "hold_value"  # the Outcomes field realised, without one
GROUPS = 5  # quintiles
YEAR_DAYS = 365  # the model's figure is per 365 days


def calibration_bars(bar: BarSize) -> int:
    """The calibration's horizon in ``bar``'s bars: 30 days stay 30 days (720 hourly bars)."""
    return bar.bars(CALIBRATION_HORIZON)


@dataclass(frozen=True)
class Group:
    """One quintile: its range of the model's figure and what its survivors realised."""

    quintile: int  # 1 (lowest model figure) … 5
    model_low: float | None
    model_high: float | None
    model_mean: float | None  # mean model figure, log return per year
    n: int
    realised_mean: float | None  # mean realised log value over the horizon
    low: float | None  # 95 % interval of realised_mean
    high: float | None
    blocks: int  # independent blocks of as-of days holding the group's observations

    def as_json(self) -> dict[str, object]:
        implied = None if self.model_mean is None else self.model_mean * _HORIZON_YEARS
        return {
            "quintile": self.quintile,
            "model_low": self.model_low,
            "model_high": self.model_high,
            "model_mean": self.model_mean,
            "model_implied": implied,
            "n": self.n,
            "realised_mean": self.realised_mean,
            "ci95": None if self.low is None else [self.low, self.high],
            "independent_periods": self.blocks,
        }


_HORIZON_YEARS = CALIBRATION_HORIZON / YEAR_DAYS


@dataclass(frozen=True)
class Calibration:
    groups: tuple[Group, ...]
    block_days: int
    measure: str = STRATEGY_MEASURE

    @property
    def n(self) -> int:
        return sum(g.n for g in self.groups)

    def as_json(self) -> dict[str, object]:
        return {
            "model_field": "ou_expected_return_per_year",
            "horizon": CALIBRATION_HORIZON,
            "measure": self.measure,
            "block_days": self.block_days,
            "n": self.n,
            "groups": [g.as_json() for g in self.groups],
        }


def calibrate(
    model: Sequence[np.ndarray],
    survive: Sequence[np.ndarray],
    realised: Sequence[np.ndarray],
    *,
    block_days: int,
    measure: str = STRATEGY_MEASURE,
) -> Calibration:
    """Per as-of day ``d`` (in order), every pair's model figure ``model[d]``, whether it
    survived ``survive[d]`` and its realised outcome ``realised[d]`` (NaN: none): the
    survivors with both numbers, pooled and split at the model figure's quintiles."""
    values, outcomes, blocks = [], [], []
    for d, (m, s, r) in enumerate(zip(model, survive, realised, strict=True)):
        keep = s & np.isfinite(m) & np.isfinite(r)
        values.append(m[keep])
        outcomes.append(r[keep])
        blocks.append(np.full(int(keep.sum()), d // max(block_days, 1)))
    x = np.concatenate(values) if values else np.zeros(0)
    y = np.concatenate(outcomes) if outcomes else np.zeros(0)
    block = np.concatenate(blocks) if blocks else np.zeros(0, dtype=int)
    if x.size == 0:
        empty = tuple(_group(q, x, y, block) for q in range(1, GROUPS + 1))
        return Calibration(empty, block_days, measure)
    edges = np.quantile(x, np.arange(1, GROUPS) / GROUPS)
    which = np.searchsorted(edges, x, side="right")
    groups = tuple(
        _group(q + 1, x[which == q], y[which == q], block[which == q]) for q in range(GROUPS)
    )
    return Calibration(groups, block_days, measure)


def _group(quintile: int, x: np.ndarray, y: np.ndarray, block: np.ndarray) -> Group:
    if x.size == 0:
        return Group(quintile, None, None, None, 0, None, None, None, 0)
    mean = float(y.mean())
    ids, members = np.unique(block, return_inverse=True)
    low = high = None
    if ids.size >= 2:
        sums = np.bincount(members, weights=y - mean)
        g = ids.size
        se = math.sqrt(float((sums**2).sum()) * g / (g - 1)) / y.size
        half = float(stdtrit(g - 1, 0.975)) * se
        low, high = mean - half, mean + half
    return Group(
        quintile,
        float(x.min()),
        float(x.max()),
        float(x.mean()),
        int(y.size),
        mean,
        low,
        high,
        int(ids.size),
    )
