"""One place chooses every component: the universe file's ``[components]`` table.

Settings (``PAIRSCREEN_STRATEGY`` ...) override it, the built-ins are the fallback, the former
places (``[market] source``, ``[screen] filter``) keep working for one release with a one-line
notice naming the new place, and a name that matches nothing stops the start in one sentence.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from pairscreen import deprecation
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.plugin_system.registry import PluginError
from pairscreen.runtime import Runtime
from pairscreen.universe import UniverseError, load_universe_file
from tests.plugins import (
    accept_all_filter,
    hook_chart_renderer,
    hook_market_source,
    hook_scorer,
    hook_strategy,
)
from tests.support.cli import run_cli

ASSETS = """
[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETH"
sector = "majors"

[[asset]]
ticker = "SOL"
sector = "majors"
"""
NEW = '[components]\nmarket_source = "demo"\nfilter = "default"\n\n[plugins.demo]\nseed = 7\n'
OLD = '[market]\nsource = "demo"\nseed = 7\n\n[screen]\nfilter = "default"\n'
TEST_PLUGINS = (hook_market_source, accept_all_filter, hook_strategy, hook_scorer)


def universe_file(tmp_path: Path, head: str, name: str = "universe.toml") -> Path:
    path = tmp_path / name
    path.write_text(head + ASSETS, encoding="utf-8")
    return path


def start(
    runtime: Runtime, universe: Path, plugins: tuple[object, ...] = (), **settings: str
) -> Runtime:
    """A runtime on the fixture's database from ``universe`` and the given settings (as the
    environment or a flag would give them)."""
    given = load_settings(
        {}, data_dir=runtime.settings.data_dir, database_url=runtime.settings.database_url
    )
    chosen = replace(given, universe_path=universe, **settings)
    return build_runtime(chosen, migrate=False, extra_plugins=plugins)


def notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]


@pytest.fixture(autouse=True)
def fresh_notices() -> None:
    deprecation.forget()  # each test counts its own notices, whatever ran before it


def test_the_components_table_chooses_every_component(runtime, tmp_path):
    path = universe_file(
        tmp_path,
        "[components]\n"
        'market_source = "hook_steady"\n'
        'filter = "accept_all"\n'
        'strategy = "hook_hold"\n'
        'scorer = "hook_by_hurst"\n'
        'chart_renderer = "hook_caption"\n',
    )
    rt = start(runtime, path, (*TEST_PLUGINS, hook_chart_renderer))
    assert rt.universe.market_source == "hook_steady"
    assert rt.screen_filter.name == "accept_all"
    assert (rt.settings.strategy, rt.settings.scorer, rt.settings.chart_renderer) == (
        "hook_hold",
        "hook_by_hurst",
        "hook_caption",
    )
    # the register hooks were handed the resolved choice too (the plugins' own settings)
    assert rt.plugins.settings == rt.settings


def test_without_a_choice_the_built_ins_run(runtime, tmp_path):
    rt = start(runtime, universe_file(tmp_path, NEW))
    assert (rt.settings.strategy, rt.settings.scorer, rt.settings.chart_renderer) == (
        "accumulation",
        "score",
        "default",
    )
    assert rt.screen_filter.name == "default"


def test_the_breakeven_metric_follows_the_strategy_the_universe_chose(runtime, tmp_path):
    path = universe_file(tmp_path, NEW.replace("\n\n", '\nstrategy = "ou_optimal"\n\n', 1))
    rt = start(runtime, path)
    breakeven = rt.plugins.metrics.get("breakeven")
    assert breakeven.strategy.name == "ou_optimal"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("setting", "value", "in_file"),
    [
        ("strategy", "kalman_band", "ou_optimal"),
        ("scorer", "score", "hook_by_hurst"),
        ("chart_renderer", "default", "hook_caption"),
    ],
)
def test_a_setting_overrides_the_universe(runtime, tmp_path, setting, value, in_file):
    path = universe_file(tmp_path, NEW.replace("\n\n", f'\n{setting} = "{in_file}"\n\n', 1))
    plugins = (hook_scorer, hook_chart_renderer)
    assert getattr(start(runtime, path, plugins).settings, setting) == in_file
    assert getattr(start(runtime, path, plugins, **{setting: value}).settings, setting) == value


def test_the_environment_variable_is_the_override(tmp_path):
    path = universe_file(tmp_path, NEW.replace("\n\n", '\nstrategy = "ou_optimal"\n\n', 1))
    env = {"PAIRSCREEN_STRATEGY": "kalman_band", "PAIRSCREEN_UNIVERSE": str(path)}
    settings = load_settings(env, data_dir=tmp_path)
    assert settings.strategy == "kalman_band"
    assert load_settings({"PAIRSCREEN_UNIVERSE": str(path)}, data_dir=tmp_path).strategy == ""


def test_every_component_is_overridden_by_its_variable_over_the_universe(runtime, tmp_path):
    """The market source and the filter too, as the strategy, scorer and renderer are: the
    environment's choice beats the universe file's, and the runtime reads it everywhere."""
    path = universe_file(tmp_path, NEW.replace("\n\n", '\nstrategy = "ou_optimal"\n\n', 1))
    env = {
        "PAIRSCREEN_MARKET_SOURCE": "hook_steady",
        "PAIRSCREEN_FILTER": "accept_all",
        "PAIRSCREEN_STRATEGY": "hook_hold",
        "PAIRSCREEN_SCORER": "hook_by_hurst",
        "PAIRSCREEN_LOAD_PLUGINS": "",
    }
    given = load_settings(
        env, data_dir=runtime.settings.data_dir, database_url=runtime.settings.database_url
    )
    assert (given.market_source, given.screen_filter) == ("hook_steady", "accept_all")
    rt = build_runtime(
        replace(given, universe_path=path), migrate=False, extra_plugins=TEST_PLUGINS
    )
    assert rt.universe.market_source == "hook_steady"
    assert rt.screen_filter.name == "accept_all"
    assert (rt.settings.market_source, rt.settings.screen_filter) == ("hook_steady", "accept_all")
    # unset, they stay unset in the runtime's settings: a universe handed the same settings
    # later keeps its own choice
    unset_rt = start(runtime, path, TEST_PLUGINS)
    assert (unset_rt.settings.market_source, unset_rt.settings.screen_filter) == ("", "")
    assert (rt.settings.strategy, rt.settings.scorer) == ("hook_hold", "hook_by_hurst")
    unset = start(runtime, path, TEST_PLUGINS)
    assert (unset.universe.market_source, unset.screen_filter.name) == ("demo", "default")


def test_with_the_variable_the_file_need_not_name_a_market_source(runtime, tmp_path):
    path = universe_file(tmp_path, "[plugins.demo]\nseed = 7\n")
    given = load_settings(
        {"PAIRSCREEN_MARKET_SOURCE": "demo", "PAIRSCREEN_LOAD_PLUGINS": ""},
        data_dir=runtime.settings.data_dir,
        database_url=runtime.settings.database_url,
        universe=path,
    )
    rt = build_runtime(given, migrate=False)
    assert rt.universe.market_source == "demo" and rt.universe.market_options == {"seed": 7}
    with pytest.raises(UniverseError, match=r"\[components\] needs market_source"):
        start(runtime, path)


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        (
            "market_source",
            "dmeo",
            "PAIRSCREEN_MARKET_SOURCE=dmeo: no market-data source named 'dmeo' (known: ccxt, "
            "csv, demo)",
        ),
        (
            "screen_filter",
            "strct",
            "PAIRSCREEN_FILTER=strct: no screen filter named 'strct' (known: default)",
        ),
    ],
)
def test_an_overriding_variable_that_names_nothing_is_named_in_the_error(
    runtime, tmp_path, setting, value, message
):
    with pytest.raises(PluginError) as refused:
        start(runtime, universe_file(tmp_path, NEW), **{setting: value})
    assert str(refused.value) == message


def test_the_variable_overrides_from_the_command_line_in_one_line(database_url, tmp_path):
    path = universe_file(tmp_path, NEW)
    env = {
        "PAIRSCREEN_LOAD_PLUGINS": "",
        "PAIRSCREEN_DATA_DIR": str(tmp_path),
        "PAIRSCREEN_FILTER": "strct",
    }
    done = run_cli(
        "--universe",
        str(path),
        "--database-url",
        database_url,
        "screen",
        "run",
        "--no-sync",
        env=env,
    )
    assert (done.returncode, done.stderr) == (
        2,
        "pairscreen: error: PAIRSCREEN_FILTER=strct: no screen filter named 'strct' (known: "
        "default)\n",
    )


def test_the_former_keys_work_warn_once_and_name_the_new_place(runtime, tmp_path, caplog):
    old, new = universe_file(tmp_path, OLD, "old.toml"), universe_file(tmp_path, NEW, "new.toml")
    with caplog.at_level(logging.WARNING):
        from_old = start(runtime, old)
        again = start(runtime, old)  # the same process reads it again: no second notice
        from_new = start(runtime, new)
    said = notices(caplog)
    assert said == [
        f"{old}: [market] source is deprecated and still works for this release; write "
        "[components] market_source instead",
        f"{old}: [screen] filter is deprecated and still works for this release; write "
        "[components] filter instead",
        f"{old}: [market] seed is deprecated and still works for this release; write "
        "[plugins.demo] instead",
    ]
    assert all("\n" not in line for line in said)
    assert from_old.universe == from_new.universe == again.universe
    assert from_old.settings == replace(from_new.settings, universe_path=old)
    assert from_old.screen_filter == from_new.screen_filter
    assert from_old.plugins.options == from_new.plugins.options
    assert from_old.universe.market_options == {"seed": 7}
    assert from_old.plugins.options["demo"] == {"seed": 7, "days": 1200}


CSV_OLD = '[market]\nsource = "csv"\npath = "prices"\nvolume_unit = "quote"\n'
CSV_NEW = (
    '[components]\nmarket_source = "csv"\n\n'
    '[plugins.csv_source]\npath = "prices"\nvolume_unit = "quote"\n'
)


def test_the_csv_source_reads_its_plugin_table_as_it_read_market(runtime, tmp_path, caplog):
    """The same files give the same candles whichever place names the folder; a relative
    path is relative to the universe file in both."""
    prices = tmp_path / "prices"
    prices.mkdir()
    for ticker, base in (("BTC", 100.0), ("ETH", 10.0), ("SOL", 1.0)):
        rows = [f"2026-01-{d:02d},{base + d},{1000 + d}" for d in range(1, 11)]
        (prices / f"{ticker}.csv").write_text("date,close,volume\n" + "\n".join(rows) + "\n")
    old = universe_file(tmp_path, CSV_OLD, "old.toml")
    new = universe_file(tmp_path, CSV_NEW, "new.toml")
    with caplog.at_level(logging.WARNING):
        from_old, from_new = start(runtime, old), start(runtime, new)
    assert notices(caplog) == [
        f"{old}: [market] source is deprecated and still works for this release; write "
        "[components] market_source instead",
        f"{old}: [market] path, volume_unit is deprecated and still works for this release; "
        "write [plugins.csv_source] instead",
    ]
    assert from_new.universe.market_options == {"path": str(prices), "volume_unit": "quote"}
    assert from_old.universe == from_new.universe
    assert from_old.plugins.options == from_new.plugins.options
    source = from_new.plugins.market_sources.get("csv")
    got = {
        name: [
            (c.ticker, c.close.tolist())
            for c in source.fetch_candles(
                rt.universe.assets, rt.universe.market_options, since={}, until=date(2026, 1, 31)
            )
        ]
        for name, rt in (("old", from_old), ("new", from_new))
    }
    assert got["old"] == got["new"]
    assert got["new"][0] == ("BTC", [100.0 + d for d in range(1, 11)])


def test_a_market_option_in_both_places_is_refused(runtime, tmp_path):
    path = universe_file(tmp_path, CSV_NEW + '\n[market]\npath = "prices"\n')
    with pytest.raises(UniverseError) as refused:
        start(runtime, path)
    assert str(refused.value) == (
        f"{path}: [market] and [plugins.csv_source] both set the options of market source "
        "'csv'; keep only [plugins.csv_source]"
    )


def test_a_market_option_the_source_does_not_declare_stops_the_start(runtime, tmp_path):
    path = universe_file(tmp_path, CSV_NEW + 'folder = "prices"\n')
    with pytest.raises(PluginError) as refused:
        start(runtime, path)
    assert str(refused.value) == (
        "[plugins.csv_source] folder: not an option of plugin 'csv_source' (its options: path, "
        "volume_unit, close_time)"
    )


def test_the_new_form_says_nothing(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        load_universe_file(universe_file(tmp_path, NEW))
    assert notices(caplog) == []


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (
            '[components]\nmarket_source = "demo"\n\n[market]\nsource = "demo"\n',
            "[market] source and [components] market_source both choose the market source; "
            "keep only [components] market_source",
        ),
        (
            '[components]\nmarket_source = "demo"\nfilter = "default"\n\n'
            '[screen]\nfilter = "default"\n',
            "[screen] filter and [components] filter both choose the filter; keep only "
            "[components] filter",
        ),
        (
            '[components]\nmarket_source = "demo"\nrenderer = "default"\n',
            "[components] renderer: not a component (one of market_source, filter, strategy, "
            "scorer, chart_renderer)",
        ),
        (
            '[components]\nmarket_source = "demo"\nstrategy = 3\n',
            "[components] strategy must be a name, got 3",
        ),
        (
            "[plugins.demo]\nseed = 7\n",
            '[components] needs market_source = "<market-data source name>"',
        ),
    ],
)
def test_a_bad_components_table_is_refused_in_one_sentence(tmp_path, head, message):
    path = universe_file(tmp_path, head)
    with pytest.raises(UniverseError) as refused:
        load_universe_file(path)
    assert str(refused.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("key", "name", "message"),
    [
        (
            "strategy",
            "acumulation",
            "the universe's [components] strategy: no backtest strategy named 'acumulation' "
            "(known: accumulation, kalman_band, ou_optimal)",
        ),
        (
            "scorer",
            "scroe",
            "the universe's [components] scorer: no scorer named 'scroe' (known: score)",
        ),
        (
            "chart_renderer",
            "fancy",
            "the universe's [components] chart_renderer: no chart renderer named 'fancy' "
            "(known: default)",
        ),
        (
            "filter",
            "strict",
            "the universe's [components] filter: no screen filter named 'strict' (known: default)",
        ),
    ],
)
def test_an_unknown_component_stops_the_start(runtime, tmp_path, key, name, message):
    path = universe_file(tmp_path, f'[components]\nmarket_source = "demo"\n{key} = "{name}"\n')
    with pytest.raises(PluginError) as refused:
        start(runtime, path)
    assert str(refused.value) == message


def test_an_unknown_market_source_stops_the_command_in_one_line(database_url, tmp_path):
    path = universe_file(tmp_path, '[components]\nmarket_source = "dmeo"\n')
    env = {"PAIRSCREEN_LOAD_PLUGINS": "", "PAIRSCREEN_DATA_DIR": str(tmp_path)}
    done = run_cli(
        "--universe",
        str(path),
        "--database-url",
        database_url,
        "screen",
        "run",
        "--no-sync",
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "pairscreen: error: the universe's [components] market_source: no market-data source "
        "named 'dmeo' (known: ccxt, csv, demo)\n"
    )


PEG_ASSETS = """
[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "PAXG"
sector = "gold"
asset_class = "tokenized_metal"
peg = { reference = "XAU", sources = ["csv"] }
"""
PEG_HEAD = '[components]\nmarket_source = "demo"\n\n'


def peg_universe(tmp_path: Path, table: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(PEG_HEAD + table + PEG_ASSETS, encoding="utf-8")
    return path


def test_a_peg_source_reads_its_plugin_table_as_it_read_peg_sources(runtime, tmp_path, caplog):
    old = peg_universe(tmp_path, '[peg_sources.csv]\nfolder = "refs"\nmax_age_hours = 30\n', "o")
    new = peg_universe(
        tmp_path, '[plugins.csv_reference]\nfolder = "refs"\nmax_age_hours = 30\n', "n"
    )
    with caplog.at_level(logging.WARNING):
        from_old, from_new = start(runtime, old), start(runtime, new)
        start(runtime, old)
    assert notices(caplog) == [
        f"{old}: [peg_sources.csv] is deprecated and still works for this release; write "
        "[plugins.csv_reference] instead"
    ]
    given = {"folder": str(tmp_path / "refs"), "max_age_hours": 30}
    assert from_new.universe.peg_source_options == {"csv": given}
    assert from_old.universe == from_new.universe
    assert from_old.plugins.options == from_new.plugins.options
    assert from_new.plugins.options["csv_reference"]["max_age_hours"] == 30.0


def test_a_peg_source_configured_in_both_places_is_refused(runtime, tmp_path):
    both = '[peg_sources.csv]\nfolder = "a"\n\n[plugins.csv_reference]\nfolder = "b"\n'
    path = peg_universe(tmp_path, both, "u.toml")
    with pytest.raises(UniverseError) as refused:
        start(runtime, path)
    assert str(refused.value) == (
        f"{path}: [peg_sources.csv] and [plugins.csv_reference] both set the options of peg "
        "source 'csv'; keep only [plugins.csv_reference]"
    )


def test_a_former_toml_datetime_option_moves_as_its_iso_text(runtime, tmp_path):
    """An option's value is a boolean, number or string: a TOML date-time the former table
    held reaches the demo source as the same moment in ISO text."""
    path = peg_universe(
        tmp_path, "[peg_sources.demo]\nscenario_anchor = 2026-11-28T12:00:00Z\n", "u.toml"
    )
    rt = start(runtime, path)
    assert rt.universe.peg_source_options["demo"] == {
        "scenario_anchor": "2026-11-28T12:00:00+00:00"
    }
    source = rt.plugins.peg_sources.get("demo")
    anchor = source.anchor(rt.universe.peg_source_options["demo"])  # type: ignore[attr-defined]
    assert anchor.isoformat() == "2026-11-28T12:00:00+00:00"


def test_pairscreen_plugins_lists_a_former_market_option_in_its_new_place(tmp_path):
    """``pairscreen plugins`` shows the options the service runs with: a former ``[market]``
    key appears as the option of the source's plugin, after its one notice."""
    path = universe_file(tmp_path, OLD)
    env = {"PAIRSCREEN_LOAD_PLUGINS": "", "PAIRSCREEN_DATA_DIR": str(tmp_path)}
    done = run_cli("--universe", str(path), "plugins", "--all", "--json", env=env)
    assert done.returncode == 0, done.stderr
    listed = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
    assert {o["name"]: o["value"] for o in listed["demo"]["options"]} == {
        "seed": 7,
        "days": 1200,
    }
    assert done.stderr.count("[market] seed is deprecated") == 1
