"""Seeing and configuring plugins: ``pairscreen plugins [--json]``, a plugin's own options
from its ``[plugins.<name>]`` table, ``PAIRSCREEN_DISABLE_PLUGINS`` (built-ins too) and
``demo --universe``. The commands run as a person runs them, in a subprocess."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.engine.panels import align
from pairscreen.plugin_system.registry import PluginError
from tests.conftest import make_client
from tests.support.cli import newcomer_env, run_cli
from tests.support.plugin_files import PLUGINS_DIR

DEMO_UNIVERSE = (Path(clock.__file__).resolve().parent / "demo_universe.toml").read_text()
LOCAL = "local:hook_plugin_options.py"


@pytest.fixture()
def setup(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A newcomer's environment with the options plugin in a plugins folder, and a copy of
    the demo universe to add tables to."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    shutil.copy(PLUGINS_DIR / "hook_plugin_options.py", folder)
    universe = tmp_path / "universe.toml"
    universe.write_text(DEMO_UNIVERSE)
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(folder)}
    return env, universe


def listing(env: dict[str, str], universe: Path) -> dict[str, dict]:
    done = run_cli("--universe", str(universe), "plugins", "--all", "--json", env=env)
    assert done.returncode == 0, done.stderr
    return {p["name"]: p for p in json.loads(done.stdout)["plugins"]}


def test_hook_pairscreen_plugin_options_listed_with_the_table_values(setup):
    env, universe = setup
    universe.write_text(DEMO_UNIVERSE + f'\n[plugins."{LOCAL}"]\nlookback_days = 10\n')
    plugins = listing(env, universe)
    local = plugins[LOCAL]
    assert local["origin"].startswith("local file ") and local["origin"].endswith(
        "hook_plugin_options.py"
    )
    assert local["metrics"] == [{"name": "lookback_change", "fields": ["lookback_change"]}]
    assert local["options"] == [
        {
            "name": "lookback_days",
            "type": "integer",
            "default": 30,
            "value": 10,
            "description": "days the change is measured over",
        },
        {
            "name": "scale",
            "type": "number",
            "default": 1.0,
            "value": 1.0,
            "description": "a factor applied to the change",
        },
    ]
    rules = plugins["default_filter"]["filters"][0]
    assert rules["name"] == "default" and rules["rules"][0] == "insufficient_history"
    assert rules["thresholds"]["hurst_below"] == 0.5
    assert plugins["accumulation"]["strategies"] == [{"name": "accumulation"}]
    assert plugins["demo"]["origin"] == "built-in"
    assert {"email", "webhook"} <= {
        n["name"] for p in plugins.values() for n in p.get("notifiers", ())
    }
    # the framework's own listener, registered beside the plugins, is listed as such
    alerts = plugins["pairscreen.notify.depeg_alerts.DepegAlertsPlugin"]
    assert alerts == {
        "name": "pairscreen.notify.depeg_alerts.DepegAlertsPlugin",
        "origin": "framework",
        "version": None,
        "hooks": ["pairscreen_peg_event_changed"],
        "peg_event_listener": True,
    }
    text = run_cli("--universe", str(universe), "plugins", "--all", env=env)
    assert text.returncode == 0, text.stderr
    assert "metric lookback_change: lookback_change" in text.stdout
    assert "DepegAlertsPlugin  (framework)\n  peg-event listener" in text.stdout
    assert "option lookback_days = 10 (integer, default 30)" in text.stdout


def test_hook_pairscreen_plugin_options_reach_the_register_hook(runtime, keys, tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    shutil.copy(PLUGINS_DIR / "hook_plugin_options.py", folder)
    universe = tmp_path / "universe.toml"
    universe.write_text(DEMO_UNIVERSE + f'\n[plugins."{LOCAL}"]\nlookback_days = 7\nscale = 2\n')
    settings = dataclasses.replace(runtime.settings, plugins_dir=folder, universe_path=universe)
    rt = build_runtime(settings)
    assert rt.plugins.options[LOCAL] == {"lookback_days": 7, "scale": 2.0}
    c = make_client(rt)
    with c.client:
        body = c.get("/api/v1/pair/ETH/BTC", keys.personal).json()
    candles = rt.candles.get()
    pair = align(candles["ETH"], candles["BTC"])
    r = np.log(pair.close_a / pair.close_b)
    assert body["metrics"]["lookback_change"] == pytest.approx(2 * (r[-1] - r[-8]), abs=1e-12)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            f'[plugins."{LOCAL}"]\nlookbak = 7\n',
            f"[plugins.{LOCAL}] lookbak: not an option of plugin '{LOCAL}' "
            "(its options: lookback_days, scale)",
        ),
        (
            f'[plugins."{LOCAL}"]\nlookback_days = "a week"\n',
            f"[plugins.{LOCAL}] lookback_days must be an integer, got 'a week'",
        ),
        (
            "[plugins.nobody]\nx = 1\n",
            "[plugins.nobody]: no plugin named 'nobody' is loaded (see 'pairscreen plugins' "
            "for the names)",
        ),
    ],
)
def test_a_bad_plugin_table_stops_the_start(runtime, tmp_path, table, message):
    folder = tmp_path / "plugins"
    folder.mkdir()
    shutil.copy(PLUGINS_DIR / "hook_plugin_options.py", folder)
    universe = tmp_path / "universe.toml"
    universe.write_text(DEMO_UNIVERSE + "\n" + table)
    settings = dataclasses.replace(runtime.settings, plugins_dir=folder, universe_path=universe)
    with pytest.raises(PluginError) as refused:
        build_runtime(settings, migrate=False)
    assert str(refused.value) == message


def test_disabling_a_built_in_leaves_it_out_and_start_up_names_what_is_missing(setup, database_url):
    env, universe = setup
    off = {**env, "PAIRSCREEN_DISABLE_PLUGINS": f"volume,{LOCAL}"}
    plugins = listing(off, universe)
    assert "volume" not in plugins and LOCAL not in plugins
    assert "bands" in plugins
    renderer_off = {**env, "PAIRSCREEN_DISABLE_PLUGINS": "default_chart"}
    done = run_cli("--database-url", database_url, "screen", "run", "--no-sync", env=renderer_off)
    assert done.returncode == 2
    assert done.stderr == (
        "pairscreen: error: PAIRSCREEN_CHART_RENDERER=default: no chart renderer named "
        "'default' (known: none is loaded)\n"
    )
    typo = run_cli("plugins", env={**env, "PAIRSCREEN_DISABLE_PLUGINS": "volumes"})
    assert typo.returncode == 2
    assert "PAIRSCREEN_DISABLE_PLUGINS names 'volumes', which is not a plugin" in typo.stderr


@pytest.mark.slow
def test_demo_takes_a_universe_file(setup, tmp_path):
    env, universe = setup
    universe.write_text(DEMO_UNIVERSE + "\n[screen]\nhurst_below = 0.45\n")
    data = tmp_path / "data"
    done = run_cli(
        "--data-dir",
        str(data),
        "demo",
        "--no-serve",
        "--universe",
        str(universe),
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(data / "demo" / "pairscreen.sqlite3") as db:
        (payload,) = db.execute(
            "SELECT payload FROM screen_payload ORDER BY screen_id DESC LIMIT 1"
        ).fetchone()
    screen = json.loads(payload)
    assert screen["filter"]["thresholds"]["hurst_below"] == 0.45
    assert all(s["metrics"]["hurst"] < 0.45 for s in screen["survivors"])
