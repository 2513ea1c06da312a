"""The notification commands: channels set / disable / list, notify run / deliver, and their
one-line errors."""

from __future__ import annotations

import pytest

from pairscreen.db.connection import database
from pairscreen.db.models import Outbox


def test_channels_set_disable_list(cli):
    assert cli("users", "create", "ann@example.com", "--tier", "pro", "--lifetime")[0] == 0
    code, out, _ = cli("channels", "list", "ann@example.com")
    assert code == 0 and "email     ann@example.com  enabled (account address)" in out

    code, out, _ = cli(
        "channels",
        "set",
        "ann@example.com",
        "--email",
        "alerts@ann.example.com",
        "--telegram",
        "-1001234567890",
        "--webhook",
        "https://hooks.example.com/ann",
        "--depeg-alerts",
    )
    assert code == 0, out
    assert "email     alerts@ann.example.com  enabled  depeg alerts: all assets" in out
    assert "telegram  -1001234567890  enabled" in out
    assert "webhook   https://hooks.example.com/ann  enabled" in out

    code, out, _ = cli("channels", "disable", "ann@example.com", "telegram")
    assert code == 0 and "telegram  -1001234567890  disabled" in out
    code, out, _ = cli("channels", "set", "ann@example.com", "--no-depeg-alerts")
    assert code == 0 and "depeg alerts" not in out
    # Setting a channel again turns it back on.
    code, out, _ = cli("channels", "set", "ann@example.com", "--telegram", "@ann_alerts")
    assert "telegram  @ann_alerts  enabled" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("channels", "set", "nobody@example.com", "--email", "a@b.example"), "no user with"),
        (("channels", "set", "bob@example.com", "--webhook", "ftp://x"), "http:// or https://"),
        (("channels", "set", "bob@example.com", "--email", "not-an-address"), "e-mail address"),
        (("channels", "set", "bob@example.com", "--telegram", "chat me"), "chat id"),
        (("channels", "set", "bob@example.com", "--depeg-alerts"), "Pro"),
        (("channels", "set", "bob@example.com"), "nothing to set"),
        (("channels", "disable", "bob@example.com", "webhook"), "has no webhook channel"),
    ],
)
def test_bad_input_is_a_one_line_error(cli, argv, message):
    cli("users", "create", "bob@example.com", "--tier", "personal")
    code, _, err = cli(*argv)
    assert code == (3 if message in ("no user with", "has no webhook channel") else 2)
    assert err.startswith("pairscreen: error: ") and message in err
    assert err.count("\n") == 1


def test_notify_run_and_deliver(cli, monkeypatch):
    monkeypatch.delenv("PAIRSCREEN_SMTP_URL", raising=False)
    cli("users", "create", "cat@example.com", "--tier", "personal")
    cli("watchlist", "add", "cat@example.com", "ETH/BTC")
    cli("watchlist", "add", "cat@example.com", "SOL/ADA")
    code, out, _ = cli("notify", "run")
    assert code == 0
    assert out.startswith("2 watchlist items, 2 with a position")
    queued = int(out.split(", ")[3].split()[0])
    code, out, _ = cli("notify", "run")
    assert out.strip().endswith("0 changed state, 0 notifications queued")
    # No SMTP server configured: nothing is lost, everything waits for a retry.
    code, out, _ = cli("notify", "deliver")
    assert code == 0
    assert out.startswith(f"0 sent, {queued} to retry, 0 failed")
    assert f"outbox: {queued} pending" in out
    with database.connection_context():
        assert {r.last_error for r in Outbox.select()} <= {
            "e-mail is not configured: set [plugins.email] smtp_url or PAIRSCREEN_SMTP_URL"
        }
    # Why they wait is said per channel, and the outbox lists them with their last error.
    assert (
        f"\n  e-mail: {queued} waiting (e-mail is not configured: set [plugins.email] smtp_url "
        "or PAIRSCREEN_SMTP_URL)\n" in out
    )
    code, out, _ = cli("outbox", "list")
    lines = out.splitlines()
    assert code == 0 and len(lines) == queued
    fields = lines[0].split("\t")
    assert fields[1:5] == ["email", "cat@example.com", "pending", "1"]
    assert (
        fields[6] == "e-mail is not configured: set [plugins.email] smtp_url or PAIRSCREEN_SMTP_URL"
    )
    code, out, _ = cli("outbox", "list", "--status", "failed")
    assert (code, out) == (0, "")


def test_outbox_list_as_json_for_scripts(cli, monkeypatch):
    import json

    monkeypatch.delenv("PAIRSCREEN_SMTP_URL", raising=False)
    cli("users", "create", "dot@example.com", "--tier", "personal")
    cli("watchlist", "add", "dot@example.com", "ETH/BTC")
    cli("notify", "run")
    code, out, _ = cli("outbox", "list", "--json")
    assert code == 0
    queued = json.loads(out)
    assert queued and {m["last_error"] for m in queued} == {None}  # not attempted yet
    assert set(queued[0]) == {
        "id",
        "channel",
        "address",
        "subject",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
        "last_error",
    }
    cli("notify", "deliver")
    after = json.loads(cli("outbox", "list", "--status", "all", "--json")[1])
    assert [m["id"] for m in after] == [m["id"] for m in queued]
    assert {m["attempts"] for m in after} == {1}
    first = json.loads(cli("outbox", "list", "--limit", "1", "--json")[1])
    assert [m["id"] for m in first] == [queued[0]["id"]]
