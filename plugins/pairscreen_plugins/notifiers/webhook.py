"""The ``webhook`` notifier (signed JSON), and the HTTP POST every messaging notifier shares.

``webhook`` POSTs the notification as JSON to the channel's URL: the notification's payload
plus ``idempotency_key``, ``subject`` and ``text``. The body is signed with the plugin's
``secret`` option (``[plugins.webhook] secret``, or ``PAIRSCREEN_WEBHOOK_SECRET``):
``X-Pairscreen-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes>``; a receiver
recomputes it and compares in constant time. It sends the outbox idempotency key as
``X-Idempotency-Key`` and in the body, so a receiver can drop a redelivered duplicate.

Answers (:func:`post_json`, also used by ``telegram``, ``discord`` and ``slack``): 2xx is
delivered. 429 is retried after its ``Retry-After`` (seconds or an HTTP date; Telegram's
``parameters.retry_after`` in the body also counts); 408 and 5xx are retried (after
``Retry-After`` when given); any other 4xx is permanent (a wrong chat id or URL will not fix
itself). Error messages never contain the URL or the token.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http.client import HTTPMessage
from typing import IO, Any
from urllib.parse import urlsplit

from pairscreen.contracts import (
    AddressError,
    ChannelSpec,
    DeliveryError,
    Notification,
    Notifier,
    PluginOption,
    hookimpl,
)

TIMEOUT_SECONDS = 15.0
USER_AGENT = "pairscreen-notifier/1"
# The operator's: the service would otherwise POST wherever a key's holder says; the URL's
# path often carries the receiver's token.
WEBHOOK = ChannelSpec(
    "Webhook", "an http:// or https:// URL", secret="url_path", self_service=False
)


def signature(secret: str, body: bytes) -> str:
    """The ``X-Pairscreen-Signature`` value of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirected POST must not silently turn into a GET that "succeeds"."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect())


def post_json(
    url: str,
    body: bytes,
    headers: dict[str, str],
    what: str,
    retry_after_in_body: Callable[[bytes], float | None] | None = None,
) -> bytes:
    """POST and translate the answer into success (its body) or :class:`DeliveryError`.

    ``retry_after_in_body`` reads a 429's wait from its body when no ``Retry-After`` header
    gives it (Telegram's ``parameters.retry_after`` by default).
    """
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers},
    )
    try:
        with _opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            answer: bytes = response.read()
            return answer
    except urllib.error.HTTPError as exc:
        status = exc.code
        retry_after = parse_retry_after(exc.headers.get("Retry-After"))
        try:
            answer = exc.read()
        except OSError:
            answer = b""
        finally:
            exc.close()
        if retry_after is None and status == 429:
            retry_after = (retry_after_in_body or _telegram_retry_after)(answer)
        if status == 429 or status == 408 or status >= 500:
            raise DeliveryError(f"{what} answered HTTP {status}", retry_after=retry_after) from None
        raise DeliveryError(f"{what} refused the message: HTTP {status}", permanent=True) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DeliveryError(f"{what} unreachable: {type(reason).__name__}") from None


def _telegram_retry_after(body: bytes) -> float | None:
    try:
        value = json.loads(body)["parameters"]["retry_after"]
        return float(value)
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class WebhookNotifier:
    secret: str = field(repr=False)
    name: str = "webhook"

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> WebhookNotifier:
        return cls(secret=str(options["secret"]))

    @property
    def channel(self) -> ChannelSpec:
        return WEBHOOK

    def check_address(self, address: str) -> str:
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or not parts.hostname or len(address) > 500:
            raise AddressError(f"a webhook must be an http:// or https:// URL, got {address!r}")
        return address

    def deliver(self, notification: Notification) -> None:
        secret = self.secret
        if not secret:
            raise DeliveryError(
                "webhooks are not configured: set [plugins.webhook] secret or "
                "PAIRSCREEN_WEBHOOK_SECRET"
            )
        document = {
            **dict(notification.payload),
            "idempotency_key": notification.idempotency_key,
            "subject": notification.subject,
            "text": notification.text,
        }
        body = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
        post_json(
            notification.address,
            body,
            {
                "X-Pairscreen-Signature": signature(secret, body),
                "X-Idempotency-Key": notification.idempotency_key,
            },
            "webhook",
        )


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.webhook]`` table."""
    return [
        PluginOption(
            "secret",
            "",
            "HMAC-SHA256 key that signs webhook bodies (empty: no webhooks)",
            secret=True,
            env="PAIRSCREEN_WEBHOOK_SECRET",
        )
    ]


@hookimpl
def pairscreen_register_notifiers(options: Mapping[str, Any]) -> list[Notifier]:
    """The ``webhook`` notifier."""
    return [WebhookNotifier.of(options)]
