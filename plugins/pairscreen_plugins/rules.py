"""The built-in screen filter ``default``: what makes a pair worth trading back and forth.

Checked in this order, the first failure being the pair's ``filter_reason``: enough common
history (the core's own rule, ``pairscreen.ShortHistory``, at this filter's deprecated
``min_history_days``), mean reversion (variance-ratio ``hurst`` below 0.5), stationarity (ADF
p-value below 0.7), a range wide enough that swap fees do not dominate (0.40 log units), and
genuine oscillation (at least 2 alternating touches of each band). A pair with a stale leg,
too short a history for the engine or a leg in an active depeg event never reaches these
rules: the core rejects it first, whatever the filter (``pairscreen.engine.guarantees``).
Every limit is a threshold the universe file's ``[screen]`` table may change. Each text
states its units (days, log units, counts; Hurst and the ADF p-value have none).

Six more rules read the pair-trading metrics (half-life, Engle-Granger p-value, return
correlation), the backtest's break-even fee (``min_breakeven_fee``, a fraction per swap;
off at its default of -1) and the Kalman filter's hedge ratio: how far it drifted over the
window (``max_kalman_hedge_drift``, a fraction of today's β; a relation that moves is a
hedge that will not hold) and how far today's spread is from it (``kalman_z_beyond``, in
standard deviations; a pair at an entry point now). They are off at their defaults (0), so
whether they earn a default is left to the evaluation. The default screen is the one
above: a rule at its default passes every pair and reads no field (``inputs_for`` says so), so
a failed metric cannot reject pairs through a rule nobody asked for, and the screen computes
those metrics for its survivors only. Set in ``[screen]``, a rule rejects a null value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from pairscreen.contracts import Filter, FilterContext, FilterRule, ShortHistory, hookimpl

Metrics = Mapping[str, np.ndarray]

THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {
        "min_history_days": 200,
        "hurst_below": 0.5,
        "adf_below": 0.7,
        "min_range_width": 0.40,
        "min_touches": 2,
        "max_half_life_days": 0.0,
        "coint_below": 1.0,
        "min_return_correlation": -1.0,
        "min_breakeven_fee": -1.0,
        "max_kalman_hedge_drift": 0.0,
        "kalman_z_beyond": 0.0,
    }
)
# The values at which the optional rules are off (their defaults): every pair passes.
OFF: Mapping[str, float] = MappingProxyType(
    {
        "max_half_life_days": 0.0,
        "coint_below": 1.0,
        "min_return_correlation": -1.0,
        "min_breakeven_fee": -1.0,
        "max_kalman_hedge_drift": 0.0,
        "kalman_z_beyond": 0.0,
    }
)


@dataclass(frozen=True)
class Rule:
    """A rule from two functions: the vectorised pass test and the text of one failure."""

    code: str
    inputs: tuple[str, ...]
    passes: Callable[[Metrics, FilterContext], np.ndarray]
    says: Callable[[Metrics, FilterContext, int], str]
    limit: str = ""  # for an optional rule: the threshold whose value in OFF turns it off

    def inputs_for(self, thresholds: Mapping[str, float]) -> tuple[str, ...]:
        """The fields the rule reads with these thresholds: none while it is off."""
        if self.limit and thresholds[self.limit] == OFF[self.limit]:
            return ()
        return self.inputs

    def check(self, metrics: Metrics, context: FilterContext) -> np.ndarray:
        return self.passes(metrics, context)

    def explain(self, metrics: Metrics, context: FilterContext, i: int) -> str:
        return self.says(metrics, context, i)


def _number(metrics: Metrics, name: str) -> np.ndarray:
    return np.asarray(metrics[name], dtype=float)


def _hurst_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    hurst = _number(m, "hurst")
    finite: np.ndarray = np.isfinite(hurst)
    return finite & (hurst < c.thresholds["hurst_below"])


def _hurst_says(m: Metrics, c: FilterContext, i: int) -> str:
    hurst, below = float(m["hurst"][i]), c.thresholds["hurst_below"]
    if not math.isfinite(hurst):  # a Python float: math's test, not a numpy call per pair
        return f"Hurst is undefined (null), so not below {below} (not mean-reverting)"
    return f"Hurst {hurst:.3f} is not below {below} (not mean-reverting)"


def _adf_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _number(m, "adf_pvalue") < c.thresholds["adf_below"]


def _adf_says(m: Metrics, c: FilterContext, i: int) -> str:
    adf, below = float(m["adf_pvalue"][i]), c.thresholds["adf_below"]
    return f"ADF p-value {adf:.3f} is not below {below} (non-stationary)"


def _width_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _number(m, "range_width") >= c.thresholds["min_range_width"]


def _width_says(m: Metrics, c: FilterContext, i: int) -> str:
    width, minimum = float(m["range_width"][i]), c.thresholds["min_range_width"]
    if not math.isfinite(width):
        return (
            f"range width is undefined (null: less than a full band window of history), "
            f"at least {minimum:.2f} (log of max/min) needed"
        )
    return (
        f"range width {width:.3f} (log of max/min) is below {minimum:.2f} "
        "(swap fees would dominate)"
    )


def _touches_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    minimum = c.thresholds["min_touches"]
    return (_number(m, "touches_low") >= minimum) & (_number(m, "touches_high") >= minimum)


def _touches_says(m: Metrics, c: FilterContext, i: int) -> str:
    low, high = int(m["touches_low"][i]), int(m["touches_high"][i])
    minimum = c.thresholds["min_touches"]
    return (
        f"{low} low and {high} high alternating band touches, at least {minimum} of each "
        "needed (not genuinely oscillating)"
    )


def _optional(
    m: Metrics,
    c: FilterContext,
    field: str,
    limit: str,
    passes: Callable[[np.ndarray, float], np.ndarray],
) -> np.ndarray:
    """An optional rule's verdict: everyone when off, else ``passes`` on the finite values."""
    value = c.thresholds[limit]
    if value == OFF[limit]:
        return np.ones(len(c.history_days), dtype=bool)
    numbers = _number(m, field)
    finite: np.ndarray = np.isfinite(numbers)
    verdict: np.ndarray = finite & passes(np.where(finite, numbers, 0.0), value)
    return verdict


def _value_or_null(m: Metrics, field: str, i: int) -> float | None:
    """The pair's value of ``field``; None when it is null."""
    value = float(m[field][i])
    return value if math.isfinite(value) else None


def _half_life_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _optional(m, c, "half_life_days", "max_half_life_days", lambda v, t: v <= t)


def _half_life_says(m: Metrics, c: FilterContext, i: int) -> str:
    limit = c.thresholds["max_half_life_days"]
    value = _value_or_null(m, "half_life_days", i)
    if value is None:
        return (
            "half-life is undefined (null: the ratio does not revert), "
            f"at most {limit:g} days needed"
        )
    return f"half-life {value:.1f} days is above {limit:g} days (reverts too slowly)"


def _coint_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _optional(m, c, "coint_pvalue", "coint_below", lambda v, t: v < t)


def _coint_says(m: Metrics, c: FilterContext, i: int) -> str:
    below = c.thresholds["coint_below"]
    value = _value_or_null(m, "coint_pvalue", i)
    if value is None:
        return (
            f"cointegration p-value is undefined (null: a leg does not move), below {below} needed"
        )
    return f"cointegration p-value {value:.3f} is not below {below} (not cointegrated)"


def _correlation_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _optional(m, c, "return_correlation", "min_return_correlation", lambda v, t: v >= t)


def _correlation_says(m: Metrics, c: FilterContext, i: int) -> str:
    minimum = c.thresholds["min_return_correlation"]
    value = _value_or_null(m, "return_correlation", i)
    if value is None:
        return (
            "return correlation is undefined (null: a leg does not move), "
            f"at least {minimum} needed"
        )
    return f"return correlation {value:.3f} is below {minimum} (the legs move apart)"


def _breakeven_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _optional(m, c, "breakeven_fee", "min_breakeven_fee", lambda v, t: v >= t)


def _breakeven_says(m: Metrics, c: FilterContext, i: int) -> str:
    minimum = c.thresholds["min_breakeven_fee"]
    value = _value_or_null(m, "breakeven_fee", i)
    if value is None:
        return f"break-even fee is undefined (null: no swaps), at least {minimum:.4%} needed"
    return (
        f"break-even fee {value:.4%} per swap is below {minimum:.4%} "
        "(the edge does not survive that fee)"
    )


def _drift_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _optional(
        m, c, "kalman_hedge_drift", "max_kalman_hedge_drift", lambda v, t: np.abs(v) <= t
    )


def _drift_says(m: Metrics, c: FilterContext, i: int) -> str:
    limit = c.thresholds["max_kalman_hedge_drift"]
    value = _value_or_null(m, "kalman_hedge_drift", i)
    if value is None:
        return (
            "Kalman hedge-ratio drift is undefined (null: see kalman_reason), "
            f"at most {limit:.1%} of β needed"
        )
    return (
        f"Kalman hedge ratio drifted {value:+.1%} of β over the window, beyond {limit:.1%} "
        "(the hedge does not hold still)"
    )


def _kalman_z_passes(m: Metrics, c: FilterContext) -> np.ndarray:
    return _optional(m, c, "kalman_z", "kalman_z_beyond", lambda v, t: np.abs(v) >= t)


def _kalman_z_says(m: Metrics, c: FilterContext, i: int) -> str:
    beyond = c.thresholds["kalman_z_beyond"]
    value = _value_or_null(m, "kalman_z", i)
    if value is None:
        return (
            "Kalman z is undefined (null: see kalman_reason), "
            f"at least {beyond:g} standard deviations from 0 needed"
        )
    return (
        f"Kalman z {value:+.2f} is within {beyond:g} standard deviations of 0 "
        "(the spread is not stretched now)"
    )


RULES: tuple[FilterRule, ...] = (
    ShortHistory(),  # the core decides short history; this filter only sets its threshold
    Rule("hurst", ("hurst",), _hurst_passes, _hurst_says),
    Rule("adf", ("adf_pvalue",), _adf_passes, _adf_says),
    Rule("range_width", ("range_width",), _width_passes, _width_says),
    Rule("touches", ("touches_low", "touches_high"), _touches_passes, _touches_says),
    Rule(
        "half_life",
        ("half_life_days",),
        _half_life_passes,
        _half_life_says,
        limit="max_half_life_days",
    ),
    Rule("cointegration", ("coint_pvalue",), _coint_passes, _coint_says, limit="coint_below"),
    Rule(
        "correlation",
        ("return_correlation",),
        _correlation_passes,
        _correlation_says,
        limit="min_return_correlation",
    ),
    Rule(
        "breakeven",
        ("breakeven_fee",),
        _breakeven_passes,
        _breakeven_says,
        limit="min_breakeven_fee",
    ),
    Rule(
        "kalman_drift",
        ("kalman_hedge_drift",),
        _drift_passes,
        _drift_says,
        limit="max_kalman_hedge_drift",
    ),
    Rule("kalman_z", ("kalman_z",), _kalman_z_passes, _kalman_z_says, limit="kalman_z_beyond"),
)


class DefaultFilter:
    """Filter ``default``: history, hurst, ADF, range width, touches, in that order,
    then half-life, cointegration, correlation, break-even fee, Kalman hedge drift and
    Kalman z when the universe sets their limits."""

    name = "default"
    thresholds = THRESHOLDS
    rules = RULES


@hookimpl
def pairscreen_register_filters() -> list[Filter]:
    """The built-in filter."""
    return [DefaultFilter()]
