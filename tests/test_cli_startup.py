"""The command line reads the plugins' commands only when it may need them: for ``--help``
and for a command that is not a core one. A core command line (``users list``) is parsed
without loading them, which is what ``benchmarks/startup.py`` measures."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairscreen.cli import command_word, needs_plugin_commands
from tests.support.cli import newcomer_env, run_cli

CORE = {"users", "serve", "screen"}


@pytest.mark.parametrize(
    ("argv", "needed"),
    [
        (["users", "list"], False),
        (["--data-dir", "x", "users", "list"], False),
        (["--universe=u.toml", "-v", "screen", "run"], False),
        (["--log-format", "json", "serve"], False),
        ([], False),
        (["ntfy", "ping"], True),
        (["--data-dir", "users", "ntfy"], True),  # "users" is the folder, ntfy the command
        (["--help"], True),
        (["users", "--help"], True),
        (["-h"], True),
        (["--", "ntfy"], True),
    ],
)
def test_the_plugins_commands_are_needed_for_help_and_unknown_commands(argv, needed):
    assert needs_plugin_commands(argv, CORE) is needed


def test_the_command_word_skips_the_global_options_and_their_values():
    assert command_word(["--database-url", "sqlite:///x", "-q", "serve", "--port", "1"]) == "serve"
    assert command_word(["-v"]) is None


def test_a_core_command_does_not_call_the_command_hook(tmp_path: Path) -> None:
    """A plugin whose command hook leaves a mark: none after ``users list``, one after
    ``--help`` (which lists its group) and after its own command."""
    folder, mark = tmp_path / "plugins", tmp_path / "called"
    folder.mkdir()
    (folder / "marking.py").write_text(
        "from pathlib import Path\n"
        "from pairscreen import CommandSpec, hookimpl\n\n\n"
        "@hookimpl\ndef pairscreen_register_commands():\n"
        f"    with Path({str(mark)!r}).open('a') as f:\n"
        "        f.write('x')\n"
        "    return [CommandSpec('marking', 'hello', 'say hello', lambda args, settings: 0)]\n"
    )
    env = {**newcomer_env(tmp_path), "PAIRSCREEN_PLUGINS_DIR": str(folder)}
    core = run_cli("users", "list", env=env)  # a newcomer has no database yet: status 3
    assert core.returncode == 3 and "database" in core.stderr, core.stderr
    assert not mark.exists()
    shown = run_cli("--help", env=env)
    assert shown.returncode == 0 and "commands of the plugin local:marking.py" in shown.stdout
    assert mark.read_text() == "x"
    assert run_cli("marking", "hello", env=env).returncode == 0
    assert mark.read_text() == "xx"
