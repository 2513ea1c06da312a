"""What a newcomer types: ``pairscreen demo`` and the command lines it prints, run as printed.

The commands run in subprocesses, as a person runs them, in a home and data dir of their own;
a printed command is run verbatim (``shlex.split``), its executable checked to be this one.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from pairscreen.cli import main
from pairscreen.cli.hints import program
from tests.support.live_server import free_port

# A printed command follows a label and two spaces: "CLI on this setup:  pairscreen … users list".
COMMAND = re.compile(r":  (\S.*)$")


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of a newcomer: a fresh home, no pairscreen settings."""
    home = tmp_path / "home"
    home.mkdir()
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PAIRSCREEN_") and k not in ("DATABASE_URL", "XDG_DATA_HOME")
    }
    return {**kept, "HOME": str(home), "PAIRSCREEN_LOAD_PLUGINS": ""}


def pairscreen(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pairscreen", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def printed_commands(out: str) -> list[list[str]]:
    """Every command line the output shows, split as a shell would, checked to start with
    this very Python (or a curl)."""
    commands = []
    for line in out.splitlines():
        found = COMMAND.search(line)
        if found and not found.group(1).startswith(("rr_", "demo:")):
            words = shlex.split(found.group(1))
            if words[0] != "curl":
                assert os.path.samefile(shutil.which(words[0]) or words[0], sys.executable), line
                assert words[1:3] == ["-m", "pairscreen"], line
            commands.append(words)
    return commands


def run_printed(words: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(words, env=env, capture_output=True, text=True, timeout=120)


def wait_for(output: IO[str], proc: subprocess.Popen[str], text: str) -> str:
    """What ``proc`` printed, once it has printed ``text`` (or fail if it exits first)."""
    deadline = time.monotonic() + 90
    while True:
        output.seek(0)
        seen = output.read()
        if text in seen:
            return seen
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"never printed {text!r}:\n{seen}")
        time.sleep(0.2)


@pytest.fixture()
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; each is stopped (SIGTERM, then SIGKILL) at the end."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start(
    argv: list[str], env: dict[str, str], log: Path, started: list[subprocess.Popen[str]]
) -> tuple[subprocess.Popen[str], IO[str]]:
    """Start ``argv`` with its stdout in ``log`` (the progress on stderr goes beside it)."""
    output = log.open("w+")
    errors = log.with_suffix(".err").open("w")
    proc = subprocess.Popen(argv, env=env, stdout=output, stderr=errors, text=True)
    started.append(proc)
    return proc, output


def test_demo_no_serve_prints_commands_that_run_as_printed(
    tmp_path: Path, env: dict[str, str], started: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    done = pairscreen(
        "--data-dir", str(tmp_path / "data"), "demo", "--no-serve", "--port", str(port), env=env
    )
    assert done.returncode == 0, done.stderr
    assert "serving" not in done.stdout
    assert done.stdout.startswith("pairscreen demo prepared")
    # Its progress, step by step, went to stderr (not a terminal here: plain lines).
    for step in ("market data: 44/44", "peg samples: ", "first screen: "):
        assert step in done.stderr, done.stderr
    commands = printed_commands(done.stdout)
    assert [c[-2:] for c in commands] == [["users", "list"], ["--port", str(port)]]
    listed = run_printed(commands[0], env)
    assert listed.returncode == 0, listed.stderr
    assert "personal@demo.pairscreen.local" in listed.stdout
    assert "pro@demo.pairscreen.local" in listed.stdout
    # "serve it with:" serves this very demo.
    proc, output = start(commands[1], env, tmp_path / "serve.log", started)
    seen = wait_for(output, proc, "press Ctrl-C to stop")
    assert seen.startswith(f"pairscreen website http://127.0.0.1:{port}/  "), seen
    assert seen.splitlines()[1].startswith(f"pairscreen serving http://127.0.0.1:{port}/api/v1")
    key = re.search(r"pro\s+pro@demo\S+\s+key (rr_\w+)", done.stdout)
    assert key
    me = run_printed(
        [
            "curl",
            "-sf",
            "-H",
            f"Authorization: Bearer {key.group(1)}",
            f"http://127.0.0.1:{port}/api/v1/me",
        ],
        env,
    )
    assert me.returncode == 0 and "pro@demo" in me.stdout, me


@pytest.mark.slow
def test_a_serving_demo_prints_working_commands_and_a_second_one_leaves_it_alone(
    tmp_path: Path, env: dict[str, str], started: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    data = tmp_path / "data"
    argv = [
        sys.executable,
        "-m",
        "pairscreen",
        "--data-dir",
        str(data),
        "demo",
        "--port",
        str(port),
    ]
    proc, output = start(argv, env, tmp_path / "demo.log", started)
    seen = wait_for(output, proc, "worker started")
    assert seen.startswith(f"pairscreen website http://127.0.0.1:{port}/  "), seen
    assert f"\npairscreen serving http://127.0.0.1:{port}/api/v1  (UI: " in seen, seen
    assert "press Ctrl-C to stop" in seen
    commands = printed_commands(seen)
    # a curl with the pro key, the CLI on the demo's database, a curl with the personal key
    assert [words[0] == "curl" for words in commands] == [True, False, True], commands
    for words in commands:
        done = run_printed(words, env)
        assert done.returncode == 0, (words, done.stderr)
        assert done.stdout.strip(), words

    database = data / "demo" / "pairscreen.sqlite3"
    before = database.stat()
    # A second demo, serving or not, on this port or another, changes nothing and says why.
    for extra in (["--port", str(port)], ["--port", str(free_port())], ["--no-serve"]):
        second = pairscreen("--data-dir", str(data), "demo", *extra, env=env)
        assert second.returncode == 4, (extra, second.stderr)  # busy
        assert second.stderr == (
            f"pairscreen: error: a demo is already running in {data / 'demo'} (pid {proc.pid}, "
            f"serving http://127.0.0.1:{port}/api/v1): stop it (Ctrl-C) before preparing a new "
            "one, or give another --data-dir\n"
        )
        assert second.stdout == ""
        assert database.stat().st_ino == before.st_ino
    for words in commands:  # the first demo's keys still work
        assert run_printed(words, env).returncode == 0, words
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=40) == 0


def test_a_taken_port_stops_serve_before_it_starts(
    tmp_path: Path, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = main(["serve", "--port", str(port), "--database-url", database_url])
    assert code == 4  # busy
    err = capsys.readouterr().err
    assert err == (
        f"pairscreen: error: port {port} on 127.0.0.1 is already in use (is another pairscreen "
        "demo or server running?): stop that process or choose another port with --port\n"
    )


def test_users_create_prints_a_key_command_that_reaches_the_same_database(
    tmp_path: Path, env: dict[str, str]
) -> None:
    data = str(tmp_path / "elsewhere")
    assert pairscreen("db", "upgrade", "--data-dir", data, env=env).returncode == 0
    created = pairscreen(
        "users", "create", "ann@example.com", "--tier", "pro", "--data-dir", data, env=env
    )
    assert created.returncode == 0, created.stderr
    hint = created.stdout.split("issue a key with: ", 1)[1].strip()
    assert "--data-dir" in hint
    rotated = run_printed(shlex.split(hint), env)
    assert rotated.returncode == 0, rotated.stderr
    assert rotated.stdout.startswith("rr_")


def test_global_options_may_follow_the_command(
    cli: object,  # closes the database at the end
    database_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(["users", "create", "bo@example.com", "--tier", "pro", "--database-url", database_url])
        == 0
    )
    assert main(["users", "list", "--database-url", database_url]) == 0
    assert "bo@example.com\tpro" in capsys.readouterr().out
    # Given before the command, an option is not reset by the command's copy of it.
    assert main(["--database-url", database_url, "users", "list"]) == 0
    assert "bo@example.com\tpro" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["users", "list"],
        ["keys", "rotate", "ann@example.com"],
        ["screen", "run"],
        ["serve", "--port", "1"],
    ],
)
def test_a_missing_database_is_named_not_created(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "pairscreen.sqlite3"
    assert main([*argv, "--database-url", f"sqlite:///{missing}"]) == 3  # not found
    err = capsys.readouterr().err
    demo = shlex.join([*program(), "demo"])
    assert err == (
        f"pairscreen: error: there is no database at {missing}: create one with '{demo}' (the "
        f"demo) or '{shlex.join([*program(), 'db', 'upgrade'])}' (empty), or point --data-dir "
        "or --database-url at yours\n"
    )
    assert not missing.exists()


def test_the_program_is_named_as_it_was_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / ".venv" / "bin" / "pairscreen"
    script.parent.mkdir(parents=True)
    script.write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(sys, "argv", [str(script), "demo"])
    assert program() == [".venv/bin/pairscreen"]
    monkeypatch.chdir(tmp_path / ".venv")  # elsewhere, the path from this folder
    assert program() == ["bin/pairscreen"]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # outside the script's tree: its full path
    assert program() == [str(script)]
    monkeypatch.setattr(sys, "argv", ["pairscreen", "demo"])  # found on the PATH
    assert program() == ["pairscreen"]
    monkeypatch.setattr(sys, "argv", ["/x/pairscreen/__main__.py"])  # python -m pairscreen
    assert program()[1:] == ["-m", "pairscreen"]
