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
