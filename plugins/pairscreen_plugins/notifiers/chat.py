"""The chat notifiers: ``discord`` and ``slack``, through each platform's incoming webhooks.

The channel's address is the webhook URL the platform gives (a secret: anyone holding it can
post to the channel). Before posting, the URL must still start with one of the operator's
allowed prefixes (``[plugins.chat] discord_webhook_prefixes`` and ``slack_webhook_prefixes``,
overridden by ``PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES`` and ``PAIRSCREEN_SLACK_WEBHOOK_PREFIXES``,
comma-separated; by default the platforms' own hosts): a URL set under other settings is
refused, permanently.

One notification is one message, built from its subject and text: the text's first
paragraphs are the summary, its ``Name: value`` lines the facts.

- **Discord** (Execute Webhook): ``content`` is the subject (at most 2,000 characters), one
  embed holds the title (256), the summary as ``description`` (4,096), the facts as inline
  ``fields`` (at most 25; name 256, value 1,024) and a footer (2,048) naming the idempotency
  key; the embed stays within Discord's 6,000-character total. ``allowed_mentions`` with no
  ``parse`` keeps a ticker such as ``@everyone`` from pinging anyone. Discord answers 204 (or
  200 with ``?wait=true`` in the URL).
- **Slack**: ``text`` is the subject (the fallback Slack shows in notifications) and
  ``blocks`` a header (150), the summary as a ``mrkdwn`` section (3,000), the facts as
  section ``fields`` (10 per section, 2,000 each) and a context line naming the idempotency
  key; ``&``, ``<`` and ``>`` are escaped as Slack requires. Slack answers 200 ``ok``.

Neither platform takes an idempotency key, so the key travels as ``X-Idempotency-Key`` (for
a proxy in between) and in the visible footer, where a person can tell a redelivery (after a
crash between sending and recording it) from a new alert. Answers map as for the webhook
notifier: 429 waits for ``Retry-After`` (Discord's JSON ``retry_after`` in seconds when the
header is missing), 408 and 5xx retry, any other 4xx (a deleted webhook: 404, an archived
Slack channel: 410) is permanent. Errors name the platform and the status, never the URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pairscreen.contracts import (
    AddressError,
    ChannelSpec,
    DeliveryError,
    Notification,
    Notifier,
    PluginOption,
    hookimpl,
    masked_address,
)
from pairscreen_plugins.notifiers.webhook import post_json

FACT_RE = re.compile(r"^([A-Z][^:]{0,40}):\s+(\S.*)$")

# Discord's documented limits (characters).
DISCORD_CONTENT = 2000
DISCORD_TITLE = 256
DISCORD_DESCRIPTION = 4096
DISCORD_FIELDS = 25
DISCORD_FIELD_NAME = 256
DISCORD_FIELD_VALUE = 1024
DISCORD_FOOTER = 2048
DISCORD_EMBED_TOTAL = 6000
# Slack's documented Block Kit limits.
SLACK_HEADER = 150
SLACK_SECTION = 3000
SLACK_FIELDS = 10
SLACK_FIELD = 2000
SLACK_BLOCKS = 50

COLOURS = {"bottom": 0x1F77B4, "top": 0xFF7F0E, "depeg": 0xD62728}
GREY = 0x7F7F7F


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, an ellipsis marking a cut ("" for no room)."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit > 1 else ""


@dataclass(frozen=True)
class Message:
    """What both platforms show: a title, a summary, facts and a footer."""

    title: str
    summary: str
    facts: list[tuple[str, str]]
    footer: str

    @classmethod
    def of(cls, notification: Notification) -> Message:
        summary: list[str] = []
        facts: list[tuple[str, str]] = []
        for line in notification.text.splitlines():
            fact = FACT_RE.match(line.strip())
            if fact:
                facts.append((fact.group(1).strip(), fact.group(2).strip()))
            elif line.strip():
                summary.append(line.strip())
        return cls(
            title=notification.subject.strip() or "pairscreen notification",
            summary="\n".join(summary),
            facts=facts,
            footer=f"pairscreen · {notification.idempotency_key}",
        )


def colour(payload: Mapping[str, Any]) -> int:
    """Blue for the bottom side, orange for the top, red for a depeg, grey otherwise."""
    state = str(payload.get("state", ""))
    if str(payload.get("event", "")).startswith("depeg."):
        return COLOURS["depeg"]
    for side in ("bottom", "top"):
        if state.endswith(side):
            return COLOURS[side]
    return GREY


def discord_payload(notification: Notification) -> dict[str, Any]:
    """The Execute Webhook body of one notification, within Discord's limits."""
    m = Message.of(notification)
    title = cut(m.title, DISCORD_TITLE)
    footer = cut(m.footer, DISCORD_FOOTER)
    # Within the embed's 6,000 characters: the summary keeps up to 1,000, the facts come next
    # (a fact that does not fit is cut or left out), the summary then takes what is left.
    room = DISCORD_EMBED_TOTAL - len(title) - len(footer) - min(len(m.summary), 1000)
    fields: list[dict[str, Any]] = []
    for name, value in m.facts[:DISCORD_FIELDS]:
        name = cut(name, DISCORD_FIELD_NAME)
        value = cut(value, min(DISCORD_FIELD_VALUE, room - len(name)))
        if not value or room - len(name) - len(value) < 0:
            break
        fields.append({"name": name, "value": value, "inline": True})
        room -= len(name) + len(value)
    used = len(title) + len(footer) + sum(len(f["name"]) + len(f["value"]) for f in fields)
    room = max(0, min(DISCORD_DESCRIPTION, DISCORD_EMBED_TOTAL - used))
    embed: dict[str, Any] = {"title": title, "color": colour(notification.payload)}
    if m.summary and room:
        embed["description"] = cut(m.summary, room)
    if fields:
        embed["fields"] = fields
    embed["footer"] = {"text": footer}
    return {
        "content": cut(m.title, DISCORD_CONTENT),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    }


def slack_escape(text: str) -> str:
    """Slack's three control characters as it wants them in ``text`` and ``mrkdwn``."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_payload(notification: Notification) -> dict[str, Any]:
    """The incoming-webhook body of one notification, within Block Kit's limits."""
    m = Message.of(notification)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": cut(m.title, SLACK_HEADER)}}
    ]
    if m.summary:
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": cut(slack_escape(m.summary), SLACK_SECTION)},
            }
        )
    for start in range(0, len(m.facts), SLACK_FIELDS):
        chunk = m.facts[start : start + SLACK_FIELDS]
        blocks.append(
            {
                "type": "section",
                "fields": [
                    {
                        "type": "mrkdwn",
                        "text": cut(f"*{slack_escape(name)}*\n{slack_escape(value)}", SLACK_FIELD),
                    }
                    for name, value in chunk
                ],
            }
        )
    context = {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_escape(m.footer)}]}
    blocks = [*blocks[: SLACK_BLOCKS - 1], context]
    return {"text": slack_escape(m.title), "blocks": blocks}


def _discord_retry_after(body: bytes) -> float | None:
    """Discord's 429 body: ``{"message": …, "retry_after": <seconds>, "global": …}``."""
    try:
        return max(0.0, float(json.loads(body)["retry_after"]))
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class ChatNotifier:
    """Posts to one platform's incoming webhooks (``name``: ``discord`` or ``slack``)."""

    name: str
    prefixes: tuple[str, ...]

    @property
    def platform(self) -> str:
        return "Discord" if self.name == "discord" else "Slack"

    @property
    def channel(self) -> ChannelSpec:
        starts = " or ".join(self.prefixes) or "(no prefix allowed)"
        hint = f"the channel's incoming-webhook URL, starting with {starts}"
        return ChannelSpec(self.platform, hint, secret="url_path")

    def check_address(self, address: str) -> str:
        """A URL under one of the operator's prefixes; a refusal shows it by its host only."""
        parts = urlsplit(address)
        well_formed = parts.scheme in ("http", "https") and parts.hostname and len(address) <= 500
        if not well_formed or not any(address.startswith(p) for p in self.prefixes):
            shown = masked_address(address, "url_path") if well_formed else "not a URL"
            raise AddressError(
                f"a {self.platform} channel takes the channel's incoming-webhook URL, starting "
                f"with {' or '.join(self.prefixes) or '(no prefix allowed)'}; got {shown}"
            )
        return address

    def deliver(self, notification: Notification) -> None:
        url = notification.address
        if not any(url.startswith(prefix) for prefix in self.prefixes):
            setting = (
                f"[plugins.chat] {self.name}_webhook_prefixes "
                f"(PAIRSCREEN_{self.name.upper()}_WEBHOOK_PREFIXES)"
            )
            raise DeliveryError(
                f"the {self.platform} webhook URL is not under {setting}", permanent=True
            )
        build = discord_payload if self.name == "discord" else slack_payload
        body = json.dumps(build(notification), separators=(",", ":"), ensure_ascii=False)
        post_json(
            url,
            body.encode(),
            {"X-Idempotency-Key": notification.idempotency_key},
            self.platform,
            retry_after_in_body=_discord_retry_after if self.name == "discord" else None,
        )


DISCORD_PREFIXES = (
    "https://discord.com/api/webhooks/",
    "https://discordapp.com/api/webhooks/",
    "https://ptb.discord.com/api/webhooks/",
    "https://canary.discord.com/api/webhooks/",
)
SLACK_PREFIXES = ("https://hooks.slack.com/services/",)


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.chat]`` table."""
    return [
        PluginOption(
            "discord_webhook_prefixes",
            DISCORD_PREFIXES,
            "where a Discord channel's webhook URL may point (URL prefixes)",
            env="PAIRSCREEN_DISCORD_WEBHOOK_PREFIXES",
        ),
        PluginOption(
            "slack_webhook_prefixes",
            SLACK_PREFIXES,
            "where a Slack channel's incoming-webhook URL may point (URL prefixes)",
            env="PAIRSCREEN_SLACK_WEBHOOK_PREFIXES",
        ),
    ]


@hookimpl
def pairscreen_register_notifiers(options: Mapping[str, Any]) -> list[Notifier]:
    """The ``discord`` and ``slack`` notifiers."""
    return [
        ChatNotifier("discord", tuple(options["discord_webhook_prefixes"])),
        ChatNotifier("slack", tuple(options["slack_webhook_prefixes"])),
    ]
