"""The complete plugin project of ``docs/plugins.md`` passes its own test, with the kit.

The project's files are the ``# project: <path>`` blocks of the page. Its module is
installed as pip would leave it (the module and a dist-info folder with the entry point on
the path), and its test runs under pytest in a subprocess, in the project's folder, exactly
as its author runs it. A slow test installs pairscreen as the README says and type-checks
the project with ``mypy --strict``: a plugin sees pairscreen's types.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```(?:python|toml)\n# project: ([\w./-]+)\n(.*?)```", re.S)


def write_project(folder: Path) -> dict[str, Path]:
    files = {name: text for name, text in BLOCK.findall((ROOT / "docs" / "plugins.md").read_text())}
    assert set(files) == {"pyproject.toml", "pairscreen_spread.py", "tests/test_spread.py"}
    written = {}
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written[name] = path
    return written


def installed(project: Path, site: Path) -> None:
    """The project's module and entry point on ``site``, as ``pip install`` leaves them."""
    import tomllib

    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    site.mkdir(parents=True, exist_ok=True)
    (site / "pairscreen_spread.py").write_text((project / "pairscreen_spread.py").read_text())
    info = site / f"pairscreen_spread-{meta['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n"
    )
    points = meta["entry-points"]["pairscreen"]
    (info / "entry_points.txt").write_text(
        "[pairscreen]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
    )


def test_the_example_plugin_project_passes_its_own_test(tmp_path: Path) -> None:
    project = tmp_path / "pairscreen-spread"
    write_project(project)
    site = tmp_path / "site"
    installed(project, site)
    # The shell's PAIRSCREEN_* are left in, and two that would break the project's test if
    # read (no entry-point plugins; a strategy that does not exist): the kit ignores them.
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(tmp_path)} | {
        "PAIRSCREEN_LOAD_PLUGINS": "",
        "PAIRSCREEN_STRATEGY": "no_such_strategy",
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


@pytest.mark.slow
def test_a_plugin_project_type_checks_against_pairscreen(tmp_path: Path) -> None:
    """pairscreen installed as the README says (editable, strict mode), in a fresh
    environment whose other packages are this one's: mypy --strict sees its types."""
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e . --config-settings editable_mode=strict" in readme
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies (and pip) come from this environment.
    Path(purelib, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [
            str(python), "-m", "pip", "install", "-q", "--no-deps",
            "-e", str(ROOT), "--config-settings", "editable_mode=strict",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    project = tmp_path / "pairscreen-spread"
    write_project(project)
    checked = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python),
            "--no-incremental", "--ignore-missing-imports", "pairscreen_spread.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    wrong = project / "wrong.py"
    wrong.write_text("from pairscreen import MetricField\n\nfield: MetricField = 3\n")
    refused = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python),
            "--no-incremental", "wrong.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert refused.returncode == 1 and "MetricField" in refused.stdout, refused.stdout
