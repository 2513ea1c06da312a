"""The ``email`` notifier: SMTP with plain-text and HTML parts (smtplib).

Configuration (the ``[plugins.email]`` table, each key overridden by its environment
variable; never logged, ``smtp_url`` hidden wherever options are shown):

- ``smtp_url`` (``PAIRSCREEN_SMTP_URL``): ``smtp://[user:password@]host[:port]`` (port 25
  by default); ``?starttls=1`` upgrades the connection with STARTTLS before logging in; ``smtps://``
  (port 465 by default) connects over TLS from the start. User and password are
  URL-decoded, so ``%40`` may stand for ``@``.
- ``mail_from`` (``PAIRSCREEN_MAIL_FROM``): the sender address.

Every message carries the outbox idempotency key twice, so a receiving system can drop the
duplicate of an at-least-once redelivery: as ``Message-ID: <key@pairscreen>`` and as
``X-Idempotency-Key: key``.

Errors: a 5xx answer to the recipient or the message is permanent; connection problems,
4xx answers and anything else are retried by the outbox.
"""

from __future__ import annotations

import re
import smtplib
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pairscreen.contracts import (
    AddressError,
    ChannelSpec,
    DeliveryError,
    Notification,
    Notifier,
    PluginOption,
    hookimpl,
)

TIMEOUT_SECONDS = 20.0
TRUE = {"1", "true", "yes", "on"}
ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# The operator's: the service would otherwise mail wherever a key's holder says.
CHANNEL = ChannelSpec("E-mail", "an e-mail address: name@example.com", self_service=False)


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    user: str | None
    password: str | None
    starttls: bool
    implicit_tls: bool

    @classmethod
    def from_url(cls, url: str) -> SmtpConfig:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("[plugins.email] smtp_url must look like smtp://user:pass@host:port")
        query = parse_qs(parts.query)
        implicit = parts.scheme == "smtps"
        try:
            port = parts.port
        except ValueError:
            raise ValueError("[plugins.email] smtp_url has an invalid port") from None
        return cls(
            host=parts.hostname,
            port=port or (465 if implicit else 25),
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            starttls=query.get("starttls", ["0"])[-1].lower() in TRUE,
            implicit_tls=implicit,
        )


def build_message(notification: Notification, sender: str) -> EmailMessage:
    """The e-mail for one notification: text part, HTML alternative, idempotency headers."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = notification.address
    msg["Subject"] = notification.subject
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = f"<{notification.idempotency_key}@pairscreen>"
    msg["X-Idempotency-Key"] = notification.idempotency_key
    msg.set_content(notification.text)
    if notification.html:
        msg.add_alternative(notification.html, subtype="html")
    return msg


@dataclass(frozen=True)
class EmailNotifier:
    smtp_url: str = field(repr=False)  # may hold a password
    mail_from: str
    name: str = "email"

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> EmailNotifier:
        return cls(smtp_url=str(options["smtp_url"]), mail_from=str(options["mail_from"]))

    @property
    def channel(self) -> ChannelSpec:
        return CHANNEL

    def check_address(self, address: str) -> str:
        if not ADDRESS.match(address) or len(address) > 254:
            raise AddressError(f"not an e-mail address: {address!r}")
        return address

    def deliver(self, notification: Notification) -> None:
        url = self.smtp_url
        if not url:
            raise DeliveryError(
                "e-mail is not configured: set [plugins.email] smtp_url or PAIRSCREEN_SMTP_URL"
            )
        try:
            config = SmtpConfig.from_url(url)
        except ValueError as exc:
            raise DeliveryError(str(exc)) from None
        message = build_message(notification, self.mail_from)
        try:
            self._send(config, message)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            permanent = all(500 <= code < 600 for code in codes)
            raise DeliveryError(f"recipient refused (SMTP {codes})", permanent=permanent) from None
        except smtplib.SMTPResponseException as exc:
            permanent = 500 <= exc.smtp_code < 600 and not isinstance(
                exc, smtplib.SMTPAuthenticationError
            )
            raise DeliveryError(
                f"SMTP server answered {exc.smtp_code}", permanent=permanent
            ) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise DeliveryError(f"SMTP delivery failed: {type(exc).__name__}") from None

    def _send(self, config: SmtpConfig, message: EmailMessage) -> None:
        if config.implicit_tls:
            smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                config.host,
                config.port,
                timeout=TIMEOUT_SECONDS,
                context=ssl.create_default_context(),
            )
        else:
            smtp = smtplib.SMTP(config.host, config.port, timeout=TIMEOUT_SECONDS)
        with smtp:
            smtp.ehlo()
            if config.starttls:
                smtp.starttls(context=ssl.create_default_context())
                smtp.ehlo()
            if config.user:
                smtp.login(config.user, config.password or "")
            smtp.send_message(message)


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.email]`` table."""
    return [
        PluginOption(
            "smtp_url",
            "",
            "e-mail server: smtp://[user:password@]host[:port][?starttls=1] or smtps://… "
            "(empty: no e-mail)",
            secret=True,
            env="PAIRSCREEN_SMTP_URL",
        ),
        PluginOption(
            "mail_from", "pairscreen@localhost", "sender of the e-mails", env="PAIRSCREEN_MAIL_FROM"
        ),
    ]


@hookimpl
def pairscreen_register_notifiers(options: Mapping[str, Any]) -> list[Notifier]:
    """The ``email`` notifier."""
    return [EmailNotifier.of(options)]
