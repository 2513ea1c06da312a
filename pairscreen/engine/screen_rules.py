"""The screen-wide rules: verdicts that need the whole screen, applied after every chunk.

A q-value depends on every pair the screen tested and persistence on the screens before it,
so neither can be decided inside a chunk. These rules run once the chunks are in, on the
survivors of the filter, in this order; each is off at its default. The universe's
``[screen]`` table sets them beside the filter's own thresholds, and the published
``filter.thresholds`` lists them with the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

# The p-value fields the screen corrects for multiple testing, and their q-value's name.
QVALUE_FIELDS: Mapping[str, str] = MappingProxyType(
    {"coint_pvalue": "coint_qvalue", "adf_pvalue": "adf_qvalue"}
)

# What the screen adds to each survivor once every chunk is in (absent in older screens).
SCREEN_FIELDS = ("coint_qvalue", "adf_qvalue", "survived_last")


@dataclass(frozen=True)
class ScreenRule:
    """``field`` below ``limit`` (or, for ``at_least``, at least it); off at ``off``."""

    code: str
    limit: str
    field: str
    off: float
    at_least: bool = False

    def passes(self, value: float | None, threshold: float) -> bool:
        if value is None:
            return False
        return value >= threshold if self.at_least else value < threshold


SCREEN_RULES: tuple[ScreenRule, ...] = (
    ScreenRule("coint_q", "coint_q_below", "coint_qvalue", 1.0),
    ScreenRule("adf_q", "adf_q_below", "adf_qvalue", 1.0),
    ScreenRule("persistence", "min_persistence", "survived_last", 0, at_least=True),
)
PERSISTENCE = "persistence"  # the rule whose verdicts the next screens do not count
# The universe's [screen] keys of these rules and their defaults (off); min_persistence is a
# whole number of screens.
SCREEN_THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {rule.limit: rule.off for rule in SCREEN_RULES}
)


def screen_rule_reason(
    thresholds: Mapping[str, float], values: Mapping[str, float | None], *, skip: str = ""
) -> str:
    """The code of the first screen-wide rule a survivor fails, ``""`` when it passes all
    (all but the rule coded ``skip``, when given).

    ``values`` holds the survivor's ``coint_qvalue``, ``adf_qvalue`` and ``survived_last``; a
    rule that is on rejects a null value, as the filter's optional rules do.
    """
    for rule in SCREEN_RULES:
        if rule.code == skip:
            continue
        threshold = thresholds.get(rule.limit, rule.off)
        if threshold != rule.off and not rule.passes(values.get(rule.field), threshold):
            return rule.code
    return ""
