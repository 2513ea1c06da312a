"""Meta-tests that keep the plugin boundary and the contract honest."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pluggy
import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

import pairscreen.plugin_system.hookspecs as hookspecs
from pairscreen.config import Settings, load_settings
from pairscreen.plugin_system.loader import BUILTIN_PLUGINS, load_plugins, new_plugin_manager
from tests.support.plugin_files import plugin_file

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
    for name, _module in BUILTIN_PLUGINS:
        plugin = pm.get_plugin(name)
        assert plugin is not None, name
        assert pm.get_hookcallers(plugin), f"{name} implements no hook"


def test_every_hook_is_documented() -> None:
    """Each hook spec has a docstring and a README entry."""
    readme = (ROOT / "README.md").read_text()
    for name in hookspec_names():
        spec = getattr(hookspecs, name)
        assert (spec.__doc__ or "").strip(), f"{name} has no docstring"
        assert name in readme, f"{name} is not in the README"


# ---------------------------------------------------------------------------
# Every hook has a test through a test plugin (datasette's test_plugin_hooks_have_tests)
# ---------------------------------------------------------------------------


def hookspec_names() -> list[str]:
    """The hooks ``plugin_system/hookspecs.py`` specifies, as the plugin manager knows them."""
    pm = new_plugin_manager()
    return sorted(
        name
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller) and caller.spec is not None
    )


def collected_test_functions() -> dict[str, ast.FunctionDef]:
    """The test functions pytest collects from ``tests/``, by name (module level and in
    ``Test*`` classes of ``test_*.py`` files)."""
    found: dict[str, ast.FunctionDef] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        nodes = list(tree.body)
        for cls in tree.body:
            if isinstance(cls, ast.ClassDef) and cls.name.startswith("Test"):
                nodes.extend(cls.body)
        for node in nodes:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found[node.name] = node
    return found


def hooks_of_test_plugins() -> dict[str, set[str]]:
    """For each file of ``tests/plugins/``: the hooks it implements, as pluggy reads it."""
    implemented: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests" / "plugins").glob("*.py")):
        if path.name.startswith("_"):
            continue
        pm = new_plugin_manager()
        module = plugin_file(path.stem)
        pm.register(module)
        implemented[path.stem] = {caller.name for caller in pm.get_hookcallers(module) or ()}
    return implemented


def hook_test_problems(
    hook: str, tests: dict[str, ast.FunctionDef], plugin_hooks: dict[str, set[str]]
) -> list[str]:
    """Why ``hook`` is not tested through a test plugin (empty when it is).

    The test is ``test_hook_<hook>`` (or ``test_hook_<hook without "pairscreen_">``),
    optionally followed by ``_<more>``; its source must name a file of ``tests/plugins/``
    that implements the hook.
    """
    prefixes = {f"test_hook_{hook}", f"test_hook_{hook.removeprefix('pairscreen_')}"}
    named = [
        node
        for name, node in tests.items()
        if any(name == p or name.startswith(f"{p}_") for p in prefixes)
    ]
    if not named:
        return [f"no test named test_hook_{hook} under tests/"]
    files = sorted(stem for stem, hooks in plugin_hooks.items() if hook in hooks)
    if not files:
        return [f"no plugin file under tests/plugins/ implements {hook}"]
    used = [node.name for node in named if any(stem in ast.unparse(node) for stem in files)]
    if not used:
        return [f"test_hook_{hook} registers none of the test plugins implementing it: {files}"]
    return []


@pytest.mark.parametrize("hook", hookspec_names())
def test_every_hook_has_a_test_through_a_test_plugin(hook: str) -> None:
    problems = hook_test_problems(hook, collected_test_functions(), hooks_of_test_plugins())
    assert not problems, problems


def test_the_hook_test_check_fails_when_a_test_is_missing() -> None:
    """The meta-test above can fail: a missing, misnamed or plugin-less test is reported."""

    def fn(name: str, body: str = "pass") -> ast.FunctionDef:
        node = ast.parse(f"def {name}():\n    {body}").body[0]
        assert isinstance(node, ast.FunctionDef)
        return node

    plugins = {"hook_x": {"pairscreen_register_x"}}
    good = {"test_hook_pairscreen_register_x": fn("test_hook_pairscreen_register_x", "'hook_x'")}
    assert hook_test_problems("pairscreen_register_x", good, plugins) == []
    assert hook_test_problems("pairscreen_register_y", good, plugins) == [
        "no test named test_hook_pairscreen_register_y under tests/"
    ]
    prefix_only = {"test_hook_pairscreen_register_xs": fn("test_hook_pairscreen_register_xs")}
    assert hook_test_problems("pairscreen_register_x", prefix_only, plugins)
    no_plugin = {"test_hook_register_x": fn("test_hook_register_x")}
    assert "registers none" in hook_test_problems("pairscreen_register_x", no_plugin, plugins)[0]
    assert hook_test_problems("pairscreen_register_x", good, {}) == [
        "no plugin file under tests/plugins/ implements pairscreen_register_x"
    ]


def test_app_boots_and_resolves_every_operation(runtime):
    from pairscreen.app import create_app

    app = create_app(runtime)
    with app.test_client() as c:
        assert c.get("/api/v1/openapi.json").status_code == 200
        assert c.get("/api/v1/ui/").status_code == 200


def test_openapi_is_packaged_with_the_framework():
    from pairscreen.app import openapi_path

    assert openapi_path(Settings()).read_bytes() == (ROOT / "openapi.yaml").read_bytes()
