"""List commands: a table with headers on a terminal, one JSON document with ``--json``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pairscreen.db.connection import database
from tests.support.cli import newcomer_env, run_cli, run_on_terminal


def test_every_list_parses_as_json(cli, monkeypatch):
    monkeypatch.delenv("PAIRSCREEN_SMTP_URL", raising=False)
    assert cli("users", "create", "eve@example.com", "--tier", "pro", "--lifetime")[0] == 0
    assert cli("users", "create", "fay@example.com", "--tier", "personal")[0] == 0
    assert cli("watchlist", "add", "eve@example.com", "ETH/BTC", "--no-approach")[0] == 0
    assert cli("channels", "set", "eve@example.com", "--webhook", "https://h.example/x")[0] == 0

    users = json.loads(cli("users", "list", "--json")[1])
    assert [(u["email"], u["tier"], u["lifetime"]) for u in users] == [
        ("eve@example.com", "pro", True),
        ("fay@example.com", "personal", False),
    ]
    assert users[0]["expires_at"] is None and users[1]["expires_at"].endswith("+00:00")
    items = json.loads(cli("watchlist", "list", "eve@example.com", "--json")[1])
    assert [(i["pair"], i["notify_approach"], i["notify_in_zone"]) for i in items] == [
        ("ETH/BTC", False, True)
    ]
    channels = json.loads(cli("channels", "list", "eve@example.com", "--json")[1])
    assert [(c["kind"], c["address"], c["account_address"]) for c in channels] == [
        ("email", "eve@example.com", True),
        ("webhook", "https://h.example/x", False),
    ]
    assert json.loads(cli("watchlist", "list", "fay@example.com", "--json")[1]) == []
    key = cli("keys", "rotate", "fay@example.com")[1].strip()
    listed = json.loads(cli("keys", "list", "--json")[1])
    assert [(k["email"], k["prefix"]) for k in listed] == [("fay@example.com", key[:8])]
    assert cli("keys", "list")[1].startswith(f"fay@example.com\t{key[:8]}…\t")


def test_the_worker_says_why_messages_wait(cli, runtime, monkeypatch):
    from pairscreen.worker import Worker, WorkerOptions

    monkeypatch.delenv("PAIRSCREEN_SMTP_URL", raising=False)
    cli("users", "create", "gus@example.com", "--tier", "personal")
    cli("watchlist", "add", "gus@example.com", "ETH/BTC")
    cli("notify", "run")
    with database.connection_context():
        line = Worker(runtime, WorkerOptions())._deliver()
    assert line is not None
    assert re.fullmatch(
        r"0 sent, (\d+) to retry, 0 failed; waiting: e-mail: \1 waiting "
        r"\(e-mail is not configured: set \[plugins.email\] smtp_url or PAIRSCREEN_SMTP_URL\)",
        line,
    ), line


def test_a_terminal_gets_tables_with_headers(tmp_path: Path) -> None:
    env = newcomer_env(tmp_path)
    data = str(tmp_path / "data")
    assert run_cli("--data-dir", data, "db", "upgrade", env=env).returncode == 0
    created = run_cli(
        "--data-dir", data, "users", "create", "hal@example.com", "--tier", "pro", env=env
    )
    assert created.returncode == 0, created.stderr
    code, shown = run_on_terminal("--data-dir", data, "users", "list", env=env)
    assert code == 0, shown
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip() for line in shown.splitlines()]
    assert re.fullmatch(r"E-MAIL\s+TIER\s+EXPIRES", lines[0]), lines
    assert re.match(r"hal@example\.com\s+pro\s+\d{4}-", lines[1]), lines
    code, shown = run_on_terminal("--data-dir", data, "outbox", "list", env=env)
    assert (code, shown.strip()) == (0, "(none)")
