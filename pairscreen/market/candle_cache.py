"""The universe's candles held in memory by a serving process.

A live snapshot must not read the candle table per request. The cache reloads only when the
``candles`` data version in the database moved (checked at most once per ``check_seconds``).
"""

from __future__ import annotations

import threading
import time

from pairscreen.contracts import Candles
from pairscreen.db.models import DataVersion


class CandleCache:
    def __init__(self, check_seconds: float = 2.0):
        self.check_seconds = check_seconds
        self._lock = threading.Lock()
        self._candles: dict[str, Candles] = {}
        self._version: int | None = None
        self._checked_at = 0.0

    def get(self) -> dict[str, Candles]:
        """The candles by ticker, reloaded first if the database has newer ones."""
        if time.monotonic() - self._checked_at < self.check_seconds and self._version is not None:
            return self._candles
        with self._lock:
            if time.monotonic() - self._checked_at >= self.check_seconds or self._version is None:
                version = _stored_version()
                if version != self._version:
                    from pairscreen.market.sync import load_candles

                    self._candles = load_candles()
                    self._version = version
                self._checked_at = time.monotonic()
        return self._candles

    @property
    def loaded(self) -> bool:
        """Whether the candles are in memory (a first ``get`` has read them)."""
        return self._version is not None

    def invalidate(self) -> None:
        with self._lock:
            self._version = None


def _stored_version() -> int:
    row = DataVersion.get_or_none(DataVersion.name == "candles")
    return row.version if row else 0
