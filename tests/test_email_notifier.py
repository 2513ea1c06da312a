"""The ``email`` notifier against a real SMTP server (aiosmtpd) started by the tests."""

from __future__ import annotations

import email
import email.policy
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from pairscreen_plugins.notifiers import email as email_plugin
from pairscreen_plugins.notifiers.email import SmtpConfig

from pairscreen import DeliveryError, Notification
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox
from pairscreen.notify.outbox import OutboxMessage, deliver_pending, enqueue
from pairscreen.plugin_system.registry import Plugins
from tests.support.receivers import (
    SmtpCollector,
    free_port,
    fresh_database,
    notifier_of,
    notifier_plugins,
)

NOTE = Notification(
    id=1,
    idempotency_key="watch.7.in_bottom.20250102T030405Z.email",
    channel="email",
    address="alice@example.com",
    subject="ETH/BTC entered the bottom zone (position 0.153)",
    text="ETH/BTC entered the bottom zone.\nPosition:  0.153\nZone band: position < 0.2",
    html="<html><body><p><strong>ETH/BTC</strong> entered the bottom zone.</p></body></html>",
)


@pytest.fixture()
def smtp() -> Iterator[tuple[SmtpCollector, int]]:
    handler = SmtpCollector(refuse={"nobody@example.com"})
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


def parse(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def test_plain_smtp_delivers_text_and_html_parts(smtp, monkeypatch):
    handler, port = smtp
    monkeypatch.setenv("PAIRSCREEN_SMTP_URL", f"smtp://127.0.0.1:{port}")
    monkeypatch.setenv("PAIRSCREEN_MAIL_FROM", "alerts@pairscreen.test")
    notifier_of(email_plugin, "email").deliver(NOTE)

    assert len(handler.messages) == 1
    got = handler.messages[0]
    assert got.mail_from == "alerts@pairscreen.test"
    assert got.rcpt_tos == ["alice@example.com"]
    msg = parse(got.content)
    assert msg["Subject"] == NOTE.subject
    assert msg["To"] == "alice@example.com"
    assert msg["Message-ID"] == f"<{NOTE.idempotency_key}@pairscreen>"
    assert msg["X-Idempotency-Key"] == NOTE.idempotency_key
    assert msg.get_content_type() == "multipart/alternative"
    text = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    assert text is not None and html is not None
    assert text.get_content().replace("\r\n", "\n").strip() == NOTE.text
    assert "<strong>ETH/BTC</strong>" in html.get_content()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_starttls_and_login_with_credentials_from_the_url(tmp_path, monkeypatch):
    import ssl

    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    logins: list[tuple[bytes, bytes]] = []

    def authenticator(server, session, envelope, mechanism, auth_data):  # type: ignore[no-untyped-def]
        assert isinstance(auth_data, LoginPassword)
        logins.append((auth_data.login, auth_data.password))
        return AuthResult(success=auth_data.password == b"p@ss word")

    handler = SmtpCollector()
    port = free_port()
    controller = Controller(
        handler,
        hostname="127.0.0.1",
        port=port,
        tls_context=context,
        require_starttls=True,
        auth_required=True,
        authenticator=authenticator,
    )
    controller.start()
    try:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trust the test's own CA
        monkeypatch.setenv(
            "PAIRSCREEN_SMTP_URL", f"smtp://mailer:p%40ss%20word@127.0.0.1:{port}?starttls=1"
        )
        notifier_of(email_plugin, "email").deliver(NOTE)
        assert logins == [(b"mailer", b"p@ss word")]
        assert len(handler.messages) == 1 and handler.messages[0].tls
    finally:
        controller.stop()


def test_refused_recipient_is_permanent_and_unreachable_server_is_retried(smtp, monkeypatch):
    _, port = smtp
    monkeypatch.setenv("PAIRSCREEN_SMTP_URL", f"smtp://127.0.0.1:{port}")
    with pytest.raises(DeliveryError) as refused:
        notifier_of(email_plugin, "email").deliver(
            Notification(**{**NOTE.__dict__, "address": "nobody@example.com"})
        )
    assert refused.value.permanent

    monkeypatch.setenv("PAIRSCREEN_SMTP_URL", f"smtp://127.0.0.1:{free_port()}")
    with pytest.raises(DeliveryError) as down:
        notifier_of(email_plugin, "email").deliver(NOTE)
    assert not down.value.permanent

    monkeypatch.delenv("PAIRSCREEN_SMTP_URL")
    with pytest.raises(
        DeliveryError, match=r"\[plugins.email\] smtp_url or PAIRSCREEN_SMTP_URL"
    ) as unset:
        notifier_of(email_plugin, "email").deliver(NOTE)
    assert not unset.value.permanent


def test_smtp_url_parsing():
    c = SmtpConfig.from_url("smtp://u%40x:secret@mail.example.com:587?starttls=1")
    assert (c.host, c.port, c.user, c.password, c.starttls, c.implicit_tls) == (
        "mail.example.com",
        587,
        "u@x",
        "secret",
        True,
        False,
    )
    assert SmtpConfig.from_url("smtp://localhost").port == 25
    assert SmtpConfig.from_url("smtps://h").port == 465
    assert SmtpConfig.from_url("smtps://h").implicit_tls
    with pytest.raises(ValueError):
        SmtpConfig.from_url("http://h")


def test_outbox_row_is_mailed_and_marked_sent(smtp, monkeypatch, empty_database_url):
    handler, port = smtp
    monkeypatch.setenv("PAIRSCREEN_SMTP_URL", f"smtp://127.0.0.1:{port}")
    fresh_database(empty_database_url)
    try:
        rt = notifier_plugins(email_plugin)
        with database.connection_context():
            enqueue(
                [
                    OutboxMessage(
                        NOTE.idempotency_key,
                        None,
                        "email",
                        NOTE.address,
                        NOTE.subject,
                        NOTE.text,
                        NOTE.html,
                        {"pair": "ETH/BTC"},
                    )
                ]
            )
            report = deliver_pending(rt, worker_id="test")
            row = Outbox.get()
        assert (report.sent, row.status, row.attempts) == (1, "sent", 1)
        assert parse(handler.messages[0].content)["X-Idempotency-Key"] == NOTE.idempotency_key
    finally:
        database.close()


def test_watchlist_notification_end_to_end_over_smtp(runtime, keys, smtp, monkeypatch):
    """notify run -> outbox -> the built-in email plugin -> a real SMTP server."""
    from pairscreen.notify import watchlist
    from pairscreen.notify.run import run_notifications
    from tests.support.positions import InMemoryCandles, set_position

    handler, port = smtp
    monkeypatch.setenv("PAIRSCREEN_SMTP_URL", f"smtp://127.0.0.1:{port}")
    # The settings are read at the composition root: build them again now that the env is set.
    settings = load_settings(
        data_dir=runtime.settings.data_dir, database_url=runtime.settings.database_url
    )
    runtime.settings, runtime.plugins = settings, Plugins(runtime.plugins.pm, settings)
    with database.connection_context():
        runtime.candles = InMemoryCandles(runtime.candles.get())
        watchlist.add_item(runtime.universe, "personal@example.com", "SOL/ADA")
        set_position(runtime, "SOL", "ADA", 0.83)
        assert run_notifications(runtime).notifications == 1
        report = deliver_pending(runtime, worker_id="w")
        row = Outbox.get()
    assert (report.sent, row.status) == (1, "sent")
    (got,) = handler.messages
    msg = parse(got.content)
    assert got.rcpt_tos == ["personal@example.com"]
    assert msg["Subject"] == "SOL/ADA entered the top zone (position 0.830)"
    assert msg["X-Idempotency-Key"] == row.idempotency_key
    text = msg.get_body(preferencelist=("plain",)).get_content()
    html = msg.get_body(preferencelist=("html",)).get_content()
    for part in (text, html):
        assert "SOL/ADA" in part and "in_top" in part and "0.830" in part
        assert "position &gt; 0.8" in part or "position > 0.8" in part
    assert "GET /api/v1/pair/SOL/ADA" in text
