"""``discord`` and ``slack`` notifiers against a real HTTP server on localhost: the payloads
the platforms document, their limits, exactly one delivery through the outbox (after a 500
then a success, and after a 429 with its wait), and webhook URLs kept secret."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pairscreen_plugins.notifiers import chat as chat_plugin
from pairscreen_plugins.notifiers.chat import (
    DISCORD_CONTENT,
    DISCORD_EMBED_TOTAL,
    ChatNotifier,
    discord_payload,
    slack_payload,
)

from pairscreen import DeliveryError, Notification, clock
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox
from pairscreen.notify.outbox import OutboxMessage, deliver_pending, enqueue, listing
from pairscreen.notify.run import PairPosition, watch_message
from pairscreen.notify.states import Transition
from tests.support.receivers import (
    DISCORD_PATH,
    SLACK_PATH,
    HttpReceiver,
    chat_platforms,
    fresh_database,
    notifier_plugins,
)


@pytest.fixture()
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpReceiver]:
    with chat_platforms(monkeypatch) as r:
        yield r


@pytest.fixture()
def world(receiver, empty_database_url):  # type: ignore[no-untyped-def]
    fresh_database(empty_database_url)
    with database.connection_context():
        yield notifier_plugins(chat_plugin)
    database.close()


def watch_content(state: str = "in_bottom", previous: str = "approach_bottom") -> dict:  # type: ignore[type-arg]
    position = PairPosition(0.137, clock.now().replace(hour=0, minute=0, second=0, microsecond=0))
    return watch_message("ETH", "BTC", Transition(previous, state, True), position)


def queue(channel: str, address: str, key: str = "watch.7.in_bottom.20261126T060000Z") -> str:
    content = watch_content()
    enqueue(
        [
            OutboxMessage(
                f"{key}.{channel}",
                None,
                channel,
                address,
                content["subject"],
                content["text"],
                content["html"],
                content["payload"],
            )
        ]
    )
    return f"{key}.{channel}"


def note(channel: str, subject: str, text: str, key: str = "k.1") -> Notification:
    return Notification(
        id=1, idempotency_key=key, channel=channel, address="", subject=subject, text=text
    )


def test_discord_delivery_posts_the_documented_payload_once(world, receiver):
    receiver.answer(204)  # Discord's answer to Execute Webhook without ?wait=true
    key = queue("discord", receiver.url + DISCORD_PATH)
    report = deliver_pending(world, worker_id="w")
    assert (report.sent, report.failed, report.retrying) == (1, 0, 0)
    (req,) = receiver.requests
    assert req.path == DISCORD_PATH
    assert req.headers["Content-Type"] == "application/json"
    assert req.headers["X-Idempotency-Key"] == key
    body = req.json()
    assert set(body) == {"content", "embeds", "allowed_mentions"}
    assert body["content"] == "ETH/BTC entered the bottom zone (position 0.137)"
    assert body["allowed_mentions"] == {"parse": []}  # nothing in a message pings anyone
    (embed,) = body["embeds"]
    assert embed["title"] == body["content"]
    assert embed["color"] == 0x1F77B4  # the bottom side's blue
    assert embed["description"].startswith("ETH/BTC entered the bottom zone.")
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Pair"] == "ETH/BTC"
    assert fields["State"] == "in_bottom (was approach_bottom)"
    assert fields["Position"].startswith("0.137")
    assert fields["Details"] == "GET /api/v1/pair/ETH/BTC"
    assert all(f["inline"] is True for f in embed["fields"])
    assert embed["footer"] == {"text": f"pairscreen · {key}"}
    row = Outbox.get()
    assert (row.status, row.attempts, row.last_error) == ("sent", 1, "")
    # Delivered is delivered: later runs send nothing more.
    later = clock.now() + timedelta(days=2)
    assert deliver_pending(world, now=later, worker_id="w").attempted == 0
    assert len(receiver.requests) == 1


def test_slack_delivery_posts_text_and_blocks_once(world, receiver):
    receiver.answer(200, {"Content-Type": "text/html"}, b"ok")  # Slack's documented success
    key = queue("slack", receiver.url + SLACK_PATH)
    assert deliver_pending(world, worker_id="w").sent == 1
    (req,) = receiver.requests
    assert req.path == SLACK_PATH and req.headers["X-Idempotency-Key"] == key
    body = req.json()
    assert set(body) == {"text", "blocks"}
    assert body["text"] == "ETH/BTC entered the bottom zone (position 0.137)"
    header, summary, facts, context = body["blocks"]
    assert header == {"type": "header", "text": {"type": "plain_text", "text": body["text"]}}
    assert summary["type"] == "section" and summary["text"]["type"] == "mrkdwn"
    assert summary["text"]["text"].startswith("ETH/BTC entered the bottom zone.")
    assert facts["type"] == "section"
    assert {"type": "mrkdwn", "text": "*Pair*\nETH/BTC"} in facts["fields"]
    assert len(facts["fields"]) <= 10
    assert context == {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": f"pairscreen · {key}"}],
    }
    assert Outbox.get().status == "sent"
    assert deliver_pending(world, now=clock.now() + timedelta(days=1), worker_id="w").attempted == 0
    assert len(receiver.requests) == 1


@pytest.mark.parametrize(("channel", "path"), [("discord", DISCORD_PATH), ("slack", SLACK_PATH)])
def test_500_then_success_delivers_exactly_once_with_the_same_payload(
    world, receiver, channel, path
):
    receiver.answer(500)
    receiver.answer(
        204 if channel == "discord" else 200, {}, b"" if channel == "discord" else b"ok"
    )
    key = queue(channel, receiver.url + path)
    t0 = clock.now()
    first = deliver_pending(world, now=t0, worker_id="w")
    row = Outbox.get()
    assert (first.retrying, row.status, row.attempts) == (1, "pending", 1)
    assert row.last_error.endswith("answered HTTP 500")
    assert path not in row.last_error and receiver.url not in row.last_error
    # Nothing before the backoff (30 s by default), then one delivery.
    assert deliver_pending(world, now=t0 + timedelta(seconds=29), worker_id="w").attempted == 0
    second = deliver_pending(world, now=row.next_attempt_at, worker_id="w")
    assert second.sent == 1
    row = Outbox.get()
    assert (row.status, row.attempts, row.last_error) == ("sent", 2, "")
    assert deliver_pending(world, now=t0 + timedelta(days=1), worker_id="w").attempted == 0
    failed, delivered = receiver.requests
    assert failed.body == delivered.body  # the retry is the same message
    assert {r.headers["X-Idempotency-Key"] for r in receiver.requests} == {key}
    assert len(receiver.dedup()) == 1


def test_slack_429_waits_for_retry_after_then_delivers_once(world, receiver):
    receiver.answer(429, {"Retry-After": "45"}, b"rate_limited")
    receiver.answer(200, {}, b"ok")
    queue("slack", receiver.url + SLACK_PATH)
    t0 = clock.now()
    assert deliver_pending(world, now=t0, worker_id="w").retrying == 1
    row = Outbox.get()
    assert row.next_attempt_at == t0 + timedelta(seconds=45)
    assert "HTTP 429" in row.last_error
    assert deliver_pending(world, now=t0 + timedelta(seconds=44), worker_id="w").attempted == 0
    assert deliver_pending(world, now=t0 + timedelta(seconds=45), worker_id="w").sent == 1
    assert deliver_pending(world, now=t0 + timedelta(hours=1), worker_id="w").attempted == 0
    assert len(receiver.requests) == 2 and Outbox.get().status == "sent"


def test_discord_429_takes_retry_after_from_the_header_or_the_json_body(world, receiver):
    limited = json.dumps(
        {"message": "You are being rate limited.", "retry_after": 12.5, "global": False}
    )
    receiver.answer(
        429, {"Content-Type": "application/json", "Retry-After": "13"}, limited.encode()
    )
    receiver.answer(429, {"Content-Type": "application/json"}, limited.encode())
    receiver.answer(204)
    queue("discord", receiver.url + DISCORD_PATH)
    t0 = clock.now()
    deliver_pending(world, now=t0, worker_id="w")
    assert Outbox.get().next_attempt_at == t0 + timedelta(seconds=13)  # the header first
    t1 = t0 + timedelta(seconds=13)
    deliver_pending(world, now=t1, worker_id="w")
    assert Outbox.get().next_attempt_at == t1 + timedelta(seconds=12.5)  # else the body's
    assert deliver_pending(world, now=t1 + timedelta(seconds=12), worker_id="w").attempted == 0
    assert deliver_pending(world, now=t1 + timedelta(seconds=12.5), worker_id="w").sent == 1
    assert len(receiver.requests) == 3
    assert deliver_pending(world, now=t1 + timedelta(days=1), worker_id="w").attempted == 0
    assert len(receiver.requests) == 3


@pytest.mark.parametrize(
    ("status", "channel"), [(404, "discord"), (401, "discord"), (410, "slack"), (403, "slack")]
)
def test_a_refusal_is_permanent_and_never_retried(world, receiver, status, channel):
    receiver.answer(status, {}, b'{"message": "Unknown Webhook", "code": 10015}')
    path = DISCORD_PATH if channel == "discord" else SLACK_PATH
    queue(channel, receiver.url + path)
    assert deliver_pending(world, worker_id="w").failed == 1
    row = Outbox.get()
    assert row.status == "failed" and f"HTTP {status}" in row.last_error
    assert "token" not in row.last_error
    assert deliver_pending(world, now=clock.now() + timedelta(days=1), worker_id="w").attempted == 0
    assert len(receiver.requests) == 1


def test_a_url_outside_the_allowed_prefixes_is_never_posted(world, receiver):
    queue("discord", receiver.url + "/elsewhere/api/webhooks/1/token")
    assert deliver_pending(world, worker_id="w").failed == 1
    row = Outbox.get()
    assert "PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES" in row.last_error and "token" not in row.last_error
    assert receiver.requests == []


def test_the_outbox_listing_masks_chat_webhook_urls(world, receiver):
    queue("slack", receiver.url + SLACK_PATH)
    (row,) = listing("pending")
    assert row["address"] == "http://127.0.0.1/…"


def test_discord_limits_hold_for_a_huge_notification():
    subject = "S" * 5000
    facts = "\n".join(f"Fact {i:02d}: " + "v" * 3000 for i in range(40))
    body = discord_payload(note("discord", subject, "x" * 9000 + "\n\n" + facts))
    assert len(body["content"]) == DISCORD_CONTENT and body["content"].endswith("…")
    (embed,) = body["embeds"]
    assert len(embed["title"]) == 256
    assert 1 <= len(embed["fields"]) <= 25
    assert all(len(f["name"]) <= 256 and len(f["value"]) <= 1024 for f in embed["fields"])
    assert embed["fields"][0]["value"] == "v" * 1023 + "…"
    total = (
        len(embed["title"])
        + len(embed.get("description", ""))
        + len(embed["footer"]["text"])
        + sum(len(f["name"]) + len(f["value"]) for f in embed["fields"])
    )
    assert total <= DISCORD_EMBED_TOTAL
    assert len(embed["description"]) >= 1000  # the summary keeps its room
    assert len(body["embeds"]) <= 10
    # Many short facts: 25 fields at most, every one whole.
    many = "\n".join(f"Fact {i:02d}: value {i}" for i in range(40))
    (small,) = discord_payload(note("discord", "s", "lead\n\n" + many))["embeds"]
    assert len(small["fields"]) == 25 and small["fields"][-1] == {
        "name": "Fact 24",
        "value": "value 24",
        "inline": True,
    }


def test_slack_limits_and_escaping():
    facts = "\n".join(f"Fact {i:02d}: <b>&" + "v" * 2500 for i in range(23))
    body = slack_payload(
        note("slack", "A&B <script> " + "h" * 300, "Lead <@here> & more\n\n" + facts)
    )
    assert body["text"].startswith("A&amp;B &lt;script&gt;")
    header = body["blocks"][0]
    assert header["text"]["type"] == "plain_text" and len(header["text"]["text"]) == 150
    summary = body["blocks"][1]["text"]["text"]
    assert summary == "Lead &lt;@here&gt; &amp; more"  # no mention, no link injection
    sections = [b for b in body["blocks"] if "fields" in b]
    assert [len(s["fields"]) for s in sections] == [10, 10, 3]
    assert all(len(f["text"]) <= 2000 for s in sections for f in s["fields"])
    assert len(body["blocks"]) <= 50


def test_errors_never_carry_the_webhook_url(receiver):
    notifier = ChatNotifier("discord", (receiver.url + "/api/webhooks/",))
    receiver.answer(503)
    address = receiver.url + DISCORD_PATH
    n = Notification(
        id=1, idempotency_key="k", channel="discord", address=address, subject="s", text="t"
    )
    with pytest.raises(DeliveryError) as err:
        notifier.deliver(n)
    assert str(err.value) == "Discord answered HTTP 503" and not err.value.permanent
    unreachable = ChatNotifier("discord", ("http://127.0.0.1:9/",))
    with pytest.raises(DeliveryError) as down:
        unreachable.deliver(
            Notification(**{**n.__dict__, "address": "http://127.0.0.1:9/api/webhooks/1/secret"})
        )
    assert "secret" not in str(down.value) and "127.0.0.1" not in str(down.value)
