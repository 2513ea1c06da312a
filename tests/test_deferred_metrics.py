"""The screen computes a metric on every pair only when the filter or the core reads it; the
others run on the survivors alone, with the same numbers a full computation gives them."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from pairscreen import MetricField, PairPanel, hookimpl
from pairscreen.engine.evaluate import compute_metrics
from pairscreen.engine.filtering import FilterChoice
from pairscreen.engine.screen_chunks import ChunkJob, evaluate_chunk, split_metrics
from tests.series_factory import all_series, by_length, panel
from tests.test_screen_filters import DEFAULT_THRESHOLDS, runtime_for

DESCRIBING = {
    "variance_ratio_test",
    "trend",
    "hurst_rs",
    "volume",
    "half_life",
    "johansen",
    "return_correlation",
    "ou",
    "ou_bands",
    "breakeven",
    "kalman",
}


class RowCounter:
    """A descriptive metric that records how many pairs each panel it is given holds."""

    name = "rows_seen"
    fields = (MetricField("rows_seen", type="integer", description="pairs in the panel"),)

    def __init__(self) -> None:
        self.seen: list[int] = []

    def compute(self, p: PairPanel) -> dict[str, np.ndarray]:
        self.seen.append(p.n_pairs)
        return {"rows_seen": np.full(p.n_pairs, p.n_pairs)}


class CounterPlugin:
    def __init__(self) -> None:
        self.metric = RowCounter()

    @hookimpl
    def pairscreen_register_metrics(self) -> list[RowCounter]:
        return [self.metric]


def job(thresholds: dict) -> ChunkJob:  # type: ignore[type-arg]
    group = by_length(all_series())[900]
    return ChunkJob(
        panel=panel(group),
        history_days=np.full(len(group), 900),
        depegged=np.zeros(len(group), dtype=bool),
        screen_filter=FilterChoice("default", MappingProxyType(thresholds)),
        strategy="accumulation",
        scorer="score",
        bt_days=360,
    )


def test_only_the_metrics_the_filter_reads_decide(runtime):
    plugins = runtime.plugins
    default = plugins.filters.get("default")
    deciding, describing = split_metrics(plugins, default, DEFAULT_THRESHOLDS)
    assert {m.name for m in describing} == DESCRIBING
    # cointegration decides too: its p-value gets a q-value over every tested pair
    assert {m.name for m in deciding} == {
        "bands",
        "variance_ratio",
        "adf",
        "range_stats",
        "cointegration",
    }
    limits = {**DEFAULT_THRESHOLDS, "max_half_life_days": 30.0, "coint_below": 0.05}
    deciding, describing = split_metrics(plugins, default, limits)
    assert {"half_life", "cointegration"} <= {m.name for m in deciding}
    assert "return_correlation" in {m.name for m in describing}
    deciding, _ = split_metrics(plugins, default, {**DEFAULT_THRESHOLDS, "min_breakeven_fee": 0.0})
    assert "breakeven" in {m.name for m in deciding}


def test_survivors_get_the_numbers_of_a_full_computation(runtime):
    counter = CounterPlugin()
    rt = runtime_for(runtime, plugins=(counter,))
    chunk = job(DEFAULT_THRESHOLDS)
    result = evaluate_chunk(rt.plugins, chunk)
    survivors = result.survivors
    assert 0 < survivors.size < chunk.panel.n_pairs
    assert counter.metric.seen == [survivors.size]  # the descriptive metric saw survivors only
    full = compute_metrics(rt.plugins, chunk.panel)
    assert list(result.metrics.values) == list(full.values)  # registration order kept
    for name, values in full.values.items():
        if name == "rows_seen":
            continue
        got, want = result.metrics.values[name][survivors], values[survivors]
        assert np.array_equal(got, want, equal_nan=values.dtype.kind == "f"), name
    rows = [result.metrics.row(int(i)) for i in survivors]
    assert all(row["half_life_days"] is None or row["half_life_days"] > 0 for row in rows)


def test_a_limit_set_makes_its_metric_decide_on_every_pair(runtime):
    counter = CounterPlugin()
    rt = runtime_for(runtime, plugins=(counter,))
    limits = {**DEFAULT_THRESHOLDS, "max_half_life_days": 20.0}
    result = evaluate_chunk(rt.plugins, job(limits))
    reasons = [r for r in result.reasons if r.startswith("half_life:")]
    assert reasons, "some default survivors revert more slowly than 20 days"
    full = compute_metrics(rt.plugins, job(limits).panel).values["half_life_days"]
    kept = full[result.survivors]
    assert (kept <= 20.0).all()
    assert np.array_equal(result.metrics.values["half_life_days"], full, equal_nan=True)
