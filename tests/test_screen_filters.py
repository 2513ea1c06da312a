"""The screen filter is a plugin: the built-in ``default``, a replacement, thresholds from the
universe file, a failing metric, and the metric fields the core itself needs."""

from __future__ import annotations

import pickle
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
from peewee import fn

from pairscreen import (
    DepeggedLeg,
    Filter,
    FilterContext,
    FilterRule,
    MetricField,
    PairPanel,
    clock,
    hookimpl,
)
from pairscreen.bootstrap import build_runtime
from pairscreen.config import Settings
from pairscreen.db.connection import database
from pairscreen.db.models import Screen
from pairscreen.engine.evaluate import MetricValues, compute_metrics
from pairscreen.engine.filtering import FilterChoice, choose_filter, filter_reasons
from pairscreen.plugin_system import loader as plugin_loading
from pairscreen.plugin_system.registry import PluginError, PluginFailed, Plugins
from pairscreen.runtime import Runtime
from pairscreen.screening import screen as screening
from pairscreen.universe import UniverseError
from tests.conftest import make_client
from tests.plugins import coint_filter

from pairscreen_plugins.metrics.mean_reversion import VarianceRatioMetric  # isort: skip

DEMO_UNIVERSE = Path(screening.__file__).resolve().parents[1] / "demo_universe.toml"
DEFAULT_THRESHOLDS = {
    "min_history_days": 200,
    "hurst_below": 0.5,
    "adf_below": 0.7,
    "min_range_width": 0.4,
    "min_touches": 2,
    "max_half_life_days": 0.0,
    "coint_below": 1.0,
    "min_return_correlation": -1.0,
    "min_breakeven_fee": -1.0,
    "max_kalman_hedge_drift": 0.0,
    "kalman_z_beyond": 0.0,
}


def universe_with(tmp_path: Path, screen_table: str) -> Path:
    """The demo universe with a ``[screen]`` table appended."""
    path = tmp_path / "universe.toml"
    path.write_text(DEMO_UNIVERSE.read_text() + "\n[screen]\n" + screen_table)
    return path


def runtime_for(runtime: Runtime, universe: Path | None = None, plugins: tuple = ()) -> Runtime:
    settings = (
        runtime.settings if universe is None else replace(runtime.settings, universe_path=universe)
    )
    return build_runtime(settings, migrate=False, extra_plugins=plugins)


def compute(rt: Runtime) -> dict:
    with database.connection_context():
        return screening.compute_screen(rt, clock.now())


def test_hook_pairscreen_register_filters(runtime):
    """The built-in filter comes through the hook, like any third party's."""
    registry = runtime.plugins.filters
    default = registry.get("default")
    assert isinstance(default, Filter)
    assert registry.owner("default") == "default_filter"
    assert all(isinstance(rule, FilterRule) for rule in default.rules)
    assert [rule.code for rule in default.rules] == [
        "insufficient_history",
        "hurst",
        "adf",
        "range_width",
        "touches",
        "half_life",
        "cointegration",
        "correlation",
        "breakeven",
        "kalman_drift",
        "kalman_z",
    ]
    assert dict(default.thresholds) == DEFAULT_THRESHOLDS
    rt = runtime_for(runtime, plugins=(coint_filter,))
    assert {"default", "coint", "half_life"} <= set(rt.plugins.filters.items)


def test_default_filter_reasons_are_the_published_texts(runtime):
    """One pair failing each rule in turn, and one passing: the API's exact reason texts,
    each with its units (days, log units, counts; Hurst and the p-value have none)."""
    metrics = MetricValues(
        values={
            "hurst": np.array([0.3, 0.55, 0.3, 0.3, 0.3, 0.3, 0.3, np.nan, 0.3]),
            "adf_pvalue": np.array([0.1, 0.1, 0.75, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]),
            "range_width": np.array([0.5, 0.5, 0.5, 0.03, 0.5, 0.5, 0.5, 0.5, np.nan]),
            "touches_low": np.array([3, 3, 3, 3, 1, 3, 3, 3, 3]),
            "touches_high": np.array([3, 3, 3, 3, 4, 3, 3, 3, 3]),
        },
        fields={},
    )
    context = FilterContext(
        history_days=np.array([150, 900, 900, 900, 900, 900, 900, 900, 400]),
        depegged=np.array([False, False, False, False, False, True, False, False, False]),
        thresholds=DEFAULT_THRESHOLDS,
    )
    reasons = filter_reasons(runtime.plugins.filters.get("default"), metrics, context)
    assert reasons == [
        "insufficient_history: 150 days of common history, at least 200 days needed",
        "hurst: Hurst 0.550 is not below 0.5 (not mean-reverting)",
        "adf: ADF p-value 0.750 is not below 0.7 (non-stationary)",
        "range_width: range width 0.030 (log of max/min) is below 0.40 (swap fees would dominate)",
        "touches: 1 low and 4 high alternating band touches, at least 2 of each needed "
        "(not genuinely oscillating)",
        "depeg: a leg is in an active depeg event",  # the context does not say which
        "",
        "hurst: Hurst is undefined (null), so not below 0.5 (not mean-reverting)",
        "range_width: range width is undefined (null: less than a full band window of "
        "history), at least 0.40 (log of max/min) needed",
    ]


def test_pair_trading_rules_are_off_by_default_and_explain_themselves_when_set(runtime):
    """At their defaults the half-life, cointegration and correlation rules pass everything,
    even null or missing values; set, each rejects with its values and units."""
    passing = {"hurst": 0.3, "adf_pvalue": 0.1, "range_width": 0.5, "touches_low": 3}
    base = {name: np.full(5, value) for name, value in passing.items()}
    base["touches_high"] = np.full(5, 3)
    pair_trading = {
        "half_life_days": np.array([12.0, 75.3, np.nan, 12.0, 12.0]),
        "coint_pvalue": np.array([0.01, 0.01, 0.01, 0.4, 0.01]),
        "return_correlation": np.array([0.8, 0.8, 0.8, 0.8, np.nan]),
    }
    default_filter = runtime.plugins.filters.get("default")
    history = np.full(5, 900)

    def reasons(values: dict, thresholds: dict) -> list[str]:
        context = FilterContext(history, np.zeros(5, dtype=bool), thresholds)
        return filter_reasons(default_filter, MetricValues(values=values, fields={}), context)

    assert reasons({**base, **pair_trading}, DEFAULT_THRESHOLDS) == [""] * 5
    assert reasons(base, DEFAULT_THRESHOLDS) == [""] * 5  # off: they read no field at all
    limits = {
        **DEFAULT_THRESHOLDS,
        "max_half_life_days": 60,
        "coint_below": 0.1,
        "min_return_correlation": 0.5,
    }
    assert reasons({**base, **pair_trading}, limits) == [
        "",
        "half_life: half-life 75.3 days is above 60 days (reverts too slowly)",
        "half_life: half-life is undefined (null: the ratio does not revert), at most 60 days "
        "needed",
        "cointegration: cointegration p-value 0.400 is not below 0.1 (not cointegrated)",
        "correlation: return correlation is undefined (null: a leg does not move), at least 0.5 "
        "needed",
    ]
    assert reasons(base, limits)[0] == (
        "half_life: half_life_days unavailable (no metric provides it)"
    )


def test_a_half_life_limit_in_the_universe_removes_the_slow_survivors(runtime, tmp_path, keys):
    """``max_half_life_days`` set in the universe: the survivors are the default screen's
    survivors whose half-life is at most the limit, in the same order, and the others are
    counted under ``half_life``."""
    default = compute(runtime)
    half_lives = [s["metrics"]["half_life_days"] for s in default["survivors"]]
    assert all(h is None or h > 0 for h in half_lives)
    limit = float(np.median([h for h in half_lives if h is not None]))
    rt = runtime_for(runtime, universe_with(tmp_path, f"max_half_life_days = {limit}\n"))
    with database.connection_context():
        screening.run_screen(rt)
    c = make_client(rt)
    with c.client:
        body = c.get("/api/v1/screen/latest", keys.personal).json()
    expected = [
        s["pair"]
        for s in default["survivors"]
        if s["metrics"]["half_life_days"] is not None and s["metrics"]["half_life_days"] <= limit
    ]
    assert 0 < len(expected) < default["n_survivors"]
    assert [s["pair"] for s in body["survivors"]] == expected
    assert body["rejected"]["half_life"] == default["n_survivors"] - len(expected)
    assert default["rejected"]["half_life"] == 0
    assert body["filter"]["thresholds"]["max_half_life_days"] == limit


def test_the_breakeven_rule_is_off_by_default_and_explains_itself_when_set(runtime):
    passing = {"hurst": 0.3, "adf_pvalue": 0.1, "range_width": 0.5, "touches_low": 3}
    base = {name: np.full(3, value) for name, value in passing.items()}
    base["touches_high"] = np.full(3, 3)
    fees = {"breakeven_fee": np.array([0.01, 0.002, np.nan])}
    default_filter = runtime.plugins.filters.get("default")

    def reasons(values: dict, thresholds: dict) -> list[str]:
        context = FilterContext(np.full(3, 900), np.zeros(3, dtype=bool), thresholds)
        return filter_reasons(default_filter, MetricValues(values=values, fields={}), context)

    assert reasons({**base, **fees}, DEFAULT_THRESHOLDS) == [""] * 3
    assert reasons(base, DEFAULT_THRESHOLDS) == [""] * 3  # off: reads no field
    limits = {**DEFAULT_THRESHOLDS, "min_breakeven_fee": 0.0035}
    assert reasons({**base, **fees}, limits) == [
        "",
        "breakeven: break-even fee 0.2000% per swap is below 0.3500% (the edge does not "
        "survive that fee)",
        "breakeven: break-even fee is undefined (null: no swaps), at least 0.3500% needed",
    ]


def test_a_breakeven_limit_in_the_universe_keeps_the_survivors_whose_edge_survives_it(
    runtime, tmp_path, keys
):
    """``min_breakeven_fee`` set: the survivors are the default screen's survivors whose
    legs both break even at that fee or above, and their legs report it."""
    default = compute(runtime)
    fees = [s["metrics"]["breakeven_fee"] for s in default["survivors"]]
    for s in default["survivors"]:
        legs = [s["backtest"][leg]["breakeven_fee"] for leg in "AB"]
        known = [f for f in legs if f is not None]
        assert s["metrics"]["breakeven_fee"] == (min(known) if known else None)
    limit = float(np.median([f for f in fees if f is not None]))
    rt = runtime_for(runtime, universe_with(tmp_path, f"min_breakeven_fee = {limit}\n"))
    body = compute(rt)
    expected = [
        s["pair"]
        for s in default["survivors"]
        if s["metrics"]["breakeven_fee"] is not None and s["metrics"]["breakeven_fee"] >= limit
    ]
    assert 0 < len(expected) < default["n_survivors"]
    assert [s["pair"] for s in body["survivors"]] == expected
    assert body["rejected"]["breakeven"] == default["n_survivors"] - len(expected)


def test_a_depegged_leg_is_the_reason_whatever_else_the_pair_fails(runtime):
    """The depeg rule runs before the metric rules and names the leg and the event's start."""
    since = datetime(2026, 11, 20, 14, 0, 0, 123000, tzinfo=UTC)
    fails_everything = {
        "hurst": np.array([0.9, 0.9, 0.3]),
        "adf_pvalue": np.array([0.99, 0.99, 0.1]),
        "range_width": np.array([0.01, 0.01, 0.5]),
        "touches_low": np.array([0, 0, 3]),
        "touches_high": np.array([0, 0, 3]),
    }
    context = FilterContext(
        history_days=np.array([900, 900, 900]),
        depegged=np.array([True, True, False]),
        thresholds=DEFAULT_THRESHOLDS,
        depegged_legs=(
            (DepeggedLeg("PAXG", since),),
            (DepeggedLeg("PAXG", since), DepeggedLeg("XAUT")),
            (),
        ),
    )
    screen_filter = runtime.plugins.filters.get("default")
    reasons = filter_reasons(screen_filter, MetricValues(fails_everything, {}), context)
    assert reasons == [
        "depeg: PAXG is in an active depeg event since 2026-11-20T14:00:00+00:00",
        "depeg: PAXG is in an active depeg event since 2026-11-20T14:00:00+00:00; "
        "XAUT is in an active depeg event",
        "",
    ]
    assert pickle.loads(pickle.dumps(context)).depegged_legs == context.depegged_legs


def test_a_plugin_filter_replaces_the_default_screen(runtime, tmp_path):
    """A third party's filter, chosen in the universe file, decides the screen alone."""
    rt = runtime_for(runtime, universe_with(tmp_path, 'filter = "coint"\n'), (coint_filter,))
    screen = compute(rt)
    default = compute(runtime)
    assert screen["filter"] == {"name": "coint", "thresholds": {"adf_pvalue_below": 0.05}}
    assert list(screen["rejected"]) == [
        "stale",
        "insufficient_history",
        "depeg",
        "not_cointegrated",
        "coint_q",
        "adf_q",
        "persistence",
    ]
    assert screen["rejected"]["insufficient_history"] == default["rejected"]["insufficient_history"]
    assert sum(screen["rejected"].values()) + screen["n_survivors"] == screen["n_pairs_screened"]
    assert screen["n_survivors"] > 0
    assert all(s["metrics"]["adf_pvalue"] < 0.05 for s in screen["survivors"])
    # Pairs the default filter rejects for hurst, range or touches survive here.
    assert {tuple(s["pair"]) for s in screen["survivors"]} != {
        tuple(s["pair"]) for s in default["survivors"]
    }
    assert any(s["metrics"]["hurst"] >= 0.5 for s in screen["survivors"])


def test_screen_thresholds_come_from_the_universe_and_show_in_the_screen(runtime, tmp_path, keys):
    rt = runtime_for(runtime, universe_with(tmp_path, "hurst_below = 0.45\nmin_touches = 3\n"))
    default = compute(runtime)
    with database.connection_context():
        screening.run_screen(rt)
    c = make_client(rt)
    with c.client:
        body = c.get("/api/v1/screen/latest", keys.personal).json()
        pairs = c.get("/api/v1/pairs", keys.personal).json()
    assert body["filter"] == {
        "name": "default",
        "thresholds": {**DEFAULT_THRESHOLDS, "hurst_below": 0.45, "min_touches": 3},
    }
    assert 0 < body["n_survivors"] < default["n_survivors"]
    for s in body["survivors"]:
        assert s["metrics"]["hurst"] < 0.45
        assert min(s["metrics"]["touches_low"], s["metrics"]["touches_high"]) >= 3
    assert pairs["count"] == body["n_survivors"]
    assert default["filter"] == {"name": "default", "thresholds": DEFAULT_THRESHOLDS}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("hurst_limit = 0.4\n", "hurst_limit: not a threshold of filter 'default'"),
        ('hurst_below = "low"\n', "hurst_below must be a number"),
        ("hurst_below = true\n", "hurst_below must be a number"),
        ("min_touches = 2.5\n", "min_touches must be a whole number"),
        ('filter = "nope"\n', "no screen filter named 'nope'"),
    ],
)
def test_bad_screen_tables_stop_the_start(runtime, tmp_path, table, message):
    with pytest.raises((UniverseError, PluginError), match=message):
        runtime_for(runtime, universe_with(tmp_path, table))


def latest_screen_id() -> int:
    with database.connection_context():
        return int(Screen.select(fn.MAX(Screen.id)).scalar())


def test_failing_metric_is_named_in_a_live_pair_and_stops_the_screen(runtime, keys, monkeypatch):
    """The variance-ratio metric raising: /pair answers 200 saying why; the screen stops,
    naming the plugin and the metric, and the previous screen stays published."""

    def broken(self: VarianceRatioMetric, panel: PairPanel) -> dict:
        raise FloatingPointError("variance ratio blew up")

    monkeypatch.setattr(VarianceRatioMetric, "compute", broken)
    rt = runtime_for(runtime)
    before = latest_screen_id()
    with database.connection_context(), pytest.raises(PluginFailed) as failed:
        screening.run_screen(rt)
    assert str(failed.value) == (
        "plugin 'mean_reversion' failed: metric 'variance_ratio' "
        "raised FloatingPointError: variance ratio blew up"
    )
    assert "variance ratio blew up" in failed.value.trace  # the worker's traceback, as text
    assert latest_screen_id() == before
    c = make_client(rt)
    with c.client:
        r = c.get("/api/v1/pair/ETH/BTC", keys.personal)
    assert r.status_code == 200
    body = r.json()
    assert body["passes_filter"] is False
    assert body["filter_reason"] == "hurst: hurst unavailable (metric variance_ratio failed)"
    assert "hurst" not in body["metrics"] and "adf_pvalue" in body["metrics"]


def test_a_failing_metric_no_rule_reads_also_stops_the_screen(runtime, tmp_path, monkeypatch):
    """Under a filter that does not read it, the metric runs on the survivors only; failing
    there, it stops the screen all the same rather than publish survivors without it."""

    def broken(self: VarianceRatioMetric, panel: PairPanel) -> dict:
        raise FloatingPointError("variance ratio blew up")

    monkeypatch.setattr(VarianceRatioMetric, "compute", broken)
    rt = runtime_for(runtime, universe_with(tmp_path, 'filter = "coint"\n'), (coint_filter,))
    before = latest_screen_id()
    with database.connection_context(), pytest.raises(PluginFailed, match="variance_ratio"):
        screening.run_screen(rt, processes=1)
    assert latest_screen_id() == before


def test_a_missing_core_field_provider_stops_the_start(runtime, monkeypatch):
    without_bands = tuple(
        (name, module)
        for name, module in plugin_loading.BUILTIN_PLUGINS
        if not module.endswith(".bands")
    )
    monkeypatch.setattr(plugin_loading, "BUILTIN_PLUGINS", without_bands)
    with pytest.raises(PluginError, match=r"no metric provides the field 'position'.*/pairs"):
        runtime_for(runtime)


def test_a_filter_input_without_provider_stops_the_start(runtime, tmp_path):
    universe = universe_with(tmp_path, 'filter = "half_life"\n')
    with pytest.raises(
        PluginError, match=r"'half_life', which rule 'slow' of the screen filter 'half_life'"
    ):
        runtime_for(runtime, universe, (coint_filter,))


def test_full_window_fields_are_null_on_short_history():
    """``needs_full_window`` is the engine's rule, whatever the metric returned."""

    class Span:
        name = "span"
        fields = (
            MetricField("span_full", nullable=True, needs_full_window=True),
            MetricField("span_any"),
        )

        def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
            w = panel.window
            return {"span_full": w.max(axis=1) - w.min(axis=1), "span_any": w[:, -1]}

    class Plugin:
        @hookimpl
        def pairscreen_register_metrics(self) -> list:
            return [Span()]

    pm = plugin_loading.new_plugin_manager()
    pm.register(Plugin())
    days = 300
    closes = np.exp(np.sin(np.arange(days) / 9.0))[None, :]
    panel = PairPanel(
        a=("X",),
        b=("Y",),
        dates=np.arange(days).astype("datetime64[D]")[None, :],
        close_a=closes,
        close_b=np.ones_like(closes),
        volume_a=np.ones_like(closes),
        volume_b=np.ones_like(closes),
        window_days=540,
    )
    short = compute_metrics(Plugins(pm, Settings()), panel).row(0)
    assert short["span_full"] is None and short["span_any"] is not None
    full = compute_metrics(Plugins(pm, Settings()), replace(panel, window_days=200))
    assert full.row(0)["span_full"] is not None


def test_a_chunk_job_names_its_filter(runtime):
    """What crosses to a worker process is the filter's name and thresholds, not the filter."""
    import pickle

    choice = choose_filter(runtime.plugins, runtime.universe)
    assert choice == FilterChoice("default", DEFAULT_THRESHOLDS)
    assert pickle.loads(pickle.dumps(choice)) == choice


def test_a_rule_code_that_cannot_start_a_reason_stops_the_start(runtime, tmp_path):
    class Colon:
        code = "adf:strict"
        inputs = ("adf_pvalue",)

        def check(self, metrics: dict, context: FilterContext) -> np.ndarray:
            return np.ones(len(context.history_days), dtype=bool)

        def explain(self, metrics: dict, context: FilterContext, i: int) -> str:
            return "never"

    class ColonFilter:
        name = "colon"
        thresholds = MappingProxyType({})
        rules = (Colon(),)

    class Plugin:
        @hookimpl
        def pairscreen_register_filters(self) -> list:
            return [ColonFilter()]

    universe = universe_with(tmp_path, 'filter = "colon"\n')
    with pytest.raises(PluginError, match="'adf:strict'"):
        runtime_for(runtime, universe, (Plugin(),))


def test_without_the_band_metric_a_pair_leaves_position_out_and_the_screen_stops(
    runtime, keys, monkeypatch
):
    """The metric behind ``position``/``zone`` failing: /pair still answers, per contract;
    the screen stops and /pairs keeps serving the previous screen, zones and all."""
    from pairscreen_plugins.metrics.bands import BandsMetric

    def broken(self: BandsMetric, panel: PairPanel) -> dict:
        raise FloatingPointError("bands blew up")

    monkeypatch.setattr(BandsMetric, "compute", broken)
    rt = runtime_for(runtime)
    with database.connection_context(), pytest.raises(PluginFailed, match="metric 'bands'"):
        screening.run_screen(rt)
    c = make_client(rt)
    with c.client:
        pairs = c.get("/api/v1/pairs", keys.personal)
        snapshot = c.get("/api/v1/pair/ETH/BTC", keys.personal)
    assert pairs.status_code == 200 and snapshot.status_code == 200
    assert pairs.json()["count"] > 0
    assert all("zone" in pair and "position" in pair for pair in pairs.json()["pairs"])
    assert "position" not in snapshot.json()["metrics"]


def test_a_universe_min_history_days_still_works_and_names_where_it_goes(runtime, tmp_path, caplog):
    """``[screen] min_history_days`` (deprecated): the core's history rule still applies it
    inside the default filter, and the start says in one line where the minimum now lives."""
    with caplog.at_level("WARNING", logger="pairscreen.engine.filtering"):
        rt = runtime_for(runtime, universe_with(tmp_path, "min_history_days = 300\n"))
    warned = [r.getMessage() for r in caplog.records if "min_history_days" in r.getMessage()]
    assert warned and all("\n" not in line for line in warned)
    assert "PAIRSCREEN_MIN_HISTORY_DAYS" in warned[0] and "deprecated" in warned[0]
    assert rt.screen_filter.thresholds["min_history_days"] == 300
    metrics = MetricValues(
        values={
            "hurst": np.array([0.3, 0.3]),
            "adf_pvalue": np.array([0.1, 0.1]),
            "range_width": np.array([0.5, 0.5]),
            "touches_low": np.array([3, 3]),
            "touches_high": np.array([3, 3]),
        },
        fields={},
    )
    context = FilterContext(
        np.array([250, 300]), np.zeros(2, dtype=bool), rt.screen_filter.thresholds
    )
    assert filter_reasons(rt.plugins.filters.get("default"), metrics, context) == [
        "insufficient_history: 250 days of common history, at least 300 days needed",
        "",
    ]
    caplog.clear()
    with caplog.at_level("WARNING", logger="pairscreen.engine.filtering"):
        runtime_for(runtime, universe_with(tmp_path, "hurst_below = 0.45\n"))
    assert not [r for r in caplog.records if "min_history_days" in r.getMessage()]
