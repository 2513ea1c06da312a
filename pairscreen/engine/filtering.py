"""Running the screen filter: which filter, with which thresholds, and the reason per pair.

The filter itself is a plugin (``pairscreen_register_filters``); this module only knows the
:class:`~pairscreen.contracts.Filter` contract. It picks the filter the universe names, checks the
universe's ``[screen]`` thresholds against the filter's own, and runs the filter's rules in
order over whole arrays. A rule whose input fields are missing (their metric failed on this
batch) rejects the pairs it sees with a reason naming the failed metric, so a failing metric
never turns into a ``KeyError`` inside a rule.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from pairscreen.contracts import Filter, FilterContext, FilterRule
from pairscreen.contracts.bars import DAILY
from pairscreen.contracts.filters import ShortHistory
from pairscreen.engine.evaluate import MetricValues
from pairscreen.engine.guarantees import PASSES, batch_reason, batch_verdicts
from pairscreen.engine.screen_rules import SCREEN_THRESHOLDS
from pairscreen.plugin_system.registry import PluginError, Plugins
from pairscreen.universe import Universe, UniverseError

log = logging.getLogger(__name__)

# One release of notice: the core's minimum is the setting, the same for every caller.
DEPRECATED_MINIMUM = (
    "[screen] min_history_days is deprecated and goes in the next release: set "
    "PAIRSCREEN_MIN_HISTORY_DAYS (the core's minimum for every pair) instead"
)


@dataclass(frozen=True)
class FilterChoice:
    """The filter a screen runs, by name, with every threshold's value.

    Plain data, so chunk jobs carry it to worker processes (or Dask workers), which look the
    filter up in their own plugins the way they look up the strategy and the scorer.
    """

    name: str
    thresholds: Mapping[str, float]
    # The screen-wide rules' limits (``engine.screen_rules``), applied after every chunk.
    screen_wide: Mapping[str, float] = field(default_factory=lambda: dict(SCREEN_THRESHOLDS))

    def as_json(self) -> dict[str, object]:
        """The ``filter`` object of ``/screen/latest`` (the screen-wide rules are beside it)."""
        return {"name": self.name, "thresholds": dict(self.thresholds)}


def choose_filter(plugins: Plugins, universe: Universe) -> FilterChoice:
    """The universe's ``[screen]`` filter with its thresholds: the defaults, overridden.

    Raises ``PluginError`` for an unknown filter name or a rule without a usable code, and
    ``UniverseError`` for a key that is not one of the filter's thresholds or a value of the
    wrong kind.
    """
    screen_filter = plugins.filters.get(universe.screen_filter)
    for rule in screen_filter.rules:
        if not rule.code or ":" in rule.code:
            raise PluginError(
                f"screen filter {screen_filter.name!r} has a rule with the code {rule.code!r}; "
                "a code is a non-empty word without ':' (it starts the filter_reason)"
            )
    defaults = dict(screen_filter.thresholds)
    # an intraday universe's minimum is its core's too (``pairscreen.screening.spans``): a
    # span of its own bars, which one setting for every universe cannot give
    if ShortHistory.threshold in universe.screen_thresholds and universe.bar == DAILY.name:
        log.warning(DEPRECATED_MINIMUM)
    unknown = sorted(set(universe.screen_thresholds) - set(defaults) - set(SCREEN_THRESHOLDS))
    if unknown:
        known = ", ".join(defaults) or "none"
        known += f"; screen-wide: {', '.join(SCREEN_THRESHOLDS)}"
        raise UniverseError(
            f"[screen] {', '.join(unknown)}: not a threshold of filter "
            f"{screen_filter.name!r} (its thresholds: {known})"
        )
    thresholds: dict[str, float] = {}
    for key, default in defaults.items():
        value = universe.screen_thresholds.get(key, default)
        if isinstance(default, int) and not isinstance(default, bool):
            if not isinstance(value, int):
                raise UniverseError(f"[screen] {key} must be a whole number, got {value!r}")
            thresholds[key] = value
        else:
            thresholds[key] = float(value)
    return FilterChoice(screen_filter.name, thresholds, _screen_wide(universe))


def _screen_wide(universe: Universe) -> dict[str, float]:
    """The screen-wide rules' limits: their defaults (off), overridden by ``[screen]``."""
    limits: dict[str, float] = {}
    for key, default in SCREEN_THRESHOLDS.items():
        value = universe.screen_thresholds.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UniverseError(f"[screen] {key} must be a number, got {value!r}")
        if isinstance(default, int):
            if not isinstance(value, int) or value < 0:
                raise UniverseError(f"[screen] {key} must be a whole number >= 0, got {value!r}")
            limits[key] = value
        elif not 0 < value <= 1:
            raise UniverseError(f"[screen] {key} must be a q-value in (0, 1], got {value!r}")
        else:
            limits[key] = float(value)
    return limits


def rule_inputs(rule: FilterRule, thresholds: Mapping[str, float]) -> tuple[str, ...]:
    """The fields ``rule`` reads with these thresholds: its optional ``inputs_for(thresholds)``
    (a rule that is off at some thresholds reads nothing then), else its ``inputs``."""
    inputs_for = getattr(rule, "inputs_for", None)
    if inputs_for is None:
        return tuple(rule.inputs)
    return tuple(inputs_for(thresholds))


def filter_fields(screen_filter: Filter, thresholds: Mapping[str, float]) -> set[str]:
    """Every metric field the filter's rules read with these thresholds."""
    return {name for rule in screen_filter.rules for name in rule_inputs(rule, thresholds)}


def filter_codes(screen_filter: Filter) -> tuple[str, ...]:
    """The filter's reason codes in rule order, each once."""
    return tuple(dict.fromkeys(rule.code for rule in screen_filter.rules))


def filter_code(reason: str) -> str:
    return reason.split(":", 1)[0] if reason else ""


def filter_reasons(
    screen_filter: Filter, metrics: MetricValues, context: FilterContext
) -> list[str]:
    """Per pair, ``""`` when the core's verdict and every rule pass, else ``"<code>: <text>"``
    of the first failure.

    The core's verdict on the batch (:func:`~pairscreen.engine.guarantees.batch_verdicts`: no
    leg in an active depeg event) comes first, so no filter can let such a pair through and
    none needs a rule of its own for it. Each rule is checked once over the whole batch; only
    the failing pairs cost Python work (their reason text).
    """
    n = len(context.history_days)
    reasons = [""] * n
    core = batch_verdicts(context)
    undecided = core == PASSES
    for row in np.flatnonzero(~undecided).tolist():
        reasons[row] = batch_reason(int(core[row]), context, row)
    for rule in screen_filter.rules:
        if not undecided.any():
            break
        absent = [
            name for name in rule_inputs(rule, context.thresholds) if name not in metrics.values
        ]
        if absent:
            failed = np.flatnonzero(undecided)
            text = unavailable(absent, metrics.missing)
            for i in failed:
                reasons[i] = f"{rule.code}: {text}"
        else:
            passed = np.asarray(rule.check(metrics.values, context), dtype=bool)
            failed = np.flatnonzero(undecided & ~passed)
            for row in failed.tolist():  # Python ints: no numpy scalar per failing pair
                reasons[row] = f"{rule.code}: {rule.explain(metrics.values, context, row)}"
        undecided[failed] = False
    return reasons


def unavailable(fields: list[str], causes: Mapping[str, str]) -> str:
    """``"hurst unavailable (metric variance_ratio failed)"`` for the missing ``fields``."""
    why = dict.fromkeys(causes.get(name, "no metric provides it") for name in fields)
    return f"{', '.join(fields)} unavailable ({'; '.join(why)})"
