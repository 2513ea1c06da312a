"""An evaluation: verdicts at every as-of day, forward outcomes, survivors against the rest.

The metrics are computed once per day (the expensive part); every rule set is then a cheap
pass of its filter over the same arrays, then of its screen-wide rules (q-values over the
day's tested pairs, persistence over the days before: ``evaluation.screen_wide``), and the
outcomes of a day do not depend on the rule set, so adding rule sets costs little (a set
with the persistence rule adds the days before each as-of day). Nothing is written: it
reads candles and peg events.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from pairscreen.evaluation.calibration import (
    CALIBRATION_HORIZON,
    CALIBRATION_MEASURE,
    Calibration,
    calibrate,
)
from pairscreen.evaluation.outcomes import Outcomes, outcomes_at
from pairscreen.evaluation.rule_sets import RuleSet
from pairscreen.evaluation.screen_wide import Replay, ReplayedDay, notes
from pairscreen.evaluation.statistics import (
    Difference,
    GroupSummary,
    Observations,
    difference,
    negated,
    shortfalls,
    stability,
    summarise,
    with_holm,
)
from pairscreen.evaluation.verdicts import DepegsAt, Market
from pairscreen.plugin_system.registry import Plugins
from pairscreen.wording import plural

Progress = Callable[[int, int], None]


MEASURES = ("reversion", "hold_value", "hold_other_leg")


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
    per_date: tuple[float | None, ...]  # survivors' mean move minus the rest's, per day
    warnings: tuple[str, ...]

    @property
    def difference(self) -> Difference:
        return self.measures["reversion"].difference


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
    periods: Sequence[tuple[str, date, date]] = (),
) -> Evaluation:
    """Evaluate every rule set at every day of ``dates`` over every horizon; p-values are
    Holm-adjusted within two families (:func:`_by_family`). A persistence rule counts the
    ``persistence_screens`` days before each as-of day (the screen's setting). Each of
    ``periods`` (name, first, last day) gets the screen's rules again over its own days,
    from the same replay."""
    if not horizons or min(horizons) < 1:
        raise ValueError("every --horizon must be at least 1 day")
    replay = Replay(plugins, market, sets, depegs_at, persistence_screens)
    days: list[ReplayedDay] = []
    for done, day in enumerate(dates, start=1):
        days.append(replay.day(day))
        if on_progress is not None:
            on_progress(done, len(dates))
    outcomes = {h: [outcomes_at(market, v.verdicts, h, fee) for v in days] for h in horizons}
    names = np.array([f"{a.ticker}/{b.ticker}" for a, b in market.pairs], dtype=object)
    results = _results(sets, days, outcomes, names, every_days)
    of_pairs = market.pairs_in_universe or len(market.pairs)
    warnings = _warnings(results[0], outcomes) if results else ()
    warnings += tuple(notes(sets, len(market.pairs), of_pairs, persistence_screens))
    split = tuple(
        _period(name, first, last, sets[:1], days, outcomes, names, every_days)
        for name, first, last in periods
    )
    read = [o.last_close for per_day in outcomes.values() for o in per_day if o.last_close]
    through = max([*read, dates[-1]]) if dates else None
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
        _calibration(sets, days, outcomes, every_days),
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
) -> Period:
    """The screen's rules over the replayed days from ``first`` to ``last``."""
    keep = [i for i, day in enumerate(days) if first <= day.verdicts.as_of <= last]
    dates = tuple(days[i].verdicts.as_of for i in keep)
    if not keep or not screen:
        return Period(name, first, last, dates, None)
    part = {h: [per_day[i] for i in keep] for h, per_day in outcomes.items()}
    result = _results(screen, [days[i] for i in keep], part, names, every_days)[0]
    return Period(name, first, last, dates, result)


def _calibration(
    sets: Sequence[RuleSet],
    days: Sequence[ReplayedDay],
    outcomes: Mapping[int, Sequence[Outcomes]],
    every_days: int,
) -> Calibration | None:
    """The screen's survivors' realised outcome by quintile of their model's figure, at
    :data:`CALIBRATION_HORIZON` days; None without that horizon or the model's figure."""
    per_day = outcomes.get(CALIBRATION_HORIZON)
    if not sets or per_day is None:
        return None
    screen = sets[0].name
    model = [day.verdicts.model_return for day in days]
    if all(m is None for m in model):
        return None
    n = days[0].verdicts.zone.size if days else 0
    return calibrate(
        [np.full(n, np.nan) if m is None else m for m in model],
        [day.survives[screen] for day in days],
        [getattr(o, CALIBRATION_MEASURE) for o in per_day],
        block_days=math.ceil(CALIBRATION_HORIZON / every_days),
    )


def _results(
    sets: Sequence[RuleSet],
    days: Sequence[ReplayedDay],
    outcomes: Mapping[int, Sequence[Outcomes]],
    names: np.ndarray,
    every_days: int,
) -> tuple[RuleSetResult, ...]:
    """Every rule set's comparisons over ``days`` (Holm within :func:`_by_family`)."""
    survive = {s.name: [v.survives[s.name] for v in days] for s in sets}
    screen = survive[sets[0].name] if sets else []
    idle = {
        s.name
        for s in sets[1:]
        if s.without
        and all(np.array_equal(a, b) for a, b in zip(survive[s.name], screen, strict=True))
    }
    compared = [(s, h) for s in sets if s.name not in idle for h in sorted(outcomes)]
    raw = {
        (s.name, h): _compare(survive[s.name], outcomes[h], names, math.ceil(h / every_days))
        for s, h in compared
    }
    adjusted = _by_family(raw, sets[0].name if sets else "")
    horizon_results = {
        key: _horizon(key[1], survivors, rest, adjusted[key], parts, per_date)
        for key, (survivors, rest, _raw, parts, per_date) in raw.items()
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
    raw: Mapping[tuple[str, int], tuple[GroupSummary, GroupSummary, Difference, Parts, object]],
    screen: str,
) -> dict[tuple[str, int], Difference]:
    """Holm-adjusted differences in two families: the screen's own rules over their horizons
    (the primary question: do the rules as run pay?) and, apart, every other rule set and
    horizon (exploratory: what each rule left out or rule file would change), so that
    adding variants never dilutes the primary test. A difference the observation rules
    refuse (:func:`shortfalls`, which look at who was selected, never at the outcomes) can
    never be evidence, so it is left out of its family (``p_holm`` None)."""
    out: dict[tuple[str, int], Difference] = {}
    for primary in (True, False):
        keys = [key for key in raw if (key[0] == screen) == primary]
        eligible = []
        for key in keys:
            survivors, rest, diff = raw[key][0], raw[key][1], raw[key][2]
            refused = bool(shortfalls(survivors, rest, diff.block_days))
            out[key] = replace(diff, too_few=refused)
            if not refused:
                eligible.append(key)
        for key, diff in zip(eligible, with_holm([out[k] for k in eligible]), strict=True):
            out[key] = diff
    return out


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
            "as_of": v.as_of.isoformat(),
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


Parts = tuple[Observations, Observations, Observations]


def _compare(
    survive: Sequence[np.ndarray], outcomes: Sequence[Outcomes], names: np.ndarray, block: int
) -> tuple[GroupSummary, GroupSummary, Difference, Parts, tuple[float | None, ...]]:
    """The reversion comparison (its difference not yet Holm-adjusted), the observations of
    every measure, and the per-day difference."""
    day_idx, pair_idx, surv, values = [], [], [], {m: [] for m in MEASURES}  # type: ignore[var-annotated]
    per_date: list[float | None] = []
    for d, (s, o) in enumerate(zip(survive, outcomes, strict=True)):
        at = np.flatnonzero(np.isfinite(o.reversion))
        day_idx.append(np.full(at.size, d))
        pair_idx.append(at)
        surv.append(s[at])
        for measure in MEASURES:
            values[measure].append(getattr(o, measure)[at])
        move, chosen = o.reversion[at], s[at]
        both = chosen.any() and (~chosen).any()
        per_date.append(float(move[chosen].mean() - move[~chosen].mean()) if both else None)
    day = np.concatenate(day_idx) if day_idx else np.zeros(0, dtype=int)
    pair = np.concatenate(pair_idx) if pair_idx else np.zeros(0, dtype=int)
    flags = np.concatenate(surv) if surv else np.zeros(0, dtype=bool)
    parts = tuple(
        Observations(
            np.concatenate(values[m]) if values[m] else np.zeros(0),
            day,
            pair,
            flags,
            len(outcomes),
            names,
        )
        for m in MEASURES
    )
    reversion = parts[0]
    return (
        summarise(reversion, True, block),
        summarise(reversion, False, block),
        difference(reversion, block),
        parts,  # type: ignore[return-value]
        tuple(per_date),
    )


def _horizon(
    horizon: int,
    survivors: GroupSummary,
    rest: GroupSummary,
    diff: Difference,
    parts: Parts,
    per_date: tuple[float | None, ...],
) -> HorizonResult:
    """The three measures share their observations: holding the cheap leg is the move plus
    a constant (the fees), so its difference is the move's; holding the other leg is the
    constant minus the move, so its difference is the move's negated."""
    block = diff.block_days
    reasons = shortfalls(survivors, rest, block)
    measures = {
        "reversion": Comparison(survivors, rest, diff),
        "hold_value": Comparison(
            summarise(parts[1], True, block), summarise(parts[1], False, block), diff
        ),
        "hold_other_leg": Comparison(
            summarise(parts[2], True, block), summarise(parts[2], False, block), negated(diff)
        ),
    }
    return HorizonResult(horizon, measures, per_date, tuple(reasons))


def _warnings(screen: RuleSetResult, outcomes: Mapping[int, Sequence[Outcomes]]) -> tuple[str, ...]:
    """What the design cannot show, for the screen's own rules."""
    out: list[str] = []
    for result in screen.horizons:
        h, diff = result.horizon, result.difference
        beyond = sum(1 for o in outcomes[h] if not np.isfinite(o.reversion).any())
        if beyond:
            missing = f"{plural(beyond, 'as-of day')} {'has' if beyond == 1 else 'have'} no outcome"
            out.append(f"{h} days: {missing} (no data {h} days later)")
        if diff.estimate is None:
            out.append(f"{h} days: no comparison (no survivors or no other pairs in the zones)")
        elif diff.min_detectable is None or diff.standard_error is None:
            out.append(f"{h} days: too few as-of days with both groups for an interval")
        else:
            out.append(
                f"{h} days: this design cannot resolve differences smaller than "
                f"{diff.min_detectable * 100:.1f} pp of log-ratio (80 % power at the 5 % "
                f"level over {diff.family} comparisons: "
                f"{diff.min_detectable / diff.standard_error:.2f} overlap-aware standard "
                f"errors, blocks of {diff.block_days} as-of days)"
            )
    return tuple(out)
