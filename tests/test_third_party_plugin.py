"""A third-party plugin adds a metric that shows up in /pair/{a}/{b} with no framework change.

The plugin is the metric example of ``docs/plugins.md``, installed as a real distribution with
an entry point in the ``pairscreen`` group (a dist-info folder on sys.path, as pip would leave
it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.plugin_system.registry import PluginError
from tests.conftest import make_client

ROOT = Path(__file__).resolve().parents[1]


def readme_plugin_source() -> str:
    doc = (ROOT / "docs" / "plugins.md").read_text()
    match = re.search(r"```python\n(# plugin: momentum_plugin.py\n.*?)```", doc, re.S)
    assert match, "the metric example of docs/plugins.md is missing"
    return match.group(1)


def install_distribution(site: Path, module: str, source: str, entry_name: str) -> None:
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[pairscreen]\n{entry_name} = {module}\n")


@pytest.fixture()
def installed_momentum(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    install_distribution(site, "momentum_plugin", readme_plugin_source(), "momentum")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PAIRSCREEN_LOAD_PLUGINS", "momentum")
    yield
    sys.modules.pop("momentum_plugin", None)


def test_entry_point_metric_appears_in_pair_snapshot(installed_momentum, runtime, keys):
    rt = build_runtime(runtime.settings)
    assert "momentum" in rt.plugins.metrics
    c = make_client(rt)
    with c.client:
        body = c.get("/api/v1/pair/ETH/BTC", keys.personal).json()
    closes = rt.candles.get()
    import numpy as np

    from pairscreen.engine.panels import align

    pair = align(closes["ETH"], closes["BTC"])
    r = np.log(pair.close_a / pair.close_b)
    assert body["metrics"]["momentum_30d"] == pytest.approx(r[-1] - r[-31], abs=1e-12)


def test_plugins_dir_metric_and_unlisted_entry_points_stay_out(
    installed_momentum, tmp_path, monkeypatch, runtime
):
    """The same metric installed as the entry point ``momentum`` and dropped in the plugins
    folder: with ``PAIRSCREEN_LOAD_PLUGINS=`` (empty) only the file loads; listed, the entry
    point loads too and the two clash."""
    folder = tmp_path / "local_plugins"
    folder.mkdir()
    (folder / "momentum_local.py").write_text(readme_plugin_source())
    monkeypatch.setenv("PAIRSCREEN_PLUGINS_DIR", str(folder))
    monkeypatch.setenv("PAIRSCREEN_LOAD_PLUGINS", "")
    settings = load_settings(data_dir=tmp_path, database_url=runtime.settings.database_url)
    rt = build_runtime(settings)
    assert rt.plugins.metrics.owner("momentum") == "local:momentum_local.py"
    assert rt.plugins.pm.get_plugin("momentum") is None  # the entry point stayed out
    monkeypatch.setenv("PAIRSCREEN_LOAD_PLUGINS", "momentum")
    listed = load_settings(data_dir=tmp_path, database_url=runtime.settings.database_url)
    with pytest.raises(PluginError, match="metric 'momentum' is registered twice"):
        build_runtime(listed)


def test_duplicate_metric_names_are_rejected(runtime):
    from pairscreen import MetricField, hookimpl

    class SameName:
        name = "variance_ratio"  # the built-in metric's name, with a field of its own
        fields = (MetricField("another_hurst"),)

        def compute(self, panel):
            raise AssertionError

    class Plugin:
        @hookimpl
        def pairscreen_register_metrics(self):
            return [SameName()]

    with pytest.raises(PluginError) as clash:
        build_runtime(runtime.settings, extra_plugins=(Plugin(),))
    assert str(clash.value).startswith(
        "metric 'variance_ratio' is registered twice: by 'mean_reversion' and by "
    )


def test_duplicate_metric_fields_are_rejected(runtime):
    from pairscreen import MetricField, hookimpl

    class Clash:
        name = "hurst_again"
        fields = (MetricField("hurst"),)

        def compute(self, panel):
            raise AssertionError

    class Plugin:
        @hookimpl
        def pairscreen_register_metrics(self):
            return [Clash()]

    # The metrics load (and clash) when the runtime is built, before any request.
    with pytest.raises(PluginError, match="'hurst' is provided by both"):
        build_runtime(runtime.settings, extra_plugins=(Plugin(),))


def test_failing_metric_is_left_out_not_fatal(runtime, keys):
    from pairscreen import MetricField, hookimpl

    class Broken:
        name = "broken"
        fields = (MetricField("broken_value"),)

        def compute(self, panel):
            raise ZeroDivisionError("plugin bug")

    class Plugin:
        @hookimpl
        def pairscreen_register_metrics(self):
            return [Broken()]

    rt = build_runtime(runtime.settings, extra_plugins=(Plugin(),))
    c = make_client(rt)
    with c.client:
        r = c.get("/api/v1/pair/ETH/BTC", keys.personal)
    assert r.status_code == 200
    assert "broken_value" not in r.json()["metrics"]
    database.close()
