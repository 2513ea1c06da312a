"""An evaluation: verdicts at every as-of day, forward outcomes, survivors against the rest.

The metrics are computed once per day (the expensive part); every rule set is then a cheap
pass of its filter over the same arrays, and the outcomes of a day do not depend on the rule
set, so adding rule sets costs little. Nothing is written: it reads candles and peg events.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from pairscreen.evaluation.outcomes import Outcomes, outcomes_at
from pairscreen.evaluation.rule_sets import RuleSet
from pairscreen.evaluation.statistics import (
    Difference,
    GroupSummary,
    difference,
    stability,
    summarise,
)
from pairscreen.evaluation.verdicts import DateVerdicts, DepegsAt, Market, verdicts_at
from pairscreen.hooks import Plugins

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class HorizonResult:
    """One rule set at one horizon: both groups and their difference, for the move back
    toward the range and for the value of holding the cheap leg."""

    horizon: int
    survivors: GroupSummary
    rest: GroupSummary
    difference: Difference
    survivors_hold: GroupSummary
    rest_hold: GroupSummary
    hold_difference: Difference
    per_date: tuple[float | None, ...]  # survivors' mean move minus the rest's, per day


@dataclass(frozen=True)
class RuleSetResult:
    rule_set: RuleSet
    per_date: tuple[dict[str, object], ...]
    stability: float | None
    horizons: tuple[HorizonResult, ...]


@dataclass(frozen=True)
class Evaluation:
    dates: tuple[date, ...]
    every_days: int
    horizons: tuple[int, ...]
    fee: float
    n_pairs: int
    results: tuple[RuleSetResult, ...]
    warnings: tuple[str, ...]


def evaluate(
    plugins: Plugins,
    market: Market,
    sets: Sequence[RuleSet],
    dates: Sequence[date],
    horizons: Sequence[int],
    *,
    every_days: int,
    fee: float,
    depegs_at: DepegsAt,
    on_progress: Progress | None = None,
) -> Evaluation:
    """Evaluate every rule set at every day of ``dates`` over every horizon."""
    if not horizons or min(horizons) < 1:
        raise ValueError("every --horizon must be at least 1 day")
    days: list[DateVerdicts] = []
    for done, day in enumerate(dates, start=1):
        days.append(verdicts_at(plugins, market, sets, day, depegs_at))
        if on_progress is not None:
            on_progress(done, len(dates))
    outcomes = {h: [outcomes_at(market, v, h, fee) for v in days] for h in horizons}
    names = np.array([f"{a.ticker}/{b.ticker}" for a, b in market.pairs], dtype=object)
    results = tuple(_result(s, days, outcomes, every_days, names) for s in sets)
    warnings = _warnings(results[0], outcomes, every_days) if results else ()
    return Evaluation(
        tuple(dates), every_days, tuple(horizons), fee, len(market.pairs), results, warnings
    )


def _result(
    rule_set: RuleSet,
    days: Sequence[DateVerdicts],
    outcomes: dict[int, list[Outcomes]],
    every_days: int,
    names: np.ndarray,
) -> RuleSetResult:
    survive = [v.survives[rule_set.name] for v in days]
    per_date = tuple(
        {
            "as_of": v.as_of.isoformat(),
            "pairs": int((v.zone != "").sum()),
            "survivors": int(s.sum()),
            "in_zones": int(np.isin(v.zone, ("bottom", "top")).sum()),
            "survivors_in_zones": int((s & np.isin(v.zone, ("bottom", "top"))).sum()),
            "survivor_pairs": [str(name) for name in names[s]],
        }
        for v, s in zip(days, survive, strict=True)
    )
    horizons = tuple(
        _horizon(h, survive, outcomes[h], math.ceil(h / every_days)) for h in sorted(outcomes)
    )
    return RuleSetResult(rule_set, per_date, stability(survive), horizons)


def _horizon(
    horizon: int, survive: Sequence[np.ndarray], outcomes: Sequence[Outcomes], block: int
) -> HorizonResult:
    move_s, move_r, hold_s, hold_r, per_date = [], [], [], [], []
    for s, o in zip(survive, outcomes, strict=True):
        known = np.isfinite(o.reversion)
        move_s.append(o.reversion[known & s])
        move_r.append(o.reversion[known & ~s])
        hold_s.append(o.hold_value[known & s])
        hold_r.append(o.hold_value[known & ~s])
        both = move_s[-1].size and move_r[-1].size
        per_date.append(float(move_s[-1].mean() - move_r[-1].mean()) if both else None)
    return HorizonResult(
        horizon,
        summarise(np.concatenate(move_s)),
        summarise(np.concatenate(move_r)),
        difference(move_s, move_r, block),
        summarise(np.concatenate(hold_s)),
        summarise(np.concatenate(hold_r)),
        difference(hold_s, hold_r, block),
        tuple(per_date),
    )


def _warnings(
    screen: RuleSetResult, outcomes: dict[int, list[Outcomes]], every_days: int
) -> tuple[str, ...]:
    """What the design cannot show, for the screen's own rules."""
    out: list[str] = []
    for result in screen.horizons:
        h, diff = result.horizon, result.difference
        beyond = sum(1 for o in outcomes[h] if not np.isfinite(o.reversion).any())
        if beyond:
            out.append(f"{h} days: {beyond} as-of days have no outcome (no data {h} days later)")
        if diff.estimate is None:
            out.append(f"{h} days: no comparison (no survivors or no other pairs in the zones)")
        elif diff.min_detectable is None:
            out.append(f"{h} days: too few as-of days with both groups for an interval")
        else:
            out.append(
                f"{h} days: this design cannot resolve differences smaller than "
                f"{diff.min_detectable * 100:.1f} pp of log-ratio (2.8 bootstrap standard "
                f"errors, blocks of {diff.block_days} as-of days)"
            )
    return tuple(out)
