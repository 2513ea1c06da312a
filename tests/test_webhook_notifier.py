"""``webhook`` and ``telegram`` notifiers against a local HTTP server: signature, headers,
429 with Retry-After, 5xx retries through the outbox, permanent 4xx."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pairscreen_plugins.notifiers import telegram as telegram_plugin
from pairscreen_plugins.notifiers import webhook as webhook_plugin
from pairscreen_plugins.notifiers.webhook import parse_retry_after

from pairscreen import DeliveryError, Notification, clock
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox
from pairscreen.notify.outbox import OutboxMessage, OutboxPolicy, deliver_pending, enqueue
from tests.support.receivers import HttpReceiver, fresh_database, notifier_of, notifier_plugins

SECRET = "s3cret-hmac-key"
TOKEN = "123456:ABC-telegram-token"


@pytest.fixture()
def receiver() -> Iterator[HttpReceiver]:
    r = HttpReceiver().start()
    yield r
    r.stop()


@pytest.fixture()
def world(empty_database_url, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAIRSCREEN_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("PAIRSCREEN_TELEGRAM_TOKEN", TOKEN)
    fresh_database(empty_database_url)
    with database.connection_context():
        yield notifier_plugins(webhook_plugin)
    database.close()


def note(address: str, key: str = "watch.3.approach_top.20250102T000000Z.webhook") -> Notification:
    return Notification(
        id=1,
        idempotency_key=key,
        channel="webhook",
        address=address,
        subject="SOL/ETH is approaching the top zone (position 0.741)",
        text="SOL/ETH is approaching the top zone.",
        payload={"pair": "SOL/ETH", "state": "approach_top", "position": 0.741},
    )


def queue(address: str, channel: str = "webhook", key: str = "k.1") -> None:
    enqueue(
        [
            OutboxMessage(
                key,
                None,
                channel,
                address,
                "subject",
                "SOL/ETH is approaching the top zone.",
                "",
                {"pair": "SOL/ETH"},
            )
        ]
    )


def test_webhook_posts_signed_json_with_the_idempotency_key(receiver, monkeypatch):
    monkeypatch.setenv("PAIRSCREEN_WEBHOOK_SECRET", SECRET)
    notifier_of(webhook_plugin, "webhook").deliver(note(receiver.url + "/hooks/pairscreen"))
    (req,) = receiver.requests
    assert req.path == "/hooks/pairscreen"
    expected = hmac.new(SECRET.encode(), req.body, hashlib.sha256).hexdigest()
    assert req.headers["X-Pairscreen-Signature"] == f"sha256={expected}"
    assert req.headers["Content-Type"] == "application/json"
    body = req.json()
    assert body["idempotency_key"] == req.headers["X-Idempotency-Key"]
    assert body["idempotency_key"] == "watch.3.approach_top.20250102T000000Z.webhook"
    assert (body["pair"], body["state"], body["position"]) == ("SOL/ETH", "approach_top", 0.741)
    assert SECRET not in req.body.decode()
    # A tampered body no longer matches the signature.
    tampered = req.body.replace(b"0.741", b"0.999")
    assert hmac.new(SECRET.encode(), tampered, hashlib.sha256).hexdigest() != expected


def test_telegram_send_message_call(receiver, monkeypatch):
    monkeypatch.setenv("PAIRSCREEN_TELEGRAM_TOKEN", TOKEN)
    monkeypatch.setenv("PAIRSCREEN_TELEGRAM_API", receiver.url + "/")
    notifier_of(telegram_plugin, "telegram").deliver(
        Notification(**{**note("-1001234567890").__dict__, "channel": "telegram"})
    )
    (req,) = receiver.requests
    assert req.path == f"/bot{TOKEN}/sendMessage"
    body = req.json()
    assert body["chat_id"] == "-1001234567890"
    assert body["text"] == "SOL/ETH is approaching the top zone."
    assert req.headers["X-Idempotency-Key"].startswith("watch.3.")


def test_status_codes_map_to_retry_or_permanent(receiver, monkeypatch):
    monkeypatch.setenv("PAIRSCREEN_WEBHOOK_SECRET", SECRET)
    hook = notifier_of(webhook_plugin, "webhook")
    receiver.answer(429, {"Retry-After": "7"})
    receiver.answer(503)
    receiver.answer(404)
    receiver.answer(302, {"Location": receiver.url + "/elsewhere"})
    with pytest.raises(DeliveryError) as limited:
        hook.deliver(note(receiver.url))
    assert (limited.value.retry_after, limited.value.permanent) == (7.0, False)
    with pytest.raises(DeliveryError) as unavailable:
        hook.deliver(note(receiver.url))
    assert (unavailable.value.retry_after, unavailable.value.permanent) == (None, False)
    with pytest.raises(DeliveryError) as missing:
        hook.deliver(note(receiver.url))
    assert missing.value.permanent
    with pytest.raises(DeliveryError) as redirected:  # never silently re-sent as a GET
        hook.deliver(note(receiver.url))
    assert redirected.value.permanent
    assert len(receiver.requests) == 4


def test_telegram_429_retry_after_from_the_body(receiver, monkeypatch):
    monkeypatch.setenv("PAIRSCREEN_TELEGRAM_TOKEN", TOKEN)
    monkeypatch.setenv("PAIRSCREEN_TELEGRAM_API", receiver.url)
    body = json.dumps({"ok": False, "error_code": 429, "parameters": {"retry_after": 11}}).encode()
    receiver.answer(429, {"Content-Type": "application/json"}, body)
    with pytest.raises(DeliveryError) as err:
        notifier_of(telegram_plugin, "telegram").deliver(
            Notification(**{**note("42").__dict__, "channel": "telegram"})
        )
    assert err.value.retry_after == 11.0
    assert TOKEN not in str(err.value)


def test_retry_after_http_date():
    now = clock.now().replace(microsecond=0)
    later = now + timedelta(seconds=90)
    assert parse_retry_after(later.strftime("%a, %d %b %Y %H:%M:%S GMT"), now) == 90.0
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("soon") is None


def test_outbox_respects_retry_after_then_delivers(world, receiver):
    receiver.answer(429, {"Retry-After": "30"})
    queue(receiver.url)
    t0 = clock.now()
    first = deliver_pending(world, now=t0, worker_id="w")
    row = Outbox.get()
    assert (first.retrying, row.status, row.attempts) == (1, "pending", 1)
    assert row.next_attempt_at == t0 + timedelta(seconds=30)
    assert "429" in row.last_error and row.claimed_by is None
    # Not before the receiver said so.
    assert deliver_pending(world, now=t0 + timedelta(seconds=29), worker_id="w").attempted == 0
    second = deliver_pending(world, now=t0 + timedelta(seconds=30), worker_id="w")
    row = Outbox.get()
    assert (second.sent, row.status, row.attempts, row.last_error) == (1, "sent", 2, "")
    assert len(receiver.requests) == 2
    assert {r.headers["X-Idempotency-Key"] for r in receiver.requests} == {"k.1"}


def test_outbox_backs_off_exponentially_on_5xx_and_gives_up(world, receiver):
    policy = OutboxPolicy(max_attempts=4, backoff_base=10, backoff_cap=25)
    for _ in range(4):
        receiver.answer(500)
    queue(receiver.url)
    now = clock.now()
    waits = []
    for _ in range(4):
        deliver_pending(world, now=now, worker_id="w", policy=policy)
        row = Outbox.get()
        if row.status != "pending":
            break
        waits.append((row.next_attempt_at - now).total_seconds())
        now = row.next_attempt_at
    assert waits == [10, 20, 25]  # doubling, capped
    assert (row.status, row.attempts) == ("failed", 4)
    assert "HTTP 500" in row.last_error
    assert deliver_pending(world, now=now + timedelta(days=1), worker_id="w").attempted == 0
    assert len(receiver.requests) == 4


def test_outbox_5xx_then_success(world, receiver):
    receiver.answer(502)
    receiver.answer(503, {"Retry-After": "3"})
    queue(receiver.url)
    now = clock.now()
    for _ in range(3):
        deliver_pending(world, now=now, worker_id="w")
        now = Outbox.get().next_attempt_at
    row = Outbox.get()
    assert (row.status, row.attempts) == ("sent", 3)
    assert len(receiver.requests) == 3


def test_permanent_4xx_fails_at_once(world, receiver):
    receiver.answer(403)
    queue(receiver.url)
    report = deliver_pending(world, worker_id="w")
    row = Outbox.get()
    assert (report.failed, row.status, row.attempts) == (1, "failed", 1)
    assert receiver.url not in row.last_error


def test_unknown_channel_kind_is_retried_not_lost(world):
    queue("somewhere", channel="pigeon")
    report = deliver_pending(world, worker_id="w")
    row = Outbox.get()
    assert (report.retrying, row.status) == (1, "pending")
    assert "pigeon" in row.last_error
