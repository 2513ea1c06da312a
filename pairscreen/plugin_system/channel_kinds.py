"""The channel kinds users may choose: every loaded notifier that declares one.

A notifier declares its kind by satisfying :class:`~pairscreen.contracts.ChannelNotifier` (a
``channel`` spec and ``check_address``); the built-in ones do it exactly as a third party
does. The framework keeps the guarantees no plugin can drop: a kind's name fits the stored
column and a URL path, an address is stripped and at most :data:`MAX_ADDRESS` characters,
and its secret part is hidden by the framework (:func:`~pairscreen.contracts.masked_address`),
not by the plugin. The channel table stores the kind as plain text, so a new kind needs no
migration.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pairscreen.contracts import (
    AddressError,
    ChannelNotifier,
    ChannelSpec,
    Notifier,
    masked_address,
)
from pairscreen.contracts.notifiers import SECRET_PARTS
from pairscreen.plugin_system.failures import PluginError, PluginFailed

# A kind is a path segment of /me/channels/{kind} and a 20-character column.
KIND_PATTERN = r"^[a-z][a-z0-9_]{0,19}$"
KIND_NAME = re.compile(KIND_PATTERN)
MAX_ADDRESS = 500  # the channel table's address column
RESERVED = frozenset({"kinds"})  # GET /me/channels/kinds is the list, not a kind


@dataclass(frozen=True)
class ChannelKinds:
    """The user-selectable kinds in load order, each with its notifier and plugin."""

    notifiers: Mapping[str, ChannelNotifier]
    owners: Mapping[str, str]

    @classmethod
    def of(cls, notifiers: Iterable[Notifier], owner_of: Callable[[str], str]) -> ChannelKinds:
        """The kinds among ``notifiers`` (``owner_of`` names each one's plugin); a badly
        declared one is a PluginError."""
        found: dict[str, ChannelNotifier] = {}
        owners: dict[str, str] = {}
        for notifier in notifiers:
            if not isinstance(notifier, ChannelNotifier):
                continue
            owner = owner_of(notifier.name)
            spec = notifier.channel
            if not KIND_NAME.match(notifier.name) or notifier.name in RESERVED:
                raise PluginError(
                    f"plugin {owner!r} offers the channel kind {notifier.name!r}; a kind is 1 to "
                    "20 lowercase letters, digits or underscores, starting with a letter, and not "
                    "'kinds'"
                )
            if not isinstance(spec, ChannelSpec) or spec.secret not in SECRET_PARTS:
                raise PluginError(
                    f"plugin {owner!r} declares the channel kind {notifier.name!r} with "
                    f"{spec!r}; a channel is a ChannelSpec whose secret is one of "
                    f"{', '.join(SECRET_PARTS)}"
                )
            found[notifier.name] = notifier
            owners[notifier.name] = owner
        return cls(found, owners)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.notifiers)

    @property
    def self_service(self) -> tuple[str, ...]:
        """The kinds whose address a user may set (the others are the operator's)."""
        return tuple(k for k, n in self.notifiers.items() if n.channel.self_service)

    def __contains__(self, kind: object) -> bool:
        return kind in self.notifiers

    def __iter__(self) -> Iterator[str]:
        return iter(self.notifiers)

    def spec(self, kind: str) -> ChannelSpec:
        return self.notifiers[kind].channel

    def check(self, kind: str, address: str) -> str:
        """The address cleaned up by its kind, or :class:`AddressError` in a sentence.

        A kind's check that raises anything else is a plugin failure naming the plugin.
        """
        notifier = self.notifiers[kind]
        try:
            cleaned = notifier.check_address(address.strip())
        except AddressError:
            raise
        except Exception as exc:
            problem = f"raised {type(exc).__name__}: {exc}"
            raise PluginFailed(
                self.owners[kind], f"channel kind {kind!r}", problem, traceback.format_exc()
            ) from exc
        if not isinstance(cleaned, str) or not cleaned.strip():
            raise PluginFailed(
                self.owners[kind], f"channel kind {kind!r}", f"answered {cleaned!r} as an address"
            )
        if len(cleaned) > MAX_ADDRESS:
            raise AddressError(
                f"a {notifier.channel.label} address is at most {MAX_ADDRESS} characters, "
                f"got {len(cleaned)}"
            )
        return cleaned

    def masked(self, kind: str, address: str) -> str:
        """The address as shown outside the operator's CLI, its declared secret part hidden;
        a kind no loaded plugin declares is shown by :func:`undeclared_masked`."""
        notifier = self.notifiers.get(kind)
        if notifier is None:
            return undeclared_masked(address)
        return masked_address(address, notifier.channel.secret)

    def described(self) -> list[dict[str, object]]:
        """Each kind as ``GET /me/channels/kinds`` lists it."""
        return [
            {
                "name": kind,
                "label": n.channel.label,
                "address_hint": n.channel.address_hint,
                "secret": n.channel.secret,
                "self_service": n.channel.self_service,
            }
            for kind, n in self.notifiers.items()
        ]


def undeclared_masked(address: str) -> str:
    """An address whose kind declares no secret part (its plugin is gone, or its notifier
    offers no channel): an http(s) URL by its scheme and host, since a URL's path is where
    receivers put their tokens; anything else whole."""
    if urlsplit(address).scheme in ("http", "https"):
        return masked_address(address, "url_path")
    return address
