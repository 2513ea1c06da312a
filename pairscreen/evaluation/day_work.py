"""The work of every as-of day: its replayed verdicts and its outcomes, in this process or on
forked workers.

A day's verdicts and outcomes read the candles alone, so days can be computed apart, with
one exception: a persistence rule counts the screens of the days before, and a single pass
keeps the whole replay of its as-of days for the next ones (``Replay``), computing only the
candidates of the other previous days. So the run is cut into stretches of consecutive
as-of days, and each stretch first replays, whole, the run's own as-of days among the
previous screens of its first day (what a single pass would have kept), then its days in
order: every stretch computes exactly what one pass computes, and the results are
bit-identical whatever the number of processes. The stretches run on forked workers
(``engine.executors.stream_local``: they inherit the plugins and the aligned pairs; only
dates and results cross the pipes). The peg events a replayed day reads are looked up in
this process first, so no worker touches the database.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from pairscreen.contracts import DepeggedLeg, Strategy
from pairscreen.engine.executors import stream_local
from pairscreen.evaluation.calibration import calibration_bars
from pairscreen.evaluation.dates import close_at
from pairscreen.evaluation.outcomes import Outcomes, outcomes_at
from pairscreen.evaluation.rule_sets import RuleSet
from pairscreen.evaluation.screen_wide import PERSISTENCE, Replay, ReplayedDay
from pairscreen.evaluation.strategy_outcomes import StrategyOutcomes, strategy_outcomes_at
from pairscreen.evaluation.verdicts import DepegsAt, Market
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import SwapCosts

# A stretch is at least this many as-of days, and at least this many times the whole days
# it replays first: below that, forking and the repeated days cost more than they save.
MIN_STRETCH_DAYS = 8
WARM_SHARE = 4
STRETCHES_PER_WORKER = 2  # a worker slowed by a busy machine leaves less idle time


@dataclass(frozen=True)
class DayWork:
    """One as-of day: its replay, its outcomes per horizon, the strategy's per horizon (with
    the strategy outcome or a portfolio) and at the calibration horizon (when the model's
    figure is known and a strategy is given)."""

    replayed: ReplayedDay
    outcomes: Mapping[int, Outcomes]
    traded: Mapping[int, StrategyOutcomes]
    calibrated: StrategyOutcomes | None


@dataclass(frozen=True)
class DayPlan:
    """What every as-of day computes, shared by all of them."""

    plugins: Plugins
    market: Market
    sets: Sequence[RuleSet]
    persistence_screens: int
    horizons: Sequence[int]
    fee: float
    costs: SwapCosts | None
    strategy: Strategy | None
    traded: bool  # the strategy outcome or a portfolio: the strategy at every horizon
    screen_step: timedelta = timedelta(days=1)  # between the screens persistence counts

    @property
    def calibration_horizon(self) -> int:
        """The calibration's horizon in the universe's bars."""
        return calibration_bars(self.market.bar)

    def day(self, replay: Replay, day: date) -> DayWork:
        replayed = replay.day(day)
        verdicts = replayed.verdicts
        outcomes = {
            h: outcomes_at(self.market, verdicts, h, self.fee, self.costs) for h in self.horizons
        }
        priced = self.costs if self.costs is not None else SwapCosts()
        traded: dict[int, StrategyOutcomes] = {}
        calibrated = None
        if self.strategy is not None:
            if self.traded:
                traded = {
                    h: strategy_outcomes_at(
                        self.strategy, self.market, verdicts, h, self.fee, priced
                    )
                    for h in self.horizons
                }
            horizon = self.calibration_horizon
            calibrated = traded.get(horizon)
            modelled = verdicts.model_return is not None  # the same every day: the plugins'
            if calibrated is None and modelled and horizon in self.horizons:
                calibrated = strategy_outcomes_at(
                    self.strategy, self.market, verdicts, horizon, self.fee, priced
                )
        return DayWork(replayed, outcomes, traded, calibrated)


@dataclass(frozen=True)
class _KnownDepegs:
    """The peg events active at each replayed close, read beforehand (workers do not read
    the database)."""

    at: Mapping[datetime, Mapping[str, DepeggedLeg]]

    def __call__(self, moment: datetime) -> Mapping[str, DepeggedLeg]:
        return self.at[moment]


def day_work(
    plan: DayPlan,
    dates: Sequence[date],
    depegs_at: DepegsAt,
    *,
    processes: int = 1,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[DayWork]:
    """Every day of ``dates`` (in order) computed on ``processes`` workers (0: one per core,
    1: in this process); the result does not depend on ``processes``."""
    workers = processes or os.cpu_count() or 1
    parts = _stretches(plan, dates, workers)
    if len(parts) <= 1:
        replay = _replay(plan, depegs_at)
        out = []
        for count, day in enumerate(dates, start=1):
            out.append(plan.day(replay, day))
            if on_progress is not None:
                on_progress(count, len(dates))
        return out
    known = _KnownDepegs({moment: depegs_at(moment) for moment in _closes_read(plan, dates)})

    def work(task: tuple[int, tuple[date, ...], tuple[date, ...]]) -> tuple[int, list[DayWork]]:
        index, warm, days = task
        replay = _replay(plan, known)
        for old in warm:
            replay.remember(old)
        return index, [plan.day(replay, day) for day in days]

    tasks = [(i, warm, days) for i, (warm, days) in enumerate(parts)]
    done: dict[int, list[DayWork]] = {}
    for index, computed in stream_local(work, tasks, min(workers, len(parts))):
        done[index] = computed
        if on_progress is not None:
            on_progress(sum(len(d) for d in done.values()), len(dates))
    return [day for index in sorted(done) for day in done[index]]


def _replay(plan: DayPlan, depegs_at: DepegsAt) -> Replay:
    return Replay(
        plan.plugins,
        plan.market,
        plan.sets,
        depegs_at,
        plan.persistence_screens,
        plan.screen_step,
    )


def _counted_before(plan: DayPlan) -> int:
    """How many previous days a persistence rule counts (0 when no set has the rule)."""
    persistent = any(s.screen_rule_on(PERSISTENCE) for s in plan.sets)
    return plan.persistence_screens if persistent else 0


def _stretches(
    plan: DayPlan, dates: Sequence[date], workers: int
) -> list[tuple[tuple[date, ...], tuple[date, ...]]]:
    """The run's days in consecutive stretches, each with the run's as-of days it replays
    whole first (those among the previous screens of its first day); one stretch when one
    worker, or too few days, would do."""
    back = _counted_before(plan)
    if workers <= 1 or not dates:
        return [((), tuple(dates))]
    overlap = sum(1 for d in dates if dates[0] < d <= dates[0] + back * plan.screen_step)
    smallest = max(MIN_STRETCH_DAYS, WARM_SHARE * overlap)
    parts = min(workers * STRETCHES_PER_WORKER, len(dates) // smallest)
    if parts <= 1:
        return [((), tuple(dates))]
    size = math.ceil(len(dates) / parts)
    out = []
    for start in range(0, len(dates), size):
        days = tuple(dates[start : start + size])
        first = days[0]
        warm = tuple(d for d in dates[:start] if d >= first - back * plan.screen_step)
        out.append((warm, days))
    return out


def _closes_read(plan: DayPlan, dates: Sequence[date]) -> set[datetime]:
    """The closes whose peg events a replay of ``dates`` reads: each day's, and the previous
    days' a persistence rule counts."""
    back = _counted_before(plan)
    return {close_at(day - k * plan.screen_step) for day in dates for k in range(back + 1)}
