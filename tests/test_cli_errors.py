"""Every error of the command line is one line on stderr with its own exit status, never a
traceback; each case runs as a person runs it, in a subprocess."""

from __future__ import annotations

import argparse
import fcntl
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from pairscreen import clock
from pairscreen.cli import build_parser
from pairscreen.config import declarations
from pairscreen.db.connection import database
from pairscreen.db.models import User
from tests.support.cli import newcomer_env, run_cli

USAGE, NOT_FOUND, BUSY, MISSING_EXTRA, CLOSED_PIPE = 2, 3, 4, 5, 141


@pytest.fixture()
def data(tmp_path: Path) -> tuple[dict[str, str], str]:
    """A newcomer's environment and a data dir with an empty, migrated database."""
    env = newcomer_env(tmp_path)
    folder = str(tmp_path / "data")
    assert run_cli("--data-dir", folder, "db", "upgrade", env=env).returncode == 0
    return env, folder


def one_line_error(done: subprocess.CompletedProcess[str], status: int, text: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == status, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pairscreen"), done.stderr
    assert text in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("argv", "status", "text"),
    [
        (["users", "create", "bad-email", "--tier", "pro"], USAGE, "not an e-mail address"),
        (["users", "create", "a@b.example", "--tier", "pro", "--expires", "2020-01-01"], USAGE,
         "--expires 2020-01-01 is in the past"),
        (["users", "create", "a@b.example", "--tier", "none", "--lifetime"], USAGE,
         "--tier none has no expiry"),
        (["users", "create", "a@b.example", "--tier", "gold"], USAGE, "invalid choice: 'gold'"),
        (["users", "create", "a@b.example", "--tier", "pro", "--expires", "soon"], USAGE,
         "expected YYYY-MM-DD"),
        (["users", "list", "--bogus"], USAGE, "unrecognized arguments: --bogus"),
        (["frobnicate"], USAGE, "invalid choice: 'frobnicate'"),
        # an unknown option is named, not a command said to be missing
        (["--bogus"], USAGE, "unrecognized arguments: --bogus"),
        (["screen", "--bogus"], USAGE, "unrecognized arguments: --bogus"),
        # a missing subcommand by its choices, not argparse's internal 'screen_command'
        (["screen"], USAGE, "required: a command (one of: run, export)"),
        (["keys", "rotate", "nobody@example.com"], NOT_FOUND, "no user with e-mail"),
        (["watchlist", "list", "nobody@example.com"], NOT_FOUND, "no user with e-mail"),
        (["outbox", "list", "--limit", "0"], USAGE, "expected a whole number of 1 or more"),
    ],
)  # fmt: skip
def test_bad_input(data, argv, status, text):
    env, folder = data
    one_line_error(run_cli("--data-dir", folder, *argv, env=env), status, text)


def test_tier_none_is_what_the_help_says(data):
    env, folder = data
    help_text = " ".join(run_cli("users", "create", "--help", env=env).stdout.split())
    assert "{personal,pro,none}" in help_text and "none: no tier" in help_text
    created = run_cli("--data-dir", folder, "users", "create", "x@y.example", "--tier", "none",
                      env=env)  # fmt: skip
    assert created.returncode == 0 and "(no tier)" in created.stdout
    listed = run_cli("--data-dir", folder, "users", "list", env=env)
    assert listed.stdout == "x@y.example\t-\t-\n"
    later = (clock.now() + timedelta(days=30)).strftime("%Y-%m-%d")
    given = run_cli("--data-dir", folder, "users", "set-tier", "x@y.example", "--tier", "pro",
                    "--expires", later, env=env)  # fmt: skip
    assert given.returncode == 0, given.stderr


def test_a_missing_database_is_not_found(tmp_path):
    done = run_cli("--data-dir", str(tmp_path / "nowhere"), "users", "list",
                   env=newcomer_env(tmp_path))  # fmt: skip
    one_line_error(done, NOT_FOUND, "there is no database at")
    assert not (tmp_path / "nowhere").exists()


def test_postgresql_without_its_driver_names_the_extra(tmp_path):
    hidden = tmp_path / "hidden" / "psycopg2"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('psycopg2 is not installed here')\n")
    env = newcomer_env(tmp_path)
    env["PYTHONPATH"] = f"{hidden.parent}:{env.get('PYTHONPATH', '')}"
    done = run_cli("--database-url", "postgresql://postgres@127.0.0.1:5432/test", "users", "list",
                   env=env)  # fmt: skip
    one_line_error(done, MISSING_EXTRA, "pip install 'pairscreen[postgres]'")


def test_a_taken_port_is_busy(data):
    env, folder = data
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = run_cli("--data-dir", folder, "serve", "--port", str(port), env=env)
    one_line_error(done, BUSY, f"port {port} on 127.0.0.1 is already in use")


def test_a_running_demo_is_left_alone(data, tmp_path):
    env, folder = data
    demo = Path(folder) / "demo"
    demo.mkdir()
    (demo / "keep").write_text("the running demo's")
    with (Path(folder) / "demo.lock").open("w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("pid 4242, serving http://127.0.0.1:8123/api/v1")
        lock.flush()
        done = run_cli("--data-dir", folder, "demo", "--no-serve", env=env)
    one_line_error(done, BUSY, "(pid 4242, serving http://127.0.0.1:8123/api/v1)")
    assert done.stdout == ""
    assert (demo / "keep").read_text() == "the running demo's"


def test_a_closed_pipe_ends_quietly(runtime, database_url, tmp_path):
    with database.connection_context():
        User.insert_many(
            [{"email": f"user{i:05d}@example.com", "tier": "pro"} for i in range(3000)]
        ).execute()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairscreen", "--database-url", database_url, "users", "list"],
        env=newcomer_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line, like `| head -0`
    assert proc.wait(timeout=120) == CLOSED_PIPE
    assert proc.stderr.read() == ""


def test_every_option_says_its_default_and_a_setting_its_variable():
    variables = {d.flag: d.env for _, d in declarations() if d.flag}

    def options(parser: argparse.ArgumentParser, path: str):  # type: ignore[no-untyped-def]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    yield from options(child, f"{path} {name}")
            elif action.option_strings and action.dest != "help":
                yield path, action

    seen = 0
    for path, action in options(build_parser(), "pairscreen"):
        seen += 1
        where = f"{path} {action.option_strings[-1]}"
        assert action.help and ("default" in action.help or "required" in action.help), where
        for flag in action.option_strings:
            if flag in variables:
                assert f"[{variables[flag]}]" in action.help, where
    assert seen > 40
