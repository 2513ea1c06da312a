"""The docs say what the code does: each test reads a figure or a name the docs quote and
compares it with the code, so a change to one without the other fails here.

Hook signatures shown in the docs, the settings and environment variables they name, the
command-line options they quote, and the structural figures of docs/architecture.md.
"""

from __future__ import annotations

import argparse
import configparser
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

import pairscreen.plugin_system.hookspecs as hookspecs
from pairscreen.cli import build_parser
from pairscreen.config import Settings, declarations
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import CHUNK_PAIRS

ROOT = Path(__file__).resolve().parents[1]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
SOURCES = sorted((ROOT / "pairscreen").rglob("*.py")) + sorted(
    (ROOT / "plugins" / "pairscreen_plugins").rglob("*.py")
)
# Variables the docs name that are not settings of the service.
NOT_SETTINGS = {"PAIRSCREEN_TEST_DATABASE_URL", "PAIRSCREEN_TEST_NOW", "PAIRSCREEN_BIN"}
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def texts(paths: list[Path]) -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in paths}


def hook_arguments() -> dict[str, set[str]]:
    return {
        name: set(inspect.signature(spec).parameters)
        for name, spec in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("pairscreen_")
    }


def test_every_hook_implementation_shown_takes_only_arguments_its_hook_offers():
    hooks = hook_arguments()
    shown = 0
    for path, text in texts([*DOCS, *SOURCES]).items():
        for name, params in re.findall(r"def (pairscreen_\w+)\(([^)]*)\)", text):
            if name not in hooks or path.name == "hookspecs.py":
                continue
            shown += 1
            for param in re.findall(r"(?:^|,)\s*\**(\w+)\s*(?=[:=,]|$)", params.strip()):
                if param == "self":
                    continue
                assert param in hooks[name], f"{path.name}: {name} has no argument {param!r}"
    assert shown >= 10


def test_the_register_hooks_offer_settings_and_options_as_the_docs_say():
    plugins_doc = (ROOT / "docs" / "plugins.md").read_text()
    for name, params in hook_arguments().items():
        if name.startswith("pairscreen_register_"):
            assert {"settings", "options"} <= params, name
    assert "offers `settings`" in plugins_doc and "as `options`" in plugins_doc


def built_in_option_variables() -> set[str]:
    """The environment variables the built-in plugins' options declare as overrides."""
    from pairscreen.config import Settings as Plain
    from pairscreen.plugin_system.loader import load_plugins
    from pairscreen.plugin_system.registry import Plugins

    plain = Plain(load_plugins=())
    declared = Plugins(load_plugins(plain), plain).declared_options.values()
    return {o.env for options in declared for o in options if o.env}


def test_every_variable_the_docs_and_docstrings_name_is_a_setting():
    variables = {declared.env for _, declared in declarations()} | built_in_option_variables()
    for path, text in texts([*DOCS, *SOURCES]).items():
        for name in set(re.findall(r"\bPAIRSCREEN_[A-Z_]*[A-Z]\b", text)):
            assert name in variables | NOT_SETTINGS, f"{path.relative_to(ROOT)} names {name}"


def test_every_settings_field_the_docs_name_exists():
    fields = {f.name for f in dataclasses.fields(Settings)}
    for path, text in texts(DOCS).items():
        for name in re.findall(r"`Settings\.(\w+)`", text):
            assert name in fields, f"{path.name} names Settings.{name}"


def options_of(parser: argparse.ArgumentParser, words: list[str]) -> set[str] | None:
    """The options of the command ``words`` (``["screen", "run"]``), global ones included."""
    found = {o for a in parser._actions for o in a.option_strings}
    for word in words:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or word not in sub.choices:
            return None
        parser = sub.choices[word]
        found |= {o for a in parser._actions for o in a.option_strings}
    return found


def test_every_command_option_the_docs_and_docstrings_quote_exists():
    parser = build_parser()
    quoted = re.compile(r"(?:pairscreen )?\b((?:[a-z]+ ){0,1}[a-z]+) \[?(--[a-z][a-z-]*)")
    checked = 0
    for path, text in texts([*DOCS, *SOURCES]).items():
        for command, option in quoted.findall(text):
            for words in (command.split(), command.split()[-1:]):
                options = options_of(parser, words)
                if options is not None:
                    checked += 1
                    assert option in options, f"{path.relative_to(ROOT)}: {command} {option}"
                    break
    assert checked >= 10


def contracts() -> list[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return [s for s in config.sections() if s.startswith("importlinter:contract:")]


def test_architecture_figures_are_the_code_s():
    text = (ROOT / "docs" / "architecture.md").read_text()
    said = re.search(r"(\w+) rules are enforced by import-linter", text)
    assert said and NUMBERS.index(said[1].lower()) == len(contracts())
    chunk = re.search(r"chunks of (\d+) pairs", text)
    assert chunk and int(chunk[1]) == CHUNK_PAIRS
    row = next(line for line in text.splitlines() if line.startswith("| the runtime |"))
    for field in dataclasses.fields(Runtime):
        assert f"`{field.name}`" in row, f"architecture.md does not list Runtime.{field.name}"
    # every domain package the layer table names exists and has its entry in the list below
    domain = next(line for line in text.splitlines() if line.startswith("| domain packages |"))
    named = re.findall(r"`(\w+)/`", domain.split("|")[2])
    assert {"screening", "screen_store", "screen_views"} <= set(named), named
    for name in named:
        assert (ROOT / "pairscreen" / name / "__init__.py").is_file(), name
        assert f"\n- `{name}/`: " in text, f"architecture.md has no entry for {name}/"


@pytest.mark.parametrize("phrase", ["has no `settings` argument", "no command-line option or"])
def test_the_old_contradictions_are_gone(phrase):
    for path, text in texts(DOCS).items():
        assert phrase not in text, f"{path.name} still says {phrase!r}"


def test_doc_examples_never_read_the_environment():
    """The README and the hook specs say a plugin never reads the environment."""
    doc = (ROOT / "docs" / "plugins.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", doc, re.S):
        assert "os.environ" not in block and "getenv" not in block, block[:80]


# ---------------------------------------------------------------------------
# The hook specifications' docstrings: docs/plugins.md's table and what they say of the code
# ---------------------------------------------------------------------------


def hook_specs() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(spec)
        for name, spec in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("pairscreen_")
    }


def documented_hooks(text: str) -> dict[str, tuple[list[str], str]]:
    """docs/plugins.md's hook table: hook -> (its arguments, what it returns)."""
    start = text.index("| Hook | Arguments | Returns |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        hook, arguments, returns = (cell.strip() for cell in line.strip("|").split("|"))
        rows[hook.strip("`")] = (re.findall(r"`(\w+)`", arguments), returns.strip("`"))
    return rows


def test_every_hook_is_in_the_docs_table_with_its_arguments_and_return():
    table = documented_hooks((ROOT / "docs" / "plugins.md").read_text(encoding="utf-8"))
    specs = hook_specs()
    assert set(table) == set(specs), "docs/plugins.md's hook table and hookspecs.py differ"
    for name, signature in specs.items():
        arguments, returns = table[name]
        assert arguments == list(signature.parameters), f"{name}: docs say {arguments}"
        assert returns == str(signature.return_annotation), f"{name}: docs say it returns {returns}"


def test_the_table_check_fails_on_a_wrong_argument():
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    wrong = text.replace(
        "| `pairscreen_peg_event_changed` | `event` |",
        "| `pairscreen_peg_event_changed` | `change` |",
    )
    assert wrong != text
    assert documented_hooks(wrong)["pairscreen_peg_event_changed"][0] == ["change"]
    assert documented_hooks(wrong)["pairscreen_peg_event_changed"][0] != list(
        hook_specs()["pairscreen_peg_event_changed"].parameters
    )


def docstring(hook: str) -> str:
    return " ".join(inspect.getdoc(getattr(hookspecs, hook)).split())


def said(hook: str, pattern: str) -> re.Match[str]:
    """The statement of ``hook``'s docstring that ``pattern`` finds (it must be there: a
    rewritten docstring updates the check with it)."""
    found = re.search(pattern, docstring(hook))
    assert found, f"{hook}'s docstring no longer says {pattern!r}"
    return found


def test_the_hookspecs_name_only_contracts_files_and_settings_that_exist():
    import pairscreen.contracts as contracts

    fields = {f.name for f in dataclasses.fields(Settings)}
    checked: dict[str, int] = {"contracts": 0, "files": 0, "settings": 0}
    for hook in hook_specs():
        text = docstring(hook)
        for name in re.findall(r":\w+:`~pairscreen\.contracts\.(\w+)", text):
            checked["contracts"] += 1
            assert name in contracts.__all__, f"{hook} refers to pairscreen.contracts.{name}"
        for name, path in re.findall(r"``(\w+)`` in ``(pairscreen/[\w/]+\.py)``", text):
            checked["files"] += 1
            source = (ROOT / path).read_text(encoding="utf-8")
            assert f"class {name}" in source, f"{hook}: {path} has no {name}"
        for listed in re.findall(r"from ``settings`` \(([^)]*)\)", text):
            for name in re.findall(r"``(\w+)``", listed):
                checked["settings"] += 1
                assert name in fields, f"{hook} names the setting {name}, which is gone"
    assert checked["contracts"] >= 4 and checked["files"] >= 1, checked


def test_the_hookspecs_defaults_are_the_code_s():
    from pairscreen.config import COMPONENTS
    from pairscreen.universe import DEFAULT_FILTER

    named = {
        "strategy": said("pairscreen_register_strategies", r"\(``(\w+)`` by default\)")[1],
        "scorer": said("pairscreen_register_scorers", r"the built-in one is ``(\w+)``")[1],
        "chart_renderer": said(
            "pairscreen_register_chart_renderers", r"\(``(\w+)`` unless configured\)"
        )[1],
    }
    assert named == {c.key: c.builtin for c in COMPONENTS if c.key in named}
    assert said("pairscreen_register_filters", r"the built-in one is ``(\w+)``")[1] == (
        DEFAULT_FILTER
    )


def test_the_notifier_hookspec_says_the_kinds_the_code_accepts_and_ships():
    from pairscreen.plugin_system.channel_kinds import KIND_NAME
    from pairscreen.plugin_system.loader import load_plugins
    from pairscreen.plugin_system.registry import Plugins

    low, high = map(
        int, said("pairscreen_register_notifiers", r"A kind is (\d+) to (\d+)").groups()
    )
    assert KIND_NAME.match("a" * high) and not KIND_NAME.match("a" * (high + 1))
    assert KIND_NAME.match("a" * low) and not KIND_NAME.match("a" * (low - 1))
    listed = said("pairscreen_register_notifiers", r"The built-in kinds \(([^)]*)\)")[1]
    settings = Settings()
    kinds = Plugins(load_plugins(settings), settings).channel_kinds
    assert re.findall(r"``(\w+)``", listed) == list(kinds.notifiers)


def test_the_commands_hookspec_names_core_commands_that_exist():
    listed = said("pairscreen_register_commands", r"a core command \(([^)]*)\)")[1]
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in re.findall(r"``(\w+)``", listed):
        assert name in sub.choices, f"register_commands names {name!r}, no core command"


def test_a_raising_metric_is_left_out_of_a_live_pair_and_stops_screen_and_evaluate():
    """What ``pairscreen_register_metrics`` says of a raising metric is what the engine does:
    the live ``/pair`` path (``compute_metrics``, not strict) leaves its fields out and names
    it; the screen's and ``evaluate``'s path (strict) raises ``PluginFailed``, which the
    commands turn into the exit status the docstring names."""
    import numpy as np
    import pluggy

    from pairscreen.cli import exits
    from pairscreen.contracts import MetricField, hookimpl
    from pairscreen.engine.evaluate import compute_metrics
    from pairscreen.plugin_system.failures import PluginFailed
    from pairscreen.plugin_system.registry import Plugins
    from pairscreen.testing import pair_panel

    said("pairscreen_register_metrics", r"A metric that raises during a live ``/pair`` is logged")
    left_out = said("pairscreen_register_metrics", r"its fields are left out of that response")
    stops = said(
        "pairscreen_register_metrics",
        r"during ``screen run`` or ``evaluate`` it stops the command with the \"(.+?)\" status",
    )

    class Broken:
        name = "broken"
        fields = (MetricField("broken_value"),)

        def compute(self, panel):
            raise ZeroDivisionError("division by zero")

    class Shaky:
        @hookimpl
        def pairscreen_register_metrics(self):
            return [Broken()]

    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    pm.register(Shaky(), name="shaky")
    plugins = Plugins(pm, Settings())
    panel = pair_panel(np.linspace(10, 20, 400), np.linspace(20, 10, 400))
    live = compute_metrics(plugins, panel)
    assert left_out and "broken_value" not in live.values
    assert "broken" in live.missing["broken_value"]
    with pytest.raises(PluginFailed):
        compute_metrics(plugins, panel, strict=True)
    source = inspect.getsource(exits)
    assert re.search(rf"PLUGIN_FAILED = {exits.PLUGIN_FAILED}\s+# a plugin raised", source)
    assert stops[1] == "plugin failed"
