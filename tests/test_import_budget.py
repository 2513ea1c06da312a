"""Start-up stays light: nothing heavy is imported until a computation needs it.

Every CLI command, every forked screen worker and every server process pays for what
``import pairscreen``, the built-in plugins and the runtime import. scipy.stats alone (pulled
in by statsmodels) costs about a second, so these tests fail when a heavy library is imported
on those paths. Checked through ``sys.modules`` in a fresh interpreter, not by timing, so a
busy machine cannot make them flaky; ``benchmarks/startup.py`` prints the times.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import newcomer_env

# Libraries a start-up path must not import: a computation (a metric, a chart, the evaluation,
# the Dask executor) imports what it needs when it runs.
HEAVY = (
    "scipy.stats",
    "scipy.special",
    "statsmodels",
    "arch",
    "pandas",
    "matplotlib",
    "dask",
    "distributed",
)
# Only serving needs the HTTP stack.
HTTP = ("connexion", "starlette", "uvicorn")


def heavy_modules_after(script: str, env: dict[str, str]) -> list[str]:
    """Run ``script`` in a fresh interpreter; the heavy and HTTP modules it left imported."""
    probe = (
        f"{script}\n"
        "import json, sys\n"
        f"print(json.dumps(sorted(m for m in {HEAVY + HTTP!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture()
def env(tmp_path: Path, demo_template: Path) -> dict[str, str]:
    """A newcomer's environment pointed at a copy of the demo database."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(demo_template, data_dir / "pairscreen.sqlite3")
    return {**newcomer_env(tmp_path), "PAIRSCREEN_DATA_DIR": str(data_dir)}


def test_importing_the_package_and_the_built_in_plugins_is_light(env: dict[str, str]) -> None:
    script = "import pairscreen, pairscreen.cli\nimport pairscreen.plugin_system.loader"
    assert heavy_modules_after(script, env) == []


def test_building_the_runtime_of_a_screen_run_is_light(env: dict[str, str]) -> None:
    """What ``screen run`` does before its first chunk: settings, database, plugins (every
    built-in registered and checked), universe, and the screening modules."""
    script = (
        "from pairscreen.config import load_settings\n"
        "from pairscreen.bootstrap import build_runtime\n"
        "import pairscreen.screening.screen, pairscreen.engine.executors\n"
        "rt = build_runtime(load_settings())\n"
        "assert len(rt.plugins.metrics) and len(rt.plugins.chart_renderers)\n"
    )
    assert heavy_modules_after(script, env) == []


@pytest.mark.parametrize(
    "argv", [["--help"], ["users", "list"], ["screen", "run", "--help"], ["keys", "list", "x"]]
)
def test_light_commands_import_nothing_heavy(env: dict[str, str], argv: list[str]) -> None:
    script = (
        "import sys\n"
        "from pairscreen.cli import main\n"
        f"sys.argv = ['pairscreen', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    assert heavy_modules_after(script, env) == []


def test_a_computation_imports_only_what_it_needs(env: dict[str, str]) -> None:
    """ADF p-values need MacKinnon's tables and the normal CDF, not scipy.stats or pandas."""
    script = (
        "import numpy as np\n"
        "from pairscreen_plugins.metrics._adf import adf_pvalues\n"
        "x = np.cumsum(np.random.default_rng(1).standard_normal((3, 300)), axis=1)\n"
        "assert np.isfinite(adf_pvalues(x)).all()\n"
    )
    assert heavy_modules_after(script, env) == ["scipy.special"]


def test_mackinnon_tables_equal_statsmodels() -> None:
    from pairscreen_plugins.metrics import _mackinnon as ours
    from statsmodels.tsa import adfvalues

    for name in ("tau_c_smallp", "tau_c_largep"):
        theirs = [[float(v) for v in row] for row in getattr(adfvalues, name)]
        assert [list(row) for row in getattr(ours, name.upper())] == theirs
    for name in ("tau_star_c", "tau_max_c", "tau_min_c"):
        assert list(getattr(ours, name.upper())) == [float(v) for v in getattr(adfvalues, name)]
