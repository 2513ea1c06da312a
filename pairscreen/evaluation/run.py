"""An evaluation: verdicts at every as-of day, forward outcomes, survivors against the rest.

The metrics are computed once per day (the expensive part); every rule set is then a cheap
pass of its filter over the same arrays, then of its screen-wide rules (q-values over the
day's tested pairs, persistence over the days before: ``evaluation.screen_wide``), and the
outcomes of a day do not depend on the rule set, so adding rule sets costs little (a set
with the persistence rule adds the days before each as-of day). Nothing is written: it
reads candles and peg events.

On an intraday universe the as-of points are bar closes and ``horizons`` and ``every_days``
count the universe's bars (on a daily one a bar is a day): the blocks of the overlap-aware
interval are ``ceil(h / every)`` as-of points either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

import numpy as np

from pairscreen.contracts import Strategy
from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.evaluation.calibration import (
    HOLDING_MEASURE,
    STRATEGY_MEASURE,
    Calibration,
    calibrate,
    calibration_bars,
)
from pairscreen.evaluation.dates import iso, spell
from pairscreen.evaluation.day_work import DayPlan, day_work
from pairscreen.evaluation.outcomes import Outcomes
from pairscreen.evaluation.portfolio import PortfolioResult, PortfolioSpec, portfolios
from pairscreen.evaluation.rule_sets import RuleSet
from pairscreen.evaluation.screen_wide import ReplayedDay, notes, screen_spacing
from pairscreen.evaluation.statistics import (
    FIXED_SEQUENCE,
    Difference,
    GroupSummary,
    Observations,
    difference,
    negated,
    shortfalls,
    stability,
    summarise,
    with_fixed_sequence,
    with_holm,
)
from pairscreen.evaluation.strategy_outcomes import STRATEGY_MEASURES, StrategyOutcomes
from pairscreen.evaluation.verdicts import DepegsAt, Market
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import SwapCosts
from pairscreen.wording import plural

Progress = Callable[[int, int], None]


MEASURES = ("reversion", "hold_value", "hold_other_leg")
OUTCOMES = ("reversion", "strategy")
PRIMARY = {"reversion": "reversion", "strategy": "excess"}  # the measure each outcome tests
_UNITS = {"reversion": "log-ratio", "excess": "log return over holding both legs"}


@dataclass(frozen=True)
class Comparison:
    """One measure: both groups and their difference."""

    survivors: GroupSummary
    rest: GroupSummary
    difference: Difference


@dataclass(frozen=True)
class HorizonResult:
    """One rule set at one horizon: per measure (the move back toward the range, the log
    value of holding the cheap leg, and of holding the other leg) both groups and their
    difference, and why the difference is too few observations (empty when it is not)."""

    horizon: int
    measures: Mapping[str, Comparison]
    per_date: tuple[float | None, ...]  # survivors' mean primary measure minus the rest's
    warnings: tuple[str, ...]
    primary: str = "reversion"  # the measure the outcome tests (``excess`` for strategy)

    @property
    def difference(self) -> Difference:
        return self.measures[self.primary].difference


@dataclass(frozen=True)
class RuleSetResult:
    rule_set: RuleSet
    per_date: tuple[dict[str, object], ...]
    stability: float | None
    horizons: tuple[HorizonResult, ...]  # empty when the set never binds
    never_binds: bool = False  # a "without RULE" set whose verdicts are the screen's every day


@dataclass(frozen=True)
class Period:
    """The screen's own rules over the as-of days from ``first`` to ``last`` of a run (its
    comparisons Holm-adjusted over its own horizons): a named part of the run's days."""

    name: str
    first: date
    last: date
    dates: tuple[date, ...]
    result: RuleSetResult | None  # None when the period holds no as-of day


@dataclass(frozen=True)
class Evaluation:
    dates: tuple[date, ...]
    every_days: int
    horizons: tuple[int, ...]
    fee: float
    n_pairs: int
    results: tuple[RuleSetResult, ...]
    warnings: tuple[str, ...]
    pairs_in_universe: int = 0  # all screened pairs, when ``n_pairs`` is a sample of them
    persistence_screens: int = 0  # previous days a persistence rule counts
    data_through: date | None = None  # the newest close the run read
    periods: tuple[Period, ...] = ()
    calibration: Calibration | None = None
    outcome: str = "reversion"
    strategy: str | None = None  # the strategy traded, for the strategy outcome and portfolio
    costs_set: bool = False  # whether the universe's [costs] priced the outcomes
    portfolio: tuple[PortfolioResult, ...] = ()  # per horizon, with --portfolio
    bar: BarSize = DAILY  # intraday: dates are bar closes, horizons and every_days bars


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
    persistence_screens: int = 6,
    screen_every_bars: int = 1,
    periods: Sequence[tuple[str, date, date]] = (),
    costs: SwapCosts | None = None,
    outcome: str = "reversion",
    strategy: Strategy | None = None,
    portfolio: PortfolioSpec | None = None,
    processes: int = 1,
) -> Evaluation:
    """Evaluate every rule set at every day of ``dates`` over every horizon; p-values are
    adjusted within two families (:func:`_by_family`), each measure on its own. A
    persistence rule counts the ``persistence_screens`` screens before each as-of point (the
    screen's setting): one a day on a daily universe, one every ``screen_every_bars`` bars
    on an intraday one (the worker's spacing, PAIRSCREEN_SCREEN_EVERY_BARS). Each of
    ``periods`` (name, first, last day) gets the screen's rules
    again over its own days, from the same replay. ``outcome`` "strategy" adds the
    ``strategy`` traded from each day (``evaluation.strategy_outcomes``) and tests its excess
    over holding both legs; ``portfolio`` adds the top picks traded with it
    (``evaluation.portfolio``). The as-of days are computed on ``processes`` forked workers
    (0: one per core; ``evaluation.day_work``), with the same result as in one."""
    if not horizons or min(horizons) < 1:
        raise ValueError("every --horizon must be at least 1 day")
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}: choose reversion or strategy")
    traded = outcome == "strategy" or portfolio is not None
    if traded and strategy is None:
        raise ValueError("the strategy outcome and the portfolio need a strategy")
    if portfolio is not None and market.scorer is None:
        raise ValueError("a portfolio ranks survivors by score: build the Market with a scorer")
    step = screen_spacing(market.bar, screen_every_bars)
    plan = DayPlan(
        plugins, market, sets, persistence_screens, horizons, fee, costs, strategy, traded, step
    )
    work = day_work(plan, dates, depegs_at, processes=processes, on_progress=on_progress)
    days: list[ReplayedDay] = [w.replayed for w in work]
    outcomes = {h: [w.outcomes[h] for w in work] for h in horizons}
    traded_outcomes: dict[int, list[StrategyOutcomes]] = (
        {h: [w.traded[h] for w in work] for h in horizons} if traded else {}
    )
    calibrated: list[StrategyOutcomes] | None = traded_outcomes.get(plan.calibration_horizon)
    if calibrated is None and work and all(w.calibrated is not None for w in work):
        calibrated = [w.calibrated for w in work if w.calibrated is not None]
    names = np.array([f"{a.ticker}/{b.ticker}" for a, b in market.pairs], dtype=object)
    points = "as-of closes" if market.bar.intraday else "as-of days"
    results = _results(sets, days, outcomes, names, every_days, traded_outcomes, outcome, points)
    of_pairs = market.pairs_in_universe or len(market.pairs)
    primaries: Mapping[int, Sequence[object]] = (
        traded_outcomes if outcome == "strategy" else outcomes
    )
    zoned = [bool(np.isin(v.verdicts.zone, ("bottom", "top")).any()) for v in days]
    warnings = (
        _warnings(results[0], primaries, PRIMARY[outcome], zoned, market.bar) if results else ()
    )
    intraday_step = step if market.bar.intraday else None
    warnings += tuple(notes(sets, len(market.pairs), of_pairs, persistence_screens, intraday_step))
    split = tuple(
        _period(
            name,
            first,
            last,
            sets[:1],
            days,
            outcomes,
            names,
            every_days,
            traded_outcomes,
            outcome,
            points,
        )
        for name, first, last in periods
    )
    read = [o.last_close for per_day in outcomes.values() for o in per_day if o.last_close]
    through = max([*read, dates[-1]]) if dates else None
    picked: tuple[PortfolioResult, ...] = ()
    if portfolio is not None:
        if not sets:
            raise ValueError("a portfolio needs the screen's rule set")
        picked = portfolios(
            market,
            [v.verdicts for v in days],
            [v.survives[sets[0].name] for v in days],
            traded_outcomes,
            portfolio,
            every_days,
        )
    return Evaluation(
        tuple(dates),
        every_days,
        tuple(horizons),
        fee,
        len(market.pairs),
        results,
        warnings,
        of_pairs,
        persistence_screens,
        through,
        split,
        _calibration(sets, days, outcomes, calibrated, every_days, market.bar),
        outcome,
        None if strategy is None or not traded else strategy.name,
        costs is not None and not costs.is_zero,
        picked,
        market.bar,
    )


def _period(
    name: str,
    first: date,
    last: date,
    screen: Sequence[RuleSet],
    days: Sequence[ReplayedDay],
    outcomes: Mapping[int, Sequence[Outcomes]],
    names: np.ndarray,
    every_days: int,
    traded: Mapping[int, Sequence[StrategyOutcomes]],
    outcome: str,
    points: str = "as-of days",
) -> Period:
    """The screen's rules over the replayed days from ``first`` to ``last``."""
    keep = [i for i, day in enumerate(days) if first <= day.verdicts.as_of <= last]
    dates = tuple(days[i].verdicts.as_of for i in keep)
    if not keep or not screen:
        return Period(name, first, last, dates, None)
    part = {h: [per_day[i] for i in keep] for h, per_day in outcomes.items()}
    traded_part = {h: [per_day[i] for i in keep] for h, per_day in traded.items()}
    result = _results(
        screen, [days[i] for i in keep], part, names, every_days, traded_part, outcome, points
    )[0]
    return Period(name, first, last, dates, result)


def _calibration(
    sets: Sequence[RuleSet],
    days: Sequence[ReplayedDay],
    outcomes: Mapping[int, Sequence[Outcomes]],
    traded: Sequence[StrategyOutcomes] | None,
    every_days: int,
    bar: BarSize,
) -> Calibration | None:
    """The screen's survivors' realised outcome by quintile of their model's figure, at
    :data:`~pairscreen.evaluation.calibration.CALIBRATION_HORIZON` days (in ``bar``'s bars):
    the strategy's excess over holding both legs (``traded``), else holding the cheap leg;
    None without that horizon or the model's figure."""
    horizon = calibration_bars(bar)
    per_day = outcomes.get(horizon)
    if not sets or per_day is None:
        return None
    screen = sets[0].name
    model = [day.verdicts.model_return for day in days]
    if all(m is None for m in model):
        return None
    n = days[0].verdicts.zone.size if days else 0
    if traded is not None:
        realised, measure = [o.excess for o in traded], STRATEGY_MEASURE
    else:
        realised, measure = [o.hold_value for o in per_day], HOLDING_MEASURE
    return calibrate(
        [np.full(n, np.nan) if m is None else m for m in model],
        [day.survives[screen] for day in days],
        realised,
        block_days=math.ceil(horizon / every_days),
        measure=measure,
    )


def _results(
    sets: Sequence[RuleSet],
    days: Sequence[ReplayedDay],
    outcomes: Mapping[int, Sequence[Outcomes]],
    names: np.ndarray,
    every_days: int,
    traded_outcomes: Mapping[int, Sequence[StrategyOutcomes]],
    outcome: str,
    points: str = "as-of days",
) -> tuple[RuleSetResult, ...]:
    """Every rule set's comparisons over ``days`` (adjusted within :func:`_by_family`, each
    measure on its own): the reversion's, and with ``outcome`` "strategy" the strategy's;
    ``points`` names the as-of points in the warnings (``as-of closes`` on bars)."""
    survive = {s.name: [v.survives[s.name] for v in days] for s in sets}
    screen = survive[sets[0].name] if sets else []
    idle = {
        s.name
        for s in sets[1:]
        if s.without
        and all(np.array_equal(a, b) for a, b in zip(survive[s.name], screen, strict=True))
    }
    compared = [(s, h) for s in sets if s.name not in idle for h in sorted(outcomes)]
    tested = ("reversion", *STRATEGY_MEASURES) if outcome == "strategy" else ("reversion",)
    raw: dict[str, dict[tuple[str, int], Compared]] = {}
    for measure in tested:
        source: Mapping[int, Sequence[object]] = (
            outcomes if measure == "reversion" else traded_outcomes
        )
        raw[measure] = {
            (s.name, h): _compare(
                survive[s.name], source[h], names, math.ceil(h / every_days), measure
            )
            for s, h in compared
        }
    adjusted = {m: _by_family(raw[m], sets[0].name if sets else "") for m in tested}
    primary = PRIMARY[outcome]
    horizon_results = {
        key: _horizon(key[1], {m: raw[m][key] for m in tested}, adjusted, key, primary, points)
        for key in raw["reversion"]
    }
    return tuple(
        RuleSetResult(
            s,
            _per_date(days, s, names),
            stability(survive[s.name]),
            tuple(horizon_results[(s.name, h)] for h in sorted(outcomes) if s.name not in idle),
            s.name in idle,
        )
        for s in sets
    )


def _by_family(
    raw: Mapping[tuple[str, int], Compared],
    screen: str,
) -> dict[tuple[str, int], Difference]:
    """Adjusted differences in two families. The screen's own rules over their horizons
    (the primary question: do the rules as run pay?) are a fixed sequence, the shortest
    horizon first: it is tested at the full 5 %, each longer one at 5 % only while every
    shorter one is evidence (:func:`with_fixed_sequence`; the order is the design's, fixed
    before any outcome is seen). Holm over both horizons halved the level of each and
    needed about a fifth more true difference for the same power. Every other rule set and
    horizon (exploratory: what each rule left out or rule file would change) is one Holm
    family apart, so that adding variants never dilutes the primary test. A difference the
    observation rules refuse (:func:`shortfalls`, which look at who was selected, never at
    the outcomes) can never be evidence, so it is left out of its family (``p_holm``
    None)."""
    out: dict[tuple[str, int], Difference] = {}
    for primary in (True, False):
        keys = sorted(
            (key for key in raw if (key[0] == screen) == primary), key=lambda k: (k[1], k[0])
        )
        eligible = []
        for key in keys:
            survivors, rest, diff = raw[key][0], raw[key][1], raw[key][2]
            refused = bool(shortfalls(survivors, rest, diff.block_days))
            out[key] = replace(diff, too_few=refused)
            if not refused:
                eligible.append(key)
        adjust = with_fixed_sequence if primary else with_holm
        for key, diff in zip(eligible, adjust([out[k] for k in eligible]), strict=True):
            out[key] = diff
    return {key: out[key] for key in raw}


def _per_date(
    days: Sequence[ReplayedDay], rule_set: RuleSet, names: np.ndarray
) -> tuple[dict[str, object], ...]:
    """Each day's counts and survivors; with a screen-wide rule on, also how many pairs each
    one removed, the q-value families' sizes, and ``survived_last`` of every pair the
    persistence rule judged."""
    out = []
    for day in days:
        v, s = day.verdicts, day.survives[rule_set.name]
        entry: dict[str, object] = {
            "as_of": iso(v.as_of),
            "pairs": int((v.zone != "").sum()),
            "survivors": int(s.sum()),
            "in_zones": int(np.isin(v.zone, ("bottom", "top")).sum()),
            "survivors_in_zones": int((s & np.isin(v.zone, ("bottom", "top"))).sum()),
            "survivor_pairs": [str(name) for name in names[s]],
        }
        rejected = day.rejected[rule_set.name]
        if rejected:
            entry["pairs_tested"] = int(v.tested.sum())
            entry["qvalue_tests"] = day.qvalue_tests
            entry["rejected"] = dict(rejected)
        if rule_set.name in day.survived_last:
            counts = day.survived_last[rule_set.name]
            judged = day.judged[rule_set.name]
            entry["survived_last"] = {str(names[i]): int(counts[i]) for i in np.flatnonzero(judged)}
        out.append(entry)
    return tuple(out)


Compared = tuple[GroupSummary, GroupSummary, Difference, Observations, tuple[float | None, ...]]


def _compare(
    survive: Sequence[np.ndarray],
    outcomes: Sequence[object],
    names: np.ndarray,
    block: int,
    measure: str,
) -> Compared:
    """One measure's comparison (its difference not yet Holm-adjusted), its observations (the
    reversion's carry the holding values too: :func:`_reversion_parts`) and the per-day
    difference."""
    day_idx, pair_idx, surv, values = [], [], [], []
    per_date: list[float | None] = []
    for d, (s, o) in enumerate(zip(survive, outcomes, strict=True)):
        measured = getattr(o, measure)
        at = np.flatnonzero(np.isfinite(measured))
        day_idx.append(np.full(at.size, d))
        pair_idx.append(at)
        surv.append(s[at])
        values.append(measured[at])
        move, chosen = measured[at], s[at]
        both = chosen.any() and (~chosen).any()
        per_date.append(float(move[chosen].mean() - move[~chosen].mean()) if both else None)
    obs = Observations(
        np.concatenate(values) if values else np.zeros(0),
        np.concatenate(day_idx) if day_idx else np.zeros(0, dtype=int),
        np.concatenate(pair_idx) if pair_idx else np.zeros(0, dtype=int),
        np.concatenate(surv) if surv else np.zeros(0, dtype=bool),
        len(outcomes),
        names,
    )
    if measure == "reversion":
        obs = _reversion_parts(obs, [o for o in outcomes if isinstance(o, Outcomes)])
    return (
        summarise(obs, True, block),
        summarise(obs, False, block),
        difference(obs, block),
        obs,
        tuple(per_date),
    )


@dataclass(frozen=True)
class _ReversionObservations(Observations):
    """The reversion's observations with the holding values of the same pairs and days."""

    hold_value: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hold_other_leg: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _reversion_parts(obs: Observations, outcomes: Sequence[Outcomes]) -> Observations:
    held = {}
    for measure in ("hold_value", "hold_other_leg"):
        parts = [getattr(o, measure)[np.flatnonzero(np.isfinite(o.reversion))] for o in outcomes]
        held[measure] = np.concatenate(parts) if parts else np.zeros(0)
    return _ReversionObservations(
        obs.values, obs.day, obs.pair, obs.survivor, obs.days, obs.pair_names, **held
    )


def _horizon(
    horizon: int,
    raw: Mapping[str, Compared],
    adjusted: Mapping[str, Mapping[tuple[str, int], Difference]],
    key: tuple[str, int],
    primary: str,
    points: str = "as-of days",
) -> HorizonResult:
    """The reversion's three measures share their observations: holding the cheap leg is the
    move plus the costs of its two swaps (a constant without ``[costs]``), so its difference
    is reported as the move's; holding the other leg is the costs minus the move, so its
    difference is the move's negated. The strategy's measures each have their own."""
    survivors, rest, _diff, obs, per_date = raw["reversion"]
    diff = adjusted["reversion"][key]
    block = diff.block_days
    assert isinstance(obs, _ReversionObservations)
    cheap = replace(obs, values=obs.hold_value)
    other = replace(obs, values=obs.hold_other_leg)
    measures = {
        "reversion": Comparison(survivors, rest, diff),
        "hold_value": Comparison(
            summarise(cheap, True, block), summarise(cheap, False, block), diff
        ),
        "hold_other_leg": Comparison(
            summarise(other, True, block), summarise(other, False, block), negated(diff)
        ),
    }
    for measure in STRATEGY_MEASURES:
        if measure in raw:
            s, r, _d, _o, days = raw[measure]
            measures[measure] = Comparison(s, r, adjusted[measure][key])
            if measure == primary:
                per_date = days
    survivors, rest = measures[primary].survivors, measures[primary].rest
    reasons = shortfalls(survivors, rest, block, points)
    return HorizonResult(horizon, measures, per_date, tuple(reasons), primary)


def _warnings(
    screen: RuleSetResult,
    outcomes: Mapping[int, Sequence[object]],
    primary: str,
    zoned: Sequence[bool],
    bar: BarSize = DAILY,
) -> tuple[str, ...]:
    """What the design cannot show, for the screen's own rules; ``zoned`` says per as-of day
    whether any pair sat in a band zone (a day without one has no outcome to measure, which
    is not missing data)."""
    out: list[str] = []
    point = "as-of close" if bar.intraday else "as-of day"
    empty = sum(1 for z in zoned if not z)
    if empty:
        verb = "has" if empty == 1 else "have"
        out.append(f"{plural(empty, point)} {verb} no pair in a band zone (nothing to measure)")
    for result in screen.horizons:
        h, diff = result.horizon, result.difference
        named = spell(h, bar)
        beyond = sum(
            1
            for o, z in zip(outcomes[h], zoned, strict=True)
            if z and not np.isfinite(getattr(o, primary)).any()
        )
        if beyond:
            missing = f"{plural(beyond, point)} {'has' if beyond == 1 else 'have'} no outcome"
            out.append(f"{named}: {missing} (no data {named} later)")
        if diff.estimate is None:
            out.append(f"{named}: no comparison (no survivors or no other pairs in the zones)")
        elif diff.min_detectable is None or diff.standard_error is None:
            out.append(f"{named}: too few {point}s with both groups for an interval")
        else:
            out.append(
                f"{named}: this design cannot resolve differences smaller than "
                f"{diff.min_detectable * 100:.1f} pp of {_UNITS[primary]} (80 % power at the "
                f"one-sided 5 % level{_level_note(diff)}: "
                f"{diff.min_detectable / diff.standard_error:.2f} overlap-aware standard "
                f"errors, blocks of {diff.block_days} {point}s)"
            )
    return tuple(out)


def _level_note(diff: Difference) -> str:
    """How the family sets the level of ``diff``'s test, for the design warning."""
    if diff.adjustment == FIXED_SEQUENCE:
        return ", each horizon in turn while the shorter ones are evidence"
    return f" over {diff.family} comparisons"
