"""The notifier contract: delivering outbox notifications of one channel kind, and the
channel kinds users may choose, with their address checks and secret parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args, runtime_checkable
from urllib.parse import urlsplit

__all__ = [
    "AddressError",
    "ChannelNotifier",
    "ChannelSpec",
    "DeliveryError",
    "Notification",
    "Notifier",
    "masked_address",
]


@dataclass(frozen=True)
class Notification:
    """One message to deliver, as stored in the outbox.

    ``idempotency_key`` is stable across retries so a receiver can drop duplicates.
    """

    id: int
    idempotency_key: str
    channel: str  # "email", "telegram", "webhook"
    address: str  # e-mail address, chat id, or URL
    subject: str
    text: str
    html: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)


class DeliveryError(Exception):
    """A delivery failed; ``retry_after`` (seconds) when the receiver said when to retry."""

    def __init__(self, message: str, *, retry_after: float | None = None, permanent: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.permanent = permanent


@runtime_checkable
class Notifier(Protocol):
    """Delivers outbox notifications of one channel kind."""

    @property
    def name(self) -> str:
        """The channel kind it delivers: ``email``, ``telegram``, ``webhook``."""
        ...

    def deliver(self, notification: Notification) -> None:
        """Send it, or raise :class:`DeliveryError`."""
        ...


SecretPart = Literal["none", "url_path", "all"]


SECRET_PARTS: tuple[str, ...] = get_args(SecretPart)


@dataclass(frozen=True)
class ChannelSpec:
    """What a user sees of a channel kind, declared by the notifier that delivers it.

    The framework offers the kind wherever users choose channels (``PUT /me/channels/{kind}``,
    ``GET /me/channels/kinds``, ``pairscreen channels set --kind``, the website) and hides the
    address's ``secret`` part itself, so no plugin can leak one by mistake: ``none`` shows the
    address whole, ``url_path`` shows a URL by its scheme and host (``https://ntfy.sh/…``),
    ``all`` shows nothing of it but its last four characters. ``self_service`` false keeps the
    address the operator's (``pairscreen channels set``): a user may only turn it on or off.
    """

    label: str  # how people call it: "Telegram", "Slack"
    address_hint: str  # what an address looks like, for forms and errors
    secret: SecretPart = "none"
    self_service: bool = True


class AddressError(ValueError):
    """An address a channel kind refuses; the message says what a valid one looks like and
    never repeats a secret part whole (see :func:`masked_address`)."""


def masked_address(address: str, secret: str) -> str:
    """``address`` as shown outside the operator's CLI, its ``secret`` part hidden."""
    if secret == "none":
        return address
    if secret == "url_path":
        parts = urlsplit(address)
        return f"{parts.scheme}://{parts.hostname or ''}/…"
    return f"…{address[-4:]}" if len(address) >= 16 else "…"


@runtime_checkable
class ChannelNotifier(Notifier, Protocol):
    """A notifier users can choose: its ``name`` is a channel kind with an address per user.

    A notifier without these two members still delivers what the outbox hands it (a kind the
    operator or a plugin queues itself), but is not offered to users.
    """

    @property
    def channel(self) -> ChannelSpec:
        """How the kind is shown and who may set its address."""
        ...

    def check_address(self, address: str) -> str:
        """The address cleaned up (surrounding blanks are already gone), or
        :class:`AddressError` saying what a valid one looks like."""
        ...
