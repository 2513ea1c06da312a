"""The ``telegram`` notifier: the Bot API's ``sendMessage``.

It POSTs ``{"chat_id": <address>, "text": <text>}`` as JSON to ``{api}/bot{token}/sendMessage``,
with the plugin's options (``[plugins.telegram]``): ``token``, the bot's token (a secret;
``PAIRSCREEN_TELEGRAM_TOKEN`` overrides it), and ``api``, the Bot API's base URL (by default
``https://api.telegram.org``, so any Bot-API-compatible server works;
``PAIRSCREEN_TELEGRAM_API``). The outbox idempotency key travels as ``X-Idempotency-Key``;
answers map to retries as for every messaging notifier (``webhook.post_json``), and an error
never contains the token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pairscreen.contracts import (
    AddressError,
    ChannelSpec,
    DeliveryError,
    Notification,
    Notifier,
    PluginOption,
    hookimpl,
)
from pairscreen_plugins.notifiers.webhook import post_json

CHAT_ID = re.compile(r"^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,63})$")
TELEGRAM = ChannelSpec("Telegram", "a chat id: 123456789, -1001234567890 or @channelname")


@dataclass(frozen=True)
class TelegramNotifier:
    token: str = field(repr=False)
    api: str
    name: str = "telegram"

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> TelegramNotifier:
        return cls(token=str(options["token"]), api=str(options["api"]))

    @property
    def channel(self) -> ChannelSpec:
        return TELEGRAM

    def check_address(self, address: str) -> str:
        if not CHAT_ID.match(address):
            raise AddressError(
                f"a Telegram chat id is a number (e.g. 123456789 or -1001234567890) or "
                f"@channelname, got {address!r}"
            )
        return address

    def deliver(self, notification: Notification) -> None:
        token = self.token
        if not token:
            raise DeliveryError(
                "Telegram is not configured: set [plugins.telegram] token or "
                "PAIRSCREEN_TELEGRAM_TOKEN"
            )
        api = self.api.rstrip("/")
        body = json.dumps(
            {
                "chat_id": notification.address,
                "text": notification.text,
                "disable_web_page_preview": True,
            }
        ).encode()
        post_json(
            f"{api}/bot{token}/sendMessage",
            body,
            {"X-Idempotency-Key": notification.idempotency_key},
            "Telegram",
        )


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.telegram]`` table."""
    return [
        PluginOption(
            "token",
            "",
            "Telegram bot token (empty: no Telegram)",
            secret=True,
            env="PAIRSCREEN_TELEGRAM_TOKEN",
        ),
        PluginOption(
            "api",
            "https://api.telegram.org",
            "Telegram Bot API base URL",
            env="PAIRSCREEN_TELEGRAM_API",
        ),
    ]


@hookimpl
def pairscreen_register_notifiers(options: Mapping[str, Any]) -> list[Notifier]:
    """The ``telegram`` notifier."""
    return [TelegramNotifier.of(options)]
