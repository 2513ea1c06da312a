"""The screen-wide rules replayed on past days: q-values over each day's tested pairs, and
persistence over the days before it.

A screen decides these rules once every chunk is in (``screening.screen``): the q-value of a
p-value is Benjamini-Hochberg over every pair that screen tested, and ``survived_last``
counts the previous screens, each at least a day apart (a bar apart on an intraday
universe), in which the pair survived. The
replay does the same with nothing but the candles known at each day's close:

- **q-values**: BH over the p-values of every pair tested that day (the sample's pairs, when
  the evaluation samples: that is the family it can see);
- **persistence**: the previous screens are those at the close of each of the
  ``previous_screens`` days before the as-of day (a screen every day, which is what the
  spacing leaves of a denser schedule; on an intraday universe the closes of the worker's
  screens before it, one every ``PAIRSCREEN_SCREEN_EVERY_BARS`` bars), each replayed as of
  its own close with the set's filter and q-value rules. The persistence rule itself is left
  out of those days, as a live screen leaves it out of the screens it counts
  (``Screen.candidate_keys``): applied there too, the first day, without history, would pass
  nothing and so would every later one. Only the pairs that pass the set's other rules on
  the as-of day are counted, so a previous day costs the metrics of those pairs alone, or
  the whole day when the set also has a q-value rule (the q-values need every p-value).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import numpy as np

from pairscreen.contracts.bars import BarSize
from pairscreen.engine.fdr import bh_qvalues
from pairscreen.engine.screen_rules import QVALUE_FIELDS, SCREEN_RULES, ScreenRule
from pairscreen.evaluation.rule_sets import RuleSet
from pairscreen.evaluation.verdicts import DateVerdicts, DepegsAt, Market, verdicts_at
from pairscreen.market.freshness import span_words
from pairscreen.plugin_system.registry import Plugins

PERSISTENCE = "persistence"
QVALUE_CODES = ("coint_q", "adf_q")


@dataclass(frozen=True)
class ReplayedDay:
    """One as-of day: the filter's verdicts, the day's q-values and, per rule set, who
    survives every rule and how many each screen-wide rule removed; for a set with the
    persistence rule, the pairs it judged (those that passed the set's other rules) and
    their ``survived_last`` (0 elsewhere)."""

    verdicts: DateVerdicts
    qvalues: Mapping[str, np.ndarray]  # coint_qvalue, adf_qvalue -> (pairs,) float; {} when
    # no rule set has a q-value rule
    survives: Mapping[str, np.ndarray]
    rejected: Mapping[str, Mapping[str, int]]  # set name -> screen-wide code -> pairs
    survived_last: Mapping[str, np.ndarray]  # set name -> (pairs,) int
    judged: Mapping[str, np.ndarray]  # set name -> (pairs,) bool

    @property
    def qvalue_tests(self) -> dict[str, int]:
        """How many p-values each BH family held (``m``), as a screen's ``qvalue_tests``."""
        return {name: int(np.isfinite(self.verdicts.pvalues[name]).sum()) for name in QVALUE_FIELDS}


def day_qvalues(verdicts: DateVerdicts) -> dict[str, np.ndarray]:
    """Each pair's q-values: BH over the p-values of every pair tested that day (NaN for a
    pair without a p-value). Refuses a day computed for a subset of the pairs."""
    if not verdicts.complete:
        raise ValueError(f"{verdicts.as_of}: q-values need every pair of the day")
    return {q: bh_qvalues(verdicts.pvalues[p]) for p, q in QVALUE_FIELDS.items()}


def passing(rule: ScreenRule, values: np.ndarray, threshold: float) -> np.ndarray:
    """``ScreenRule.passes`` over an array: a NaN (null) value fails a rule that is on."""
    finite = np.isfinite(values)
    clean = np.where(finite, values, 0.0)
    ok: np.ndarray = finite & (clean >= threshold if rule.at_least else clean < threshold)
    return ok


def before_persistence(
    verdicts: DateVerdicts, qvalues: Mapping[str, np.ndarray], rule_set: RuleSet
) -> tuple[np.ndarray, dict[str, int]]:
    """The pairs that pass the set's filter and q-value rules, and how many each q-value
    rule removed (in the screen's order: the first rule a pair fails counts it)."""
    keep = verdicts.survives[rule_set.name].copy()
    rejected: dict[str, int] = {}
    for rule in SCREEN_RULES:
        if rule.code == PERSISTENCE or not rule_set.screen_rule_on(rule.code):
            continue
        ok = passing(rule, qvalues[rule.field], rule_set.screen_wide[rule.limit])
        rejected[rule.code] = int((keep & ~ok).sum())
        keep &= ok
    return keep, rejected


def needs_family(rule_set: RuleSet) -> bool:
    return any(rule_set.screen_rule_on(code) for code in QVALUE_CODES)


@dataclass
class Replay:
    """Every rule set's verdicts at as-of days, the screen-wide rules included.

    Whole days are kept while a later as-of day may count them (as-of days come in order);
    a previous day computed for some pairs only is used once and dropped.
    """

    plugins: Plugins
    market: Market
    sets: Sequence[RuleSet]
    depegs_at: DepegsAt
    previous_screens: int
    # The time between the screens a persistence rule counts: a day on a daily universe,
    # the worker's spacing (PAIRSCREEN_SCREEN_EVERY_BARS bars) on an intraday one.
    screen_step: timedelta = timedelta(days=1)
    _days: dict[date, tuple[DateVerdicts, dict[str, np.ndarray]]] = field(default_factory=dict)

    @property
    def persistent(self) -> list[RuleSet]:
        """The sets whose persistence rule is on."""
        return [s for s in self.sets if s.screen_rule_on(PERSISTENCE)]

    def day(self, day: date) -> ReplayedDay:
        verdicts, qvalues = self._whole(day)
        survives: dict[str, np.ndarray] = {}
        rejected: dict[str, dict[str, int]] = {}
        for rule_set in self.sets:
            survives[rule_set.name], rejected[rule_set.name] = before_persistence(
                verdicts, qvalues, rule_set
            )
        counts = self._survived_last(day, survives)
        judged = {s.name: survives[s.name] for s in self.persistent}
        for rule_set in self.persistent:
            rule = next(r for r in SCREEN_RULES if r.code == PERSISTENCE)
            keep = survives[rule_set.name]
            ok = counts[rule_set.name] >= rule_set.screen_wide[rule.limit]
            rejected[rule_set.name][PERSISTENCE] = int((keep & ~ok).sum())
            survives[rule_set.name] = keep & ok
        kept_from = day - (self.previous_screens - 1) * self.screen_step if self.persistent else day
        for old in [d for d in self._days if d < kept_from]:
            del self._days[old]
        return ReplayedDay(verdicts, qvalues, survives, rejected, counts, judged)

    def remember(self, day: date) -> None:
        """Replay ``day`` whole and keep it while later days may count it, as a pass that
        started earlier would hold it (a run cut into stretches: ``evaluation.day_work``)."""
        self._whole(day)

    def _whole(self, day: date) -> tuple[DateVerdicts, dict[str, np.ndarray]]:
        if day not in self._days:
            verdicts = verdicts_at(self.plugins, self.market, self.sets, day, self.depegs_at)
            wanted = any(needs_family(s) for s in self.sets)  # else no rule reads them
            self._days[day] = (verdicts, day_qvalues(verdicts) if wanted else {})
        return self._days[day]

    def _survived_last(
        self, day: date, candidates: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """Per persistent set, in how many of the previous days each of its candidates
        passed the set's filter and q-value rules."""
        sets = self.persistent
        counts = {s.name: np.zeros(len(self.market.pairs), dtype=int) for s in sets}
        wanted = np.zeros(len(self.market.pairs), dtype=bool)
        for s in sets:
            wanted |= candidates[s.name]
        if not wanted.any():
            return counts
        whole = any(needs_family(s) for s in sets)
        for back in range(1, self.previous_screens + 1):
            before = day - back * self.screen_step
            if whole or before in self._days:
                verdicts, qvalues = self._whole(before)
                passed = {s.name: before_persistence(verdicts, qvalues, s)[0] for s in sets}
            else:  # no q-value rule: the filter's verdict of the candidates is enough
                part = verdicts_at(self.plugins, self.market, sets, before, self.depegs_at, wanted)
                passed = {s.name: part.survives[s.name] for s in sets}
            for s in sets:
                counts[s.name] += candidates[s.name] & passed[s.name]
        return counts


def screen_spacing(bar: BarSize, every_bars: int = 1) -> timedelta:
    """The time between the screens a persistence rule counts: a day on a daily universe
    (live screens count at least a day apart), ``every_bars`` bars on an intraday one (the
    bar-following worker's screens, each reading a later bar)."""
    if not bar.intraday:
        return timedelta(days=1)
    return timedelta(seconds=bar.seconds * max(1, every_bars))


def notes(
    sets: Sequence[RuleSet],
    pairs: int,
    of_pairs: int,
    previous_screens: int,
    intraday_step: timedelta | None = None,
) -> list[str]:
    """What the replay of the screen-wide rules cannot match of a live screen, in sentences;
    ``intraday_step`` the time between the counted screens of an intraday universe."""
    out: list[str] = []
    if any(needs_family(s) for s in sets) and pairs < of_pairs:
        out.append(
            f"q-values: Benjamini-Hochberg over the pairs of the sample tested each day (at "
            f"most {pairs}), not over every tested pair of the {of_pairs} the screen covers; "
            "they estimate the screen's q-values, with more noise"
        )
    if any(s.screen_rule_on(PERSISTENCE) for s in sets):
        if intraday_step is None:
            out.append(
                f"persistence: survived_last counts the {previous_screens} days before each "
                "as-of day, each replayed at its close with the set's filter and q-value rules "
                "(as if a screen had run every day), the persistence rule itself left out of "
                "those days"
            )
        else:
            apart = span_words(int(intraday_step.total_seconds()))
            out.append(
                f"persistence: survived_last counts the {previous_screens} closes before each "
                f"as-of close, {apart} apart (the worker's screens), each replayed at its "
                "close with the set's filter and q-value rules, "
                "the persistence rule itself left out of those closes"
            )
    return out
