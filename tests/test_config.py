"""One configuration: every setting declared once in ``pairscreen/config.py``, read once, and
documented by a table that cannot drift from the declarations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pairscreen
from pairscreen import hookimpl
from pairscreen.cli import build_parser, main
from pairscreen.cli.common import settings_of
from pairscreen.config import (
    Settings,
    SettingsError,
    declarations,
    environ_of,
    load_settings,
    markdown_table,
)
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import COMPONENT_KEYS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "configuration.md"
TABLE = re.compile(
    r"<!-- settings table: generated from pairscreen/config.py -->\n(.*)"
    r"<!-- end of settings table -->",
    re.S,
)


def test_the_docs_table_is_the_declarations():
    found = TABLE.search(DOCS.read_text(encoding="utf-8"))
    assert found, f"{DOCS} has lost its settings table markers"
    assert found.group(1) == markdown_table(), (
        "docs/configuration.md disagrees with pairscreen/config.py: regenerate the table with "
        'python -c "from pairscreen.config import markdown_table; print(markdown_table())"'
    )


def test_every_field_is_declared_once_with_its_own_variable_and_flag():
    declared = list(declarations())
    # every field but the plugin options' variables, which the plugins declare
    fields = [n for n in Settings.__dataclass_fields__ if n != "plugin_variables"]
    assert [f.name for f, _ in declared] == fields
    envs = [d.env for _, d in declared]
    flags = [d.flag for _, d in declared if d.flag]
    assert len(set(envs)) == len(envs) and len(set(flags)) == len(flags)
    assert all(e == "DATABASE_URL" or e.startswith("PAIRSCREEN_") for e in envs)
    assert all(d.help for _, d in declared)
    table = markdown_table()
    assert all(f"| `{e}` |" in table for e in envs)


def test_the_environment_is_read_by_config_only():
    """No module of the framework or of the built-in plugins reads the environment itself,
    and plugins reach settings through their hooks, not through the config module. The clock
    reads its shift itself: it sits below every layer, the database layer included."""
    readers = {ROOT / "pairscreen" / "config.py", ROOT / "pairscreen" / "clock.py"}
    offenders = []
    for folder in (ROOT / "pairscreen", ROOT / "plugins" / "pairscreen_plugins"):
        for path in folder.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if path not in readers and re.search(r"os\.environ|getenv|from os import", text):
                offenders.append(str(path.relative_to(ROOT)))
            if folder.name == "pairscreen_plugins" and "pairscreen.config" in text:
                offenders.append(f"{path.relative_to(ROOT)} imports pairscreen.config")
    assert offenders == []


def test_values_come_from_keywords_then_flags_then_environment_then_defaults():
    env = {"PAIRSCREEN_PORT": "9000", "PAIRSCREEN_HOST": "0.0.0.0", "PAIRSCREEN_WORKERS": "3"}
    settings = load_settings(env, flags={"port": "9100", "host": "10.0.0.1"}, host="::1")
    assert (settings.host, settings.port, settings.workers) == ("::1", 9100, 3)
    assert load_settings({}).port == 8000


def test_an_empty_variable_is_unset_except_where_empty_means_something():
    settings = load_settings(
        {"PAIRSCREEN_UNIVERSE": "", "PAIRSCREEN_WINDOW_DAYS": "", "PAIRSCREEN_LOAD_PLUGINS": ""}
    )
    assert settings.universe_path is None and settings.window_days == 540
    assert settings.load_plugins == ()
    assert load_settings({}).load_plugins is None  # every installed plugin
    assert load_settings({"PAIRSCREEN_LOAD_PLUGINS": " a, ,b "}).load_plugins == ("a", "b")


def test_the_database_defaults_to_a_file_in_the_data_folder(tmp_path):
    settings = load_settings({"PAIRSCREEN_DATA_DIR": str(tmp_path)})
    assert settings.data_dir == tmp_path
    assert settings.database_url == f"sqlite:///{tmp_path / 'pairscreen.sqlite3'}"
    assert load_settings({"DATABASE_URL": "postgresql://db/x"}).database_url == "postgresql://db/x"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"PAIRSCREEN_LOCK_TTL": "abc"},
            "PAIRSCREEN_LOCK_TTL must be a positive number of seconds, got 'abc'",
        ),
        (
            {"PAIRSCREEN_OUTBOX_LEASE": "-5"},
            "PAIRSCREEN_OUTBOX_LEASE must be a positive number of seconds, got '-5'",
        ),
        (
            {"PAIRSCREEN_WINDOW_DAYS": "1.5"},
            "PAIRSCREEN_WINDOW_DAYS must be a whole number, at least 1, got '1.5'",
        ),
        ({"PAIRSCREEN_PORT": "70000"}, "PAIRSCREEN_PORT must be a TCP port (1-65535), got '70000'"),
        (
            {"PAIRSCREEN_EXECUTOR": "ray"},
            "PAIRSCREEN_EXECUTOR must be one of local, dask, got 'ray'",
        ),
        ({"PAIRSCREEN_WORKER_WAIT": "maybe"}, "PAIRSCREEN_WORKER_WAIT must be one of 1, true"),
    ],
)
def test_a_bad_value_names_its_variable(env, message):
    with pytest.raises(SettingsError) as bad:
        load_settings(env)
    assert str(bad.value).startswith(message)


def test_the_command_line_reports_a_bad_setting_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PAIRSCREEN_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PAIRSCREEN_LOCK_TTL", "abc")
    assert main(["db", "upgrade"]) == 2
    assert capsys.readouterr().err == (
        "pairscreen: error: PAIRSCREEN_LOCK_TTL must be a positive number of seconds, got 'abc'\n"
    )
    monkeypatch.delenv("PAIRSCREEN_LOCK_TTL")
    assert main(["worker", "--lock-ttl", "0"]) == 2
    assert capsys.readouterr().err == (
        "pairscreen: error: --lock-ttl must be a positive number of seconds, got '0'\n"
    )


def test_command_flags_override_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PAIRSCREEN_DATA_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("PAIRSCREEN_WORKER_LOCK_TTL", "30")
    monkeypatch.setenv("PAIRSCREEN_DELIVER_EVERY", "4")
    args = build_parser().parse_args(
        ["--data-dir", str(tmp_path / "flag"), "worker", "--wait", "--lock-ttl", "90"]
    )
    settings = settings_of(args)
    assert settings.data_dir == tmp_path / "flag"
    assert (settings.worker_wait, settings.worker_lock_ttl, settings.deliver_every) == (
        True,
        90.0,
        4.0,
    )
    assert settings_of(build_parser().parse_args(["worker"])).worker_wait is False


def test_the_environment_of_settings_reads_back_as_the_same_settings(tmp_path):
    settings = load_settings(
        {},
        data_dir=tmp_path,
        universe=tmp_path / "u.toml",
        load_plugins=("a", "b"),
        worker_wait=True,
        lock_ttl_seconds=12.5,
    )
    text = {k: v for k, v in environ_of(settings).items() if v is not None}
    assert load_settings(text) == settings


def test_secrets_are_not_printed():
    settings = load_settings(
        {
            "PAIRSCREEN_SMTP_URL": "smtp://u:hunter2@mail",
            "PAIRSCREEN_TELEGRAM_TOKEN": "123:tok",
            "PAIRSCREEN_WEBHOOK_SECRET": "whsec",
        }
    )
    assert settings.plugin_variable("PAIRSCREEN_SMTP_URL") == "smtp://u:hunter2@mail"
    shown = repr(settings)
    assert "hunter2" not in shown and "123:tok" not in shown and "whsec" not in shown


class Configured:
    """Asks for the settings."""

    @hookimpl
    def pairscreen_register_scorers(self, settings: Settings) -> list:
        return [_scorer(f"scorer-{settings.scorer}")]


def _scorer(name: str) -> object:
    """A scorer named ``name`` (it satisfies the Scorer Protocol; its scores are unused)."""
    return type("Named", (), {"name": name, "score": lambda self, metrics: None})()


class Unconfigured:
    """Does not: the argument is opt-in."""

    @hookimpl
    def pairscreen_register_scorers(self) -> list:
        return [_scorer("plain")]


def test_register_hooks_hand_the_settings_to_the_plugins_that_ask():
    pm = new_plugin_manager()
    pm.register(Configured())
    pm.register(Unconfigured())
    scorers = Plugins(pm, load_settings({"PAIRSCREEN_SCORER": "mine"})).scorers
    assert sorted(s.name for s in scorers) == ["plain", "scorer-mine"]


def test_settings_are_part_of_the_public_api():
    assert pairscreen.Settings is Settings
    assert "Settings" in pairscreen.__all__


PLUGIN_OPTIONS = re.compile(
    r"<!-- plugin options table: generated from the plugins' declarations -->\n(.*)"
    r"<!-- end of plugin options table -->",
    re.S,
)


def test_the_docs_plugin_options_table_is_the_built_ins_declarations():
    from pairscreen.plugin_system.options_table import builtin_options_markdown

    found = PLUGIN_OPTIONS.search(DOCS.read_text(encoding="utf-8"))
    assert found, f"{DOCS} has lost its plugin options table markers"
    table = builtin_options_markdown()
    assert '| `[plugins.kalman]` | `fit` | string | `"fixed"` |' in table
    assert found.group(1) == table, (
        "docs/configuration.md disagrees with the plugins' declared options: regenerate with "
        'python -c "from pairscreen.plugin_system.options_table import '
        'builtin_options_markdown; print(builtin_options_markdown())"'
    )


COMPONENTS_TABLE = re.compile(
    r"<!-- components table: generated from pairscreen/config.py COMPONENTS -->\n(.*)"
    r"<!-- end of components table -->",
    re.S,
)


def test_the_docs_components_table_is_the_declarations():
    from pairscreen.config import COMPONENTS, components_markdown

    found = COMPONENTS_TABLE.search(DOCS.read_text(encoding="utf-8"))
    assert found, f"{DOCS} has lost its components table markers"
    assert found.group(1) == components_markdown()
    # every [components] key has its setting, named as the declaration says
    variables = {d.env for _, d in declarations()}
    assert {c.env for c in COMPONENTS} <= variables
    assert [c.key for c in COMPONENTS] == list(COMPONENT_KEYS)
