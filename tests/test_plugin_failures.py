"""A broken plugin is named at start-up, and a plugin failing mid-screen stops the screen.

Start-up: ``serve``, ``worker``, ``screen run`` and ``demo`` resolve every chosen component
and check every filter rule before they serve or write, and fail in one line naming what is
wrong. A metric that raises or answers the wrong shape during ``screen run`` stops it with
the "plugin failed" status, naming the plugin and the metric, and the previous screen stays
published; ``--verbose`` shows the traceback. A live ``/pair`` leaves the metric's fields
out and still answers 200. Each command runs as a person runs it, in a subprocess.
"""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from pairscreen.bootstrap import build_runtime
from pairscreen.db.connection import connect, database
from pairscreen.db.models import Screen
from tests.conftest import make_client
from tests.support.cli import newcomer_env, run_cli

USAGE, PLUGIN_FAILED = 2, 6

RAISING_METRIC = """
import numpy as np

from pairscreen import MetricField, hookimpl


class Broken:
    name = "broken"
    fields = (MetricField("broken_value", "number", "a number the metric cannot compute"),)

    def compute(self, panel):
        return {"broken_value": BEHAVIOUR}


@hookimpl
def pairscreen_register_metrics():
    return [Broken()]
"""

RULE_WITHOUT_EXPLAIN = """
import numpy as np

from pairscreen import hookimpl


class Always:
    code = "always"
    inputs = ()

    def check(self, metrics, context):
        return np.ones(len(context.history_days), dtype=bool)


class Careless:
    name = "careless"
    thresholds = {}
    rules = (Always(),)


@hookimpl
def pairscreen_register_filters():
    return [Careless()]
"""


def one_line(done: subprocess.CompletedProcess[str], status: int, text: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == status, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("pairscreen: error: "), done.stderr
    assert text in done.stderr, done.stderr


def screen_ids(database_url: str) -> list[int]:
    """The ids of the screens published in ``database_url`` (bound here: an earlier test may
    have left the proxy on its own database)."""
    connect(database_url)
    with database.connection_context():
        return [row.id for row in Screen.select(Screen.id).order_by(Screen.id)]


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "plugins"
    folder.mkdir()
    return {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(folder)}


def plugin(env: dict[str, str], name: str, source: str) -> None:
    Path(env["PAIRSCREEN_PLUGINS_DIR"], name).write_text(textwrap.dedent(source))


@pytest.mark.parametrize(
    ("variable", "value", "text"),
    [
        (
            "PAIRSCREEN_STRATEGY",
            "acumulation",
            "PAIRSCREEN_STRATEGY=acumulation: no backtest strategy named 'acumulation' "
            "(known: accumulation, kalman_band, ou_optimal)",
        ),
        (
            "PAIRSCREEN_CHART_RENDERER",
            "fancy",
            "PAIRSCREEN_CHART_RENDERER=fancy: no chart renderer named 'fancy' (known: default)",
        ),
        ("PAIRSCREEN_SCORER", "scroe", "no scorer named 'scroe' (known: score)"),
    ],
)
def test_a_misspelt_component_fails_serve_at_start_up(env, database_url, variable, value, text):
    with socket.socket() as probe:  # a free port, released for serve to take
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    done = run_cli(
        "--database-url", database_url, "serve", "--port", port, env={**env, variable: value}
    )
    one_line(done, USAGE, text)
    assert "pairscreen serving" not in done.stdout  # nothing was served


@pytest.mark.parametrize("command", [["worker"], ["screen", "run", "--no-sync"]])
def test_a_misspelt_strategy_fails_the_worker_and_the_screen_before_they_write(
    env, database_url, command
):
    before = screen_ids(database_url)
    done = run_cli(
        "--database-url",
        database_url,
        *command,
        env={**env, "PAIRSCREEN_STRATEGY": "acumulation"},
        timeout=60,
    )
    one_line(done, USAGE, "no backtest strategy named 'acumulation'")
    assert screen_ids(database_url) == before


def test_a_misspelt_strategy_stops_the_demo_before_it_replaces_the_old_one(env, tmp_path):
    data = tmp_path / "data"
    old = data / "demo" / "keep.txt"
    old.parent.mkdir(parents=True)
    old.write_text("the previous demo")
    done = run_cli(
        "--data-dir", str(data), "demo", "--no-serve", env={**env, "PAIRSCREEN_STRATEGY": "x"}
    )
    one_line(done, USAGE, "PAIRSCREEN_STRATEGY=x: no backtest strategy named 'x'")
    assert old.read_text() == "the previous demo"


def test_a_rule_without_explain_is_named_at_start_up(env, database_url, tmp_path):
    plugin(env, "careless.py", RULE_WITHOUT_EXPLAIN)
    before = screen_ids(database_url)
    done = run_cli("--database-url", database_url, "screen", "run", "--no-sync", env=env)
    one_line(
        done,
        USAGE,
        "plugin 'local:careless.py': screen filter 'careless': rule 'always' has no explain",
    )
    assert screen_ids(database_url) == before


@pytest.mark.parametrize(
    ("behaviour", "problem"),
    [
        ("1 / 0", "metric 'broken' raised ZeroDivisionError: division by zero"),
        (
            "np.zeros((panel.n_pairs, 2))",
            "metric 'broken' answered field 'broken_value' with shape (",
        ),
    ],
)
def test_a_failing_metric_stops_the_screen_and_keeps_the_previous_one(
    env, database_url, behaviour, problem
):
    plugin(env, "shaky.py", RAISING_METRIC.replace("BEHAVIOUR", behaviour))
    before = screen_ids(database_url)
    assert before, "the demo database has a published screen"
    done = run_cli("--database-url", database_url, "screen", "run", "--no-sync", env=env)
    one_line(done, PLUGIN_FAILED, f"plugin 'local:shaky.py' failed: {problem}")
    assert "--verbose" in done.stderr
    assert screen_ids(database_url) == before  # nothing published, the previous screen still served
    verbose = run_cli(
        "--database-url", database_url, "--verbose", "screen", "run", "--no-sync", env=env
    )
    assert verbose.returncode == PLUGIN_FAILED
    assert "Traceback" in verbose.stderr and "shaky.py" in verbose.stderr
    assert "def compute" in verbose.stderr or "compute" in verbose.stderr
    assert screen_ids(database_url) == before


def test_a_failing_metric_leaves_its_fields_out_of_a_live_pair(
    runtime, keys, tmp_path, monkeypatch
):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "shaky.py").write_text(RAISING_METRIC.replace("BEHAVIOUR", "1 / 0"))
    rt = build_runtime(dataclasses.replace(runtime.settings, plugins_dir=folder))
    assert rt.plugins.metrics.owner("broken") == "local:shaky.py"
    c = make_client(rt)
    with c.client:
        r = c.get("/api/v1/pair/ETH/BTC", keys.personal)
    assert r.status_code == 200
    metrics = r.json()["metrics"]
    assert "broken_value" not in metrics and "position" in metrics


def test_a_failing_metric_stops_evaluate_as_it_stops_the_screen(env, database_url):
    """``evaluate`` replays the screen: a metric that raises stops it with the same status
    and words, instead of counting the pairs it could not compute as rejected."""
    plugin(env, "shaky.py", RAISING_METRIC.replace("BEHAVIOUR", "1 / 0"))
    argv = ("--database-url", database_url, "evaluate", "--every", "400", "--horizon", "30")
    done = run_cli(*argv, "--sample", "6", env=env, timeout=120)
    one_line(
        done,
        PLUGIN_FAILED,
        "plugin 'local:shaky.py' failed: metric 'broken' raised ZeroDivisionError: "
        "division by zero",
    )
    assert done.stdout == ""  # no report from a replay with a metric missing
