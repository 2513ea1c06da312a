"""A database's stored screens behind one object: the latest one, the one current at a
moment, publishing a new one, and one pair's verdict in the latest.

A runtime holds one (``rt.screens``), built empty and filled on first use, so each runtime,
bound to its own database, serves its own screens. The object owns the caches that read
stored screens back (the latest screen in memory, payloads by moment): publishing through it
drops the latest screen it held, so the runtime that publishes serves the new one at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING

from pairscreen.screen_store.published import PublishedScreen, PublishedScreenCache
from pairscreen.screen_store.screen_history import ScreenHistory

if TYPE_CHECKING:  # publishing and verdicts load when used: every command builds a runtime
    from pairscreen.config import Settings
    from pairscreen.contracts import Asset
    from pairscreen.plugin_system.registry import Plugins
    from pairscreen.screen_store.publish import ComputedScreen, ScreenSummary


@dataclass
class ScreenStore:
    """The stored screens of one runtime's database, with the caches that serve them."""

    _latest: PublishedScreenCache = field(default_factory=PublishedScreenCache)
    _by_moment: ScreenHistory = field(default_factory=ScreenHistory)

    def latest(self) -> PublishedScreen:
        """The latest regular screen (re-read only when a newer row exists); NotFound before
        the first."""
        return self._latest.latest()

    def recent(self, max_age: float) -> PublishedScreen | None:
        """The latest screen as known at most ``max_age`` seconds ago, without a read."""
        return self._latest.recent(max_age)

    def forget(self) -> None:
        """Drop the latest screen held: the next answer reads the database again."""
        self._latest.forget()

    def at(self, moment: datetime) -> str:
        """The payload of the screen current at ``moment``; NotFound when none was yet."""
        return self._by_moment.at(moment)

    def publish(
        self,
        settings: Settings,
        screen: ComputedScreen,
        *,
        as_of: date | None = None,
        as_of_close: datetime | None = None,
    ) -> ScreenSummary:
        """Store ``screen`` as the latest one (or as history, as of ``as_of``, and for an
        intraday universe ``as_of_close``); the latest is served from here at once."""
        from pairscreen.screen_store.publish import publish_screen

        summary = publish_screen(settings, screen, as_of=as_of, as_of_close=as_of_close)
        if as_of is None:
            self.forget()
        return summary

    def verdict(self, plugins: Plugins, screen: PublishedScreen, a: Asset, b: Asset) -> str:
        """The verdict of the pair ``a``/``b`` in ``screen`` (JSON text), from the verdicts
        stored beside it."""
        from pairscreen.screen_store.verdict_store import pair_verdict

        return pair_verdict(plugins, screen, a, b)
