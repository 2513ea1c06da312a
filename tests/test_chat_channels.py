"""Discord and Slack channels set by the operator (``channels set --discord/--slack``) and by
the user (``PUT /me/channels/{kind}``, what the account page calls), shown masked by the API,
and one watchlist move delivered exactly once to each through the outbox."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pairscreen import clock
from pairscreen.db.connection import database
from pairscreen.db.models import Channel, Outbox
from pairscreen.notify import watchlist
from pairscreen.notify.outbox import deliver_pending
from pairscreen.notify.run import run_notifications
from tests.support.positions import InMemoryCandles, set_position
from tests.support.receivers import DISCORD_PATH as DISCORD
from tests.support.receivers import SLACK_PATH as SLACK
from tests.support.receivers import HttpReceiver, chat_platforms

BASE = "/api/v1"


@pytest.fixture()
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpReceiver]:
    with chat_platforms(monkeypatch) as r:
        yield r


def put(client, key: str, kind: str, body: object):  # type: ignore[no-untyped-def]
    return client.request(
        "PUT", f"{BASE}/me/channels/{kind}", headers={"Authorization": f"Bearer {key}"}, json=body
    )


def me_channels(client, key: str) -> dict[str, dict]:  # type: ignore[no-untyped-def,type-arg]
    return {c["kind"]: c for c in client.get(f"{BASE}/me", key).json()["channels"]}


def test_cli_sets_lists_and_disables_discord_and_slack(receiver, cli, keys, client):
    code, out, err = cli(
        "channels",
        "set",
        "personal@example.com",
        "--discord",
        receiver.url + DISCORD,
        "--slack",
        receiver.url + SLACK,
    )
    assert code == 0, err
    assert f"discord   {receiver.url}{DISCORD}  enabled" in out  # the operator sees it whole
    code, out, _ = cli("channels", "list", "personal@example.com", "--json")
    rows = {r["kind"]: r for r in json.loads(out)}
    assert rows["slack"]["address"] == receiver.url + SLACK and rows["slack"]["enabled"]
    # The API never gives the secret back.
    shown = me_channels(client, keys.personal)
    assert shown["discord"]["address"] == "http://127.0.0.1/…"
    assert shown["slack"]["address"] == "http://127.0.0.1/…"
    assert "token" not in client.get(f"{BASE}/me", keys.personal).text
    code, out, err = cli("channels", "disable", "personal@example.com", "slack")
    assert code == 0, err and "slack" in out
    assert me_channels(client, keys.personal)["slack"]["enabled"] is False


def test_cli_refuses_a_url_outside_the_platform_in_one_line(receiver, cli, keys):
    code, _, err = cli(
        "channels", "set", "personal@example.com", "--discord", "https://evil.example/hook/secret"
    )
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert "incoming-webhook URL" in err and "secret" not in err
    code, _, err = cli("channels", "set", "personal@example.com", "--slack", "not a url")
    assert code != 0 and "Slack" in err


def test_the_default_prefixes_are_the_platforms_own(cli, keys):
    code, out, err = cli(
        "channels",
        "set",
        "personal@example.com",
        "--discord",
        "https://discord.com/api/webhooks/1/tok",
        "--slack",
        "https://hooks.slack.com/services/T1/B2/tok",
    )
    assert code == 0, err
    assert "slack     https://hooks.slack.com/services/T1/B2/tok  enabled" in out
    code, _, err = cli(
        "channels",
        "set",
        "personal@example.com",
        "--slack",
        "https://hooks.slack.com.evil.example/services/x",
    )
    assert code != 0 and "https://hooks.slack.com.evil.example/…" in err


def test_user_sets_own_channels_over_the_api(receiver, client, keys):
    r = put(client, keys.personal, "discord", {"address": receiver.url + DISCORD})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "kind": "discord",
        "address": "http://127.0.0.1/…",
        "enabled": True,
        "depeg_alerts": False,
    }
    assert "token" not in r.text
    with database.connection_context():
        row = Channel.get(Channel.kind == "discord")
        assert row.address == receiver.url + DISCORD  # stored whole, for delivery
    r = put(client, keys.personal, "slack", {"address": receiver.url + SLACK, "enabled": False})
    assert r.status_code == 200 and r.json()["enabled"] is False
    # On and off without sending the secret again.
    assert put(client, keys.personal, "slack", {"enabled": True}).json()["enabled"] is True
    assert put(client, keys.personal, "discord", {"enabled": False}).json()["enabled"] is False
    assert put(client, keys.personal, "email", {"enabled": False}).json()["enabled"] is False
    shown = me_channels(client, keys.personal)
    assert (shown["email"]["enabled"], shown["discord"]["enabled"], shown["slack"]["enabled"]) == (
        False,
        False,
        True,
    )
    assert put(client, keys.personal, "telegram", {"address": "-1001234567890"}).status_code == 200
    # Another user's channels are untouched.
    assert set(me_channels(client, keys.pro)) == {"email"}


@pytest.mark.parametrize(
    ("kind", "body", "status", "says"),
    [
        (
            "discord",
            {"address": "https://evil.example/api/webhooks/1/secret"},
            400,
            "incoming-webhook URL",
        ),
        ("slack", {"address": "ftp://x"}, 400, "Slack"),
        ("email", {"address": "someone@example.com"}, 400, "set by the operator"),
        ("webhook", {"address": "https://example.com/hook"}, 400, "set by the operator"),
        ("webhook", {"enabled": True}, 404, "no webhook channel"),
        ("discord", {}, 400, ""),
        ("discord", {"address": "x", "colour": "red"}, 400, ""),
        ("pager", {"enabled": True}, 400, ""),
    ],
)
def test_channel_refusals_are_sentences(receiver, client, keys, kind, body, status, says):
    r = put(client, keys.personal, kind, body)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("text/plain") and says in r.text
    assert "secret" not in r.text


def test_a_refused_url_is_never_echoed_whole(receiver, client, keys):
    long_url = receiver.url + "/api/webhooks/1/" + "secret" * 100  # beyond the 500 allowed
    r = put(client, keys.personal, "discord", {"address": long_url})
    assert r.status_code == 400, r.text
    assert "secret" * 3 not in r.text and len(r.text) < 300
    r = put(client, keys.personal, "discord", {"address": 42})
    assert r.status_code == 400 and "address" in r.text


def test_channel_body_must_be_json(receiver, client, keys):
    r = client.request(
        "PUT",
        f"{BASE}/me/channels/discord",
        headers={"Authorization": f"Bearer {keys.personal}", "Content-Type": "text/plain"},
        content=b"address=x",
    )
    assert r.status_code in (400, 415) and r.headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\xff\x18\x07\xfe\xfe*j\x020", "not utf-8 text"),  # schemathesis found a 500 here
        (b'{"enabled": tru', "Bad request"),
        ('{"address": "caf\u00e9"}'.encode("latin-1"), "not utf-8 text"),
    ],
)
def test_a_body_that_is_not_utf8_json_is_a_400_sentence(receiver, client, keys, content, says):
    r = client.request(
        "PUT",
        f"{BASE}/me/channels/webhook",
        headers={"Authorization": f"Bearer {keys.pro}", "Content-Type": "application/json"},
        content=content,
    )
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("text/plain") and says in r.text


def test_a_key_without_a_tier_cannot_set_channels(receiver, client, keys):
    r = put(client, keys.no_tier, "discord", {"address": receiver.url + DISCORD})
    assert r.status_code == 403


def test_one_watchlist_move_reaches_discord_and_slack_exactly_once(receiver, runtime, client, keys):
    assert (
        put(client, keys.personal, "discord", {"address": receiver.url + DISCORD}).status_code
        == 200
    )
    assert put(client, keys.personal, "slack", {"address": receiver.url + SLACK}).status_code == 200
    receiver.answer(500)  # the first attempt fails, whichever platform comes first
    with database.connection_context():
        runtime.candles = InMemoryCandles(runtime.candles.get())
        watchlist.add_item(runtime.universe, "personal@example.com", "ETH/BTC")
        set_position(runtime, "ETH", "BTC", 0.15)
        at = clock.now().replace(microsecond=0)
        report = run_notifications(runtime, at=at)
        assert report.notifications == 3  # e-mail, Discord, Slack
        assert run_notifications(runtime, at=at).notifications == 0  # idempotent
        now = at
        for _ in range(3):
            deliver_pending(runtime, now=now, worker_id="w")
            pending = [o for o in Outbox.select() if o.status == "pending" and o.channel != "email"]
            if not pending:
                break
            now = max(o.next_attempt_at for o in pending)
        statuses = {o.channel: o.status for o in Outbox.select()}
    assert statuses["discord"] == statuses["slack"] == "sent"
    by_path: dict[str, list] = {DISCORD: [], SLACK: []}  # type: ignore[type-arg]
    for r in receiver.requests:
        by_path[r.path].append(r)
    assert len(receiver.requests) == 3  # one failed attempt, then one delivery each
    deliveries = receiver.dedup()
    assert len(deliveries) == 2
    discord = next(r for r in deliveries.values() if r.path == DISCORD).json()
    slack = next(r for r in deliveries.values() if r.path == SLACK).json()
    assert discord["content"].startswith("ETH/BTC entered the bottom zone")
    assert slack["text"].startswith("ETH/BTC entered the bottom zone")
    assert discord["embeds"][0]["footer"]["text"].endswith(".discord")
