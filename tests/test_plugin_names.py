"""A plugin has one name, however it is loaded: built-ins by a short name as an entry point's
would be (``kalman``, ``volume``), their former module-path names accepted for one release
with a one-line warning, and a module a test hands over named as its installed entry point."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import sys
from pathlib import Path

import pytest

from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.plugin_system.loader import (
    BUILTIN_PLUGINS,
    PluginLoadError,
    load_plugins,
)
from tests.test_plugins_command import DEMO_UNIVERSE
from tests.test_third_party_plugin import install_distribution, readme_plugin_source


def test_built_ins_are_named_by_short_unique_names_and_load():
    names = [name for name, _module in BUILTIN_PLUGINS]
    assert len(set(names)) == len(names)
    assert all("." not in name for name in names)
    pm = load_plugins(load_settings())
    for name, module in BUILTIN_PLUGINS:
        assert pm.get_plugin(name) is importlib.import_module(module)


def test_a_former_name_in_disable_plugins_still_works_and_warns_once(caplog):
    settings = dataclasses.replace(
        load_settings(), disable_plugins=("pairscreen_plugins.metrics.volume",)
    )
    with caplog.at_level(logging.WARNING):
        pm = load_plugins(settings)
    assert pm.get_plugin("volume") is None and pm.is_blocked("volume")
    said = [r.getMessage() for r in caplog.records if "former name" in r.getMessage()]
    assert said == [
        "PAIRSCREEN_DISABLE_PLUGINS names the built-in plugin 'pairscreen_plugins.metrics.volume' "
        "by its former name; write 'volume' instead (the former name stops working in the "
        "next release)"
    ]


def test_a_former_table_name_configures_the_plugin_and_warns(runtime, tmp_path, caplog):
    universe = tmp_path / "universe.toml"
    former = '[plugins."pairscreen_plugins.metrics.kalman"]'
    universe.write_text(f"{DEMO_UNIVERSE}\n{former}\nq = 1e-5\n")
    settings = dataclasses.replace(runtime.settings, universe_path=universe)
    with caplog.at_level(logging.WARNING):
        rt = build_runtime(settings, migrate=False)
    assert rt.plugins.options["kalman"]["q"] == 1e-5
    assert any(
        "[plugins.pairscreen_plugins.metrics.kalman] names the built-in plugin" in r.getMessage()
        and "write 'kalman' instead" in r.getMessage()
        for r in caplog.records
    )


def test_the_short_table_name_configures_the_plugin(runtime, tmp_path):
    universe = tmp_path / "universe.toml"
    universe.write_text(DEMO_UNIVERSE + "\n[plugins.kalman]\nr = 0.002\n")
    rt = build_runtime(dataclasses.replace(runtime.settings, universe_path=universe), migrate=False)
    assert rt.plugins.options["kalman"] == {"q": 1e-4, "r": 0.002, "fit": "fixed"}


@pytest.fixture()
def site(tmp_path, monkeypatch):
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for module in ("momentum_plugin", "volume_plugin"):
        sys.modules.pop(module, None)


def test_a_module_handed_over_is_named_as_its_entry_point(site, monkeypatch):
    install_distribution(site, "momentum_plugin", readme_plugin_source(), "momentum")
    monkeypatch.setenv("PAIRSCREEN_LOAD_PLUGINS", "")  # the entry point itself stays out
    module = importlib.import_module("momentum_plugin")
    pm = load_plugins(load_settings(), extra=(module,))
    assert pm.get_name(module) == "momentum"


def test_an_entry_point_with_a_built_in_s_name_is_refused(site):
    install_distribution(site, "volume_plugin", readme_plugin_source(), "volume")
    settings = dataclasses.replace(load_settings(), load_plugins=("volume",))
    with pytest.raises(PluginLoadError) as refused:
        load_plugins(settings)
    assert str(refused.value) == (
        "the entry point 'volume' (volume_plugin) has the name of a built-in plugin; rename it "
        "in its package's entry points"
    )


def test_docs_name_built_ins_by_their_short_names():
    root = Path(__file__).resolve().parents[1]
    for doc in (root / "docs").glob("*.md"):
        text = doc.read_text(encoding="utf-8")
        for _name, module in BUILTIN_PLUGINS:
            assert f"[plugins.{module}]" not in text and f'"{module}"]' not in text, doc.name
