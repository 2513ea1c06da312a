"""The rule sets an evaluation compares: the screen's own rules, those rules without each
single rule (what each rule adds), and any rule files given (``[screen]`` tables).

A rule set is a :class:`~pairscreen.contracts.Filter` with its thresholds, so the engine's own
``filter_reasons`` decides each verdict exactly as the screen does, and the limits of the
screen-wide rules (q-values, persistence: ``engine.screen_rules``), which the evaluation
replays after the filter as the screen applies them after its chunks. A screen-wide rule
that is on gives a "without" set too, with that rule off.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pairscreen.contracts import Filter, FilterRule
from pairscreen.engine.filtering import choose_filter, filter_codes
from pairscreen.engine.screen_rules import SCREEN_RULES, SCREEN_THRESHOLDS
from pairscreen.plugin_system.registry import PluginError, Plugins
from pairscreen.universe import Universe, UniverseError, parse_screen


@dataclass(frozen=True)
class ReducedFilter:
    """A filter with some of its rules left out (it satisfies the ``Filter`` protocol)."""

    name: str
    thresholds: Mapping[str, float]
    rules: Sequence[FilterRule]


@dataclass(frozen=True)
class RuleSet:
    """A named filter with the thresholds it runs with and the screen-wide rules' limits;
    ``without`` is the code of the rule a "without RULE" set leaves out (empty otherwise)."""

    name: str
    screen_filter: Filter
    thresholds: Mapping[str, float]
    description: str
    screen_wide: Mapping[str, float] = field(default_factory=lambda: dict(SCREEN_THRESHOLDS))
    without: str = ""

    def screen_rule_on(self, code: str) -> bool:
        """Whether the screen-wide rule ``code`` (``coint_q``, ``adf_q``, ``persistence``)
        decides anything in this set."""
        rule = next(r for r in SCREEN_RULES if r.code == code)
        return self.screen_wide.get(rule.limit, rule.off) != rule.off


def rule_sets(plugins: Plugins, universe: Universe, rule_files: Sequence[Path]) -> list[RuleSet]:
    """The universe's screen filter, then one set per rule it drops, then each file's set.

    Raises :class:`UniverseError` for an unreadable or malformed rule file.
    """
    choice = choose_filter(plugins, universe)
    screen_filter = plugins.filters.get(choice.name)
    wide = dict(choice.screen_wide)
    screen = RuleSet("screen", screen_filter, choice.thresholds, f"filter {choice.name!r}", wide)
    sets = [screen]
    for code in filter_codes(screen_filter):
        kept = tuple(rule for rule in screen_filter.rules if rule.code != code)
        reduced = ReducedFilter(f"{screen_filter.name} without {code}", choice.thresholds, kept)
        sets.append(
            RuleSet(
                f"without {code}",
                reduced,
                choice.thresholds,
                f"without rule {code!r}",
                wide,
                without=code,
            )
        )
    for rule in SCREEN_RULES:
        if screen.screen_rule_on(rule.code):
            off = {**wide, rule.limit: rule.off}
            description = f"without screen-wide rule {rule.code!r} ({rule.limit})"
            sets.append(
                replace(
                    screen,
                    name=f"without {rule.code}",
                    description=description,
                    screen_wide=off,
                    without=rule.code,
                )
            )
    for path in rule_files:
        name, thresholds = _read_rule_file(path)
        try:
            chosen = choose_filter(
                plugins, replace(universe, screen_filter=name, screen_thresholds=thresholds)
            )
            chosen_filter = plugins.filters.get(chosen.name)
        except (UniverseError, PluginError) as exc:
            raise UniverseError(f"rule file {path}: {exc}") from None
        sets.append(
            RuleSet(
                path.stem,
                chosen_filter,
                chosen.thresholds,
                f"{path.name}: filter {chosen.name!r}",
                dict(chosen.screen_wide),
            )
        )
    names = [s.name for s in sets]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UniverseError(f"two rule sets are named {duplicates[0]!r}; rename a rule file")
    return sets


def _read_rule_file(path: Path) -> tuple[str, dict[str, float]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UniverseError(f"cannot read rule file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UniverseError(f"rule file {path} is not valid TOML: {exc}") from None
    if "screen" not in data:
        raise UniverseError(f"rule file {path} has no [screen] table (filter and thresholds)")
    return parse_screen(data["screen"], f"{path}: [screen]")
