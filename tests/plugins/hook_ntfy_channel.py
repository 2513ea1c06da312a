"""Test plugin: a third-party channel kind, ``ntfy``, and a command of its own.

The notifier posts a notification's text to the channel's ntfy topic URL
(``https://ntfy.sh/<topic>``; the topic is the secret: whoever knows it reads the messages),
with its subject as the ``Title`` header and the idempotency key as ``X-Idempotency-Key``.
Users set their own topic (``self_service``). The command ``pairscreen ntfy ping URL`` posts
one test message and prints what the server answered; an unreachable server makes it fail.
"""

from __future__ import annotations

import argparse
import re
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from pairscreen import (
    AddressError,
    ChannelSpec,
    CommandSpec,
    DeliveryError,
    Notification,
    Settings,
    hookimpl,
    masked_address,
)

TOPIC = re.compile(r"^/[A-Za-z0-9_-]{1,64}$")


def post(url: str, title: str, text: str, key: str) -> int:
    request = urllib.request.Request(
        url,
        data=text.encode(),
        method="POST",
        headers={"Title": title, "X-Idempotency-Key": key, "Content-Type": "text/plain"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return int(answer.status)


class Ntfy:
    name = "ntfy"
    channel = ChannelSpec(
        "ntfy", "a topic URL: https://ntfy.sh/your-secret-topic", secret="url_path"
    )

    def check_address(self, address: str) -> str:
        parts = urlsplit(address)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or not TOPIC.match(parts.path)
        ):
            shown = masked_address(address, "url_path") if parts.hostname else "not a URL"
            raise AddressError(
                f"an ntfy channel takes a topic URL (https://host/topic), got {shown}"
            )
        return address

    def deliver(self, notification: Notification) -> None:
        try:
            post(
                notification.address,
                notification.subject,
                notification.text,
                notification.idempotency_key,
            )
        except urllib.error.HTTPError as exc:
            raise DeliveryError(
                f"ntfy answered HTTP {exc.code}", permanent=exc.code < 500
            ) from None
        except OSError as exc:
            raise DeliveryError(f"ntfy unreachable: {type(exc).__name__}") from None


@hookimpl
def pairscreen_register_notifiers() -> list[Ntfy]:
    return [Ntfy()]


def ping_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the ntfy topic URL to post a test message to")


def ping(args: argparse.Namespace, settings: Settings) -> int:
    status = post(args.url, "pairscreen test", "A test message from pairscreen.", "ping")
    print(f"ntfy answered {status}")
    return 0


@hookimpl
def pairscreen_register_commands() -> list[CommandSpec]:
    return [
        CommandSpec("ntfy", "ping", "post a test message to an ntfy topic", ping, ping_arguments)
    ]
