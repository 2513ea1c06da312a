"""The rule sets an evaluation compares: the screen's own filter, that filter without each
single rule (what each rule adds), and any rule files given (``[screen]`` tables).

A rule set is a :class:`~pairscreen.types.Filter` with its thresholds, so the engine's own
``filter_reasons`` decides each verdict exactly as the screen does.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pairscreen.engine.filtering import FilterChoice, choose_filter, filter_codes
from pairscreen.engine.screen_rules import SCREEN_THRESHOLDS
from pairscreen.plugin_system.registry import Plugins
from pairscreen.types import Filter, FilterRule
from pairscreen.universe import Universe, UniverseError, parse_screen


@dataclass(frozen=True)
class ReducedFilter:
    """A filter with some of its rules left out (it satisfies the ``Filter`` protocol)."""

    name: str
    thresholds: Mapping[str, float]
    rules: Sequence[FilterRule]


@dataclass(frozen=True)
class RuleSet:
    """A named filter with the thresholds it runs with."""

    name: str
    screen_filter: Filter
    thresholds: Mapping[str, float]
    description: str


def rule_sets(plugins: Plugins, universe: Universe, rule_files: Sequence[Path]) -> list[RuleSet]:
    """The universe's screen filter, then one set per rule it drops, then each file's set.

    Raises :class:`UniverseError` for an unreadable or malformed rule file.
    """
    choice = choose_filter(plugins, universe)
    _replayable(choice, "the universe's [screen] table")
    screen_filter = plugins.filters.get(choice.name)
    sets = [RuleSet("screen", screen_filter, choice.thresholds, f"filter {choice.name!r}")]
    for code in filter_codes(screen_filter):
        kept = tuple(rule for rule in screen_filter.rules if rule.code != code)
        reduced = ReducedFilter(f"{screen_filter.name} without {code}", choice.thresholds, kept)
        sets.append(
            RuleSet(f"without {code}", reduced, choice.thresholds, f"without rule {code!r}")
        )
    for path in rule_files:
        name, thresholds = _read_rule_file(path)
        chosen = choose_filter(
            plugins, replace(universe, screen_filter=name, screen_thresholds=thresholds)
        )
        _replayable(chosen, f"rule file {path}")
        sets.append(
            RuleSet(
                path.stem,
                plugins.filters.get(chosen.name),
                chosen.thresholds,
                f"{path.name}: filter {chosen.name!r}",
            )
        )
    names = [s.name for s in sets]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UniverseError(f"two rule sets are named {duplicates[0]!r}; rename a rule file")
    return sets


def _replayable(choice: FilterChoice, where: str) -> None:
    """Refuse screen-wide rules (q-values, persistence): the evaluation replays each day's
    filter, not yet the rules that need the whole screen, and must not ignore one silently."""
    on = sorted(k for k, v in choice.screen_wide.items() if v != SCREEN_THRESHOLDS[k])
    if on:
        raise UniverseError(
            f"{where} sets {', '.join(on)}: the evaluation does not replay the screen-wide "
            "rules (q-values, persistence) yet; evaluate without them"
        )


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
