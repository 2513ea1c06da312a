"""Meta-tests that keep the plugin boundary and the contract honest."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

import pairscreen.hookspecs as hookspecs
from pairscreen.config import Settings, load_settings
from pairscreen.plugins import BUILTIN_PLUGINS, load_plugins

ROOT = Path(__file__).resolve().parents[1]


def test_openapi_yaml_is_a_valid_3_0_spec():
    spec, _ = read_from_filename(str(ROOT / "openapi.yaml"))
    assert spec["openapi"].startswith("3.0")
    validate(spec)


def test_import_linter_contracts_hold():
    """setup.cfg's contracts: plugins use only the public API; the core never imports them."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--config", str(ROOT / "setup.cfg")], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_builtin_loads_and_implements_a_hook():
    pm = load_plugins(load_settings())
    for name in BUILTIN_PLUGINS:
        plugin = pm.get_plugin(name)
        assert plugin is not None, name
        assert pm.get_hookcallers(plugin), f"{name} implements no hook"


def test_every_hook_is_documented_and_tested():
    """Each hook spec has a docstring, a README entry and at least one test naming it."""
    readme = (ROOT / "README.md").read_text()
    tests = "\n".join(
        p.read_text() for p in (ROOT / "tests").rglob("*.py") if p.name != Path(__file__).name
    )
    plugins = "\n".join(p.read_text() for p in (ROOT / "plugins").rglob("*.py"))
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("pairscreen_"):
            continue
        assert (fn.__doc__ or "").strip(), f"{name} has no docstring"
        assert name in readme, f"{name} is not in the README"
        assert name in tests or name in plugins, f"{name} has no implementation or test"


def test_app_boots_and_resolves_every_operation(runtime):
    from pairscreen.app import create_app

    app = create_app(runtime)
    with app.test_client() as c:
        assert c.get("/api/v1/openapi.json").status_code == 200
        assert c.get("/api/v1/ui/").status_code == 200


def test_openapi_is_packaged_with_the_framework():
    from pairscreen.app import openapi_path

    assert openapi_path(Settings()).read_bytes() == (ROOT / "openapi.yaml").read_bytes()
