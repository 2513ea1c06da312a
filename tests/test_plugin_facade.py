"""The typed facade calls hooks through pluggy: its calling rules, tracing, the Protocol
check of every component, and the names plugins are shown by."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import pluggy
import pytest
from pairscreen_plugins.metrics import volume
from pairscreen_plugins.pegs.csv_reference import CsvPegSource
from pairscreen_plugins.pegs.demo_reference import DemoPegSource

from pairscreen import IntradayMarketPrice, MetricField, PegEventChange, hookimpl
from pairscreen.config import Settings
from pairscreen.pegs.sampling import read_peg
from pairscreen.plugin_system.hookspecs import hookspec
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import PluginError, Plugins, component_type, plugin_name
from pairscreen.universe import Universe
from tests.support.plugin_files import plugin_file
from tests.test_peg_sampling import AAPLX
from tests.test_peg_sources import daily, peg_runtime

EVENT = PegEventChange(
    ticker="PAXG",
    asset_class="tokenized_metal",
    change="opened",
    first_unhealthy=datetime(2025, 3, 3, tzinfo=UTC),
    last_unhealthy=datetime(2025, 3, 3, 13, tzinfo=UTC),
    median_drift_pct=-2.5,
    sample_count=13,
    reference_source="demo",
)


def plugins_of(*plugins: object) -> Plugins:
    pm = new_plugin_manager()
    for plugin in plugins:
        pm.register(plugin)
    return Plugins(pm, Settings())


def test_hookcall_monitoring_sees_one_call_per_plugin_with_the_wrappers() -> None:
    plugins = plugins_of(volume, plugin_file("hook_metric"), plugin_file("hook_wrapper_metrics"))
    calls: list[tuple[str, list[str]]] = []
    returned: list[Any] = []

    def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        calls.append((hook_name, [plugin_name(plugins.pm, i.plugin) for i in impls]))

    def after(outcome: Any, hook_name: str, impls: Any, kwargs: Any) -> None:
        returned.append(outcome.get_result())

    undo = plugins.pm.add_hookcall_monitoring(before, after)
    try:
        assert [m.name for m in plugins.metrics] == ["volume"]
    finally:
        undo()
    wrapper = "tests.plugins.hook_wrapper_metrics"
    assert calls == [
        ("pairscreen_register_metrics", ["pairscreen_plugins.metrics.volume", wrapper]),
        ("pairscreen_register_metrics", ["tests.plugins.hook_metric", wrapper]),
    ]
    assert [[m.name for m in answer] for result in returned for answer in result] == [
        ["volume"],
        [],  # what the wrapper left of hook_metric's answer
    ]


def test_pluggy_tracing_writes_every_hook_call() -> None:
    plugins = plugins_of(plugin_file("hook_peg_event"), plugin_file("hook_peg_event_no_argument"))
    lines: list[str] = []
    plugins.pm.trace.root.setwriter(lines.append)
    undo = plugins.pm.enable_tracing()
    try:
        plugins.peg_event_changed(EVENT)
    finally:
        undo()
    calls = [line for line in lines if line.strip().startswith("pairscreen_peg_event_changed")]
    finished = [line for line in lines if "finish pairscreen_peg_event_changed" in line]
    assert len(calls) == len(finished) == 2  # one call per plugin
    assert all("ticker='PAXG'" in line for line in calls)


def test_an_implementation_taking_no_argument_is_called(caplog: pytest.LogCaptureFixture) -> None:
    plugins = plugins_of(plugin_file("hook_peg_event_no_argument"))
    with caplog.at_level(logging.WARNING):
        plugins.peg_event_changed(EVENT)
    assert caplog.messages == ["hook_peg_event_no_argument: something opened or closed"]


def test_a_wrapper_around_the_event_hook_wraps_each_plugin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    class Timing:
        @hookimpl(wrapper=True)
        def pairscreen_peg_event_changed(self, event: PegEventChange) -> Any:
            seen.append(f"before {event.ticker}")
            result = yield
            seen.append(f"after {event.ticker}")
            return result

    plugins = plugins_of(
        plugin_file("hook_peg_event"), plugin_file("hook_peg_event_failing"), Timing()
    )
    with caplog.at_level(logging.WARNING):
        plugins.peg_event_changed(EVENT)
    assert seen == ["before PAXG", "after PAXG", "before PAXG"]  # the failing one raised
    assert "hook_peg_event: PAXG opened" in caplog.text
    assert "plugin tests.plugins.hook_peg_event_failing failed on a peg event" in caplog.text


class NoCompute:
    name = "no_compute"
    fields = (MetricField("nothing"),)


class Offers:
    """A plugin object registered without a name."""

    def __init__(self, *metrics: object, peg_sources: Sequence[object] = ()) -> None:
        self.metrics = metrics
        self.peg_sources = peg_sources

    @hookimpl
    def pairscreen_register_metrics(self) -> list[object]:
        return list(self.metrics)

    @hookimpl
    def pairscreen_register_peg_sources(self) -> list[object]:
        return list(self.peg_sources)


def test_a_component_that_is_not_of_its_kind_is_rejected_naming_the_plugin() -> None:
    plugins = plugins_of(Offers(NoCompute()))
    with pytest.raises(PluginError) as caught:
        _ = plugins.metrics
    message = str(caught.value)
    assert message.startswith("plugin 'tests.test_plugin_facade.Offers' registered <")
    assert "as a metric, but it is not a Metric (missing: compute)" in message


def test_an_answer_that_is_not_a_list_is_rejected() -> None:
    class Bare:
        @hookimpl
        def pairscreen_register_metrics(self) -> object:
            return NoCompute()

    with pytest.raises(PluginError, match=r"Bare' answered .* where a list of metrics belongs"):
        _ = plugins_of(Bare()).metrics


def test_a_register_hook_that_raises_is_an_error_naming_the_plugin() -> None:
    class Crashing:
        @hookimpl
        def pairscreen_register_strategies(self) -> list[object]:
            raise RuntimeError("no config file")

    with pytest.raises(PluginError) as caught:
        _ = plugins_of(Crashing()).strategies
    assert str(caught.value) == (
        "plugin 'tests.test_plugin_facade.test_a_register_hook_that_raises_is_an_error_naming"
        "_the_plugin.<locals>.Crashing' failed in pairscreen_register_strategies: no config file"
    )


def test_unnamed_plugins_are_shown_by_module_and_class_never_by_id() -> None:
    class Duplicate:
        name = "volume"
        fields = (MetricField("volume_again"),)

        def compute(self, panel: object) -> dict[str, object]:
            raise AssertionError

    first, second = Offers(Duplicate()), Offers(Duplicate())
    plugins = plugins_of(first, second)
    assert plugins.pm.get_name(first) == str(id(first))  # pluggy's own name for it
    assert plugin_name(plugins.pm, first) == "tests.test_plugin_facade.Offers"
    with pytest.raises(PluginError) as caught:
        _ = plugins.metrics
    assert str(caught.value) == (
        "metric 'volume' is registered twice: by 'tests.test_plugin_facade.Offers' "
        "and by 'tests.test_plugin_facade.Offers'"
    )
    assert str(id(first)) not in str(caught.value)


def test_a_named_plugin_keeps_its_name() -> None:
    pm = new_plugin_manager()
    pm.register(volume, name="volume-plugin")
    assert Plugins(pm, Settings()).metrics.owner("volume") == "volume-plugin"


def test_the_intraday_market_price_is_a_declared_capability() -> None:
    assert isinstance(DemoPegSource(), IntradayMarketPrice)
    assert not isinstance(CsvPegSource(), IntradayMarketPrice)
    assert isinstance(plugin_file("hook_peg_source").FixedPegSource(), IntradayMarketPrice)


def test_a_peg_source_without_the_capability_is_not_asked_for_a_market_price(
    tmp_path: Path,
) -> None:
    """Named like the market source but without ``market_price``: the daily close counts."""

    class ReferenceOnly:
        name = "exchange"
        max_age = timedelta(hours=1)

        def reference_price(self, reference: str, at: datetime, options: Any) -> None:
            return None

    universe = Universe(assets=(AAPLX,), market_source="exchange")
    candles = {"AAPLx": daily("AAPLx", "2025-03-05", [240.0, 241.0])}
    rt = peg_runtime(tmp_path, universe, Offers(peg_sources=[ReferenceOnly()]), candles=candles)
    at = datetime(2025, 3, 5, 16, tzinfo=UTC)
    assert read_peg(rt, AAPLX, at, candles).market_price == 240.0


def test_every_register_hook_names_a_checkable_component_type() -> None:
    """Each ``pairscreen_register_*`` spec returns ``list[<runtime-checkable Protocol>]``."""
    hooks = [c for n, c in vars(new_plugin_manager().hook).items() if "_register_" in n]
    assert len(hooks) >= 7
    for hook in hooks:
        protocol = component_type(hook)
        assert getattr(protocol, "_is_protocol", False), f"{hook.name}: {protocol} is no Protocol"
        assert not isinstance(object(), protocol)


class Unchecked(Protocol):
    name: str


class UncheckedSpecs:
    @hookspec
    def pairscreen_register_unchecked(self) -> list[Unchecked]:
        """A spec whose component type cannot check a component."""
        return []


def test_a_spec_returning_an_uncheckable_protocol_is_a_clear_error() -> None:
    pm = new_plugin_manager()
    pm.add_hookspecs(UncheckedSpecs)
    with pytest.raises(PluginError, match="Unchecked, which cannot check components"):
        component_type(pm.hook.pairscreen_register_unchecked)
