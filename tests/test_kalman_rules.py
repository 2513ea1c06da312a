"""The ``default`` filter's Kalman rules: ``max_kalman_hedge_drift`` and ``kalman_z_beyond``.

Off by default (they read no field and pass every pair, even one whose Kalman fields are
null); set in the universe's ``[screen]`` table they keep exactly the pairs within the limits,
explain the others with their values and units, and are documented where the other
thresholds are (docs/operations.md's table, docs/methodology.md's rules, openapi.yaml's
reason codes).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from pairscreen import FilterContext
from pairscreen.engine.evaluate import MetricValues
from pairscreen.engine.filtering import filter_reasons
from pairscreen.runtime import Runtime
from tests.test_screen_filters import DEFAULT_THRESHOLDS, compute, runtime_for, universe_with

ROOT = Path(__file__).resolve().parents[1]
PASSING = {"hurst": 0.3, "adf_pvalue": 0.1, "range_width": 0.5, "touches_low": 3}


def reasons(runtime: Runtime, values: dict[str, np.ndarray], thresholds: dict) -> list[str]:  # type: ignore[type-arg]
    n = len(next(iter(values.values())))
    base = {name: np.full(n, value) for name, value in PASSING.items()}
    base["touches_high"] = np.full(n, 3)
    context = FilterContext(np.full(n, 900), np.zeros(n, dtype=bool), thresholds)
    default = runtime.plugins.filters.get("default")
    return filter_reasons(default, MetricValues(values={**base, **values}, fields={}), context)


def test_off_by_default_they_read_nothing_and_pass_everyone(runtime: Runtime) -> None:
    default = runtime.plugins.filters.get("default")
    rules = {rule.code: rule for rule in default.rules}
    assert default.thresholds["max_kalman_hedge_drift"] == 0.0
    assert default.thresholds["kalman_z_beyond"] == 0.0
    assert rules["kalman_drift"].inputs_for(default.thresholds) == ()
    assert rules["kalman_z"].inputs_for(default.thresholds) == ()
    nulls = {"kalman_hedge_drift": np.full(3, np.nan), "kalman_z": np.full(3, np.nan)}
    assert reasons(runtime, nulls, DEFAULT_THRESHOLDS) == [""] * 3
    assert reasons(runtime, {"hurst": np.full(2, 0.3)}, DEFAULT_THRESHOLDS) == [""] * 2


def test_set_they_apply_their_limits_and_say_why(runtime: Runtime) -> None:
    drift = {"kalman_hedge_drift": np.array([0.05, -0.4, 0.2, np.nan])}
    limits = {**DEFAULT_THRESHOLDS, "max_kalman_hedge_drift": 0.2}
    assert reasons(runtime, drift, limits) == [
        "",
        "kalman_drift: Kalman hedge ratio drifted -40.0% of β over the window, beyond 20.0% "
        "(the hedge does not hold still)",
        "",
        "kalman_drift: Kalman hedge-ratio drift is undefined (null: see kalman_reason), at "
        "most 20.0% of β needed",
    ]
    z = {"kalman_z": np.array([1.5, -2.0, 0.3, np.nan, -1.0])}
    limits = {**DEFAULT_THRESHOLDS, "kalman_z_beyond": 1.0}
    assert reasons(runtime, z, limits) == [
        "",
        "",
        "kalman_z: Kalman z +0.30 is within 1 standard deviations of 0 (the spread is not "
        "stretched now)",
        "kalman_z: Kalman z is undefined (null: see kalman_reason), at least 1 standard "
        "deviations from 0 needed",
        "",
    ]
    both = {**limits, "max_kalman_hedge_drift": 0.2}
    rules = {r.code: r for r in runtime.plugins.filters.get("default").rules}
    assert rules["kalman_drift"].inputs_for(both) == ("kalman_hedge_drift",)
    assert rules["kalman_z"].inputs_for(both) == ("kalman_z",)


def test_in_the_universe_they_keep_the_survivors_within_the_limits(
    runtime: Runtime, tmp_path: Path
) -> None:
    """Each limit at the median of the default screen's survivors: the survivors are
    exactly the default survivors within it, and the rest are counted under its code."""
    default = compute(runtime)
    survivors = default["survivors"]
    drift = [abs(s["metrics"]["kalman_hedge_drift"]) for s in survivors]
    z = [abs(s["metrics"]["kalman_z"]) for s in survivors]
    for key, code, values, keeps in (
        ("max_kalman_hedge_drift", "kalman_drift", drift, lambda v, t: v <= t),
        ("kalman_z_beyond", "kalman_z", z, lambda v, t: v >= t),
    ):
        limit = float(np.median(values))
        rt = runtime_for(runtime, universe_with(tmp_path, f"{key} = {limit!r}\n"))
        body = compute(rt)
        expected = [s["pair"] for s, v in zip(survivors, values, strict=True) if keeps(v, limit)]
        assert 0 < len(expected) < default["n_survivors"]
        assert [s["pair"] for s in body["survivors"]] == expected
        assert body["rejected"][code] == default["n_survivors"] - len(expected)
        assert body["filter"]["thresholds"][key] == limit
        assert default["rejected"][code] == 0


def test_they_are_documented_with_the_other_thresholds() -> None:
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    methodology = (ROOT / "docs" / "methodology.md").read_text(encoding="utf-8")
    openapi = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    for key in ("max_kalman_hedge_drift", "kalman_z_beyond"):
        assert re.search(rf"^\| `{key}` \| 0 \(no limit\) \|", operations, re.M), key
        assert f"`{key}`" in methodology and key in openapi
    for code in ("kalman_drift", "kalman_z"):
        assert re.search(rf"^\| \d+ \| `{code}` \|", methodology, re.M), code
        assert f"`{code}`" in openapi
