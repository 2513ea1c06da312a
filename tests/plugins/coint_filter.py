"""Screen filters a third party might write, for the tests (loaded as ``extra_plugins``).

``coint`` keeps every pair whose ADF p-value is below its own threshold and looks at nothing
else: a cointegration-style screen in one rule. ``half_life`` reads a metric field no plugin
provides, which the service must refuse at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from pairscreen import Filter, FilterContext, hookimpl


class AdfBelow:
    """Rejects a pair whose ADF p-value is not below ``adf_pvalue_below``."""

    code = "not_cointegrated"
    inputs = ("adf_pvalue",)

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        return (
            np.asarray(metrics["adf_pvalue"], dtype=float) < context.thresholds["adf_pvalue_below"]
        )

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        value = float(metrics["adf_pvalue"][i])
        return f"ADF p-value {value:.4f} is not below {context.thresholds['adf_pvalue_below']}"


class CointFilter:
    name = "coint"
    thresholds = MappingProxyType({"adf_pvalue_below": 0.05})
    rules = (AdfBelow(),)


class ShortHalfLife:
    code = "slow"
    inputs = ("half_life",)

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        return np.asarray(metrics["half_life"], dtype=float) < context.thresholds["max_days"]

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        return f"half-life {float(metrics['half_life'][i]):.1f} days is too long"


class HalfLifeFilter:
    name = "half_life"
    thresholds = MappingProxyType({"max_days": 30.0})
    rules = (ShortHalfLife(),)


@hookimpl
def pairscreen_register_filters() -> list[Filter]:
    return [CointFilter(), HalfLifeFilter()]
