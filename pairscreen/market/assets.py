"""``/assets``: every ticker of the universe with how much data it has and how old it is.

The list is what a client needs before asking for a pair: which tickers exist, from which
day to which day they have closes, whether the latest is stale, and for a tokenized asset
its peg status. It is rendered once and kept until the candles, the UTC hour or the latest
peg sample change, so a request costs one indexed read (the hour: a peg whose data went
stale turns ``unknown`` without a new sample). The peg column is the caller's
(``pegs.status.peg_status``): the peg package reads market data, not the other way round.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import peewee

from pairscreen import clock
from pairscreen.contracts import Asset, Candles
from pairscreen.db.models import PegSample
from pairscreen.market.candle_cache import CandleCache
from pairscreen.market.freshness import asset_freshness, day_of, last_days
from pairscreen.universe import Universe

PegOf = Callable[[Asset], dict[str, Any] | None]  # an asset's peg status, as /assets shows it


def asset_list(
    universe: Universe, candles: dict[str, Candles], peg_of: PegOf, at: datetime | None = None
) -> dict[str, Any]:
    """The ``/assets`` body, in universe order."""
    fresh = asset_freshness(universe, last_days(candles), at)
    assets = []
    for asset in universe.assets:
        c = candles.get(asset.ticker)
        has = c is not None and len(c.dates) > 0
        f = fresh[asset.ticker]
        assets.append(
            {
                "ticker": asset.ticker,
                "sector": asset.sector,
                "asset_class": asset.asset_class,
                "first_close": str(day_of(c.dates[0])) if c is not None and has else None,
                "last_close": str(f.last_day) if f.last_day is not None else None,
                "history_days": len(c.dates) if c is not None else 0,
                "latest_close": float(c.close[-1]) if c is not None and has else None,
                "age_days": f.age_days,
                "stale_after_days": f.limit_days,
                "stale": f.stale,
                "peg": peg_of(asset),
            }
        )
    return {"generated_at": clock.iso(at or clock.now()), "count": len(assets), "assets": assets}


class AssetListCache:
    """The ``/assets`` body as JSON text, re-rendered only when something it shows changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # What the text was rendered from: the universe and candles (compared by identity:
        # the candle cache hands out a new dict when it reloads), the UTC hour, the last sample.
        self._sources: tuple[object, ...] = ()
        self._key: tuple[datetime, int | None] | None = None
        self._text = ""
        self._etag = ""

    def json(self, universe: Universe, candles: CandleCache, peg_of: PegOf) -> str:
        """The body for ``universe``; needs the request's database connection."""
        return self.tagged(universe, candles, peg_of)[0]

    def tagged(self, universe: Universe, candles: CandleCache, peg_of: PegOf) -> tuple[str, str]:
        """The body and its ``ETag`` (a checksum of the text: a client polling the list gets
        ``304`` until something it shows changed)."""
        current = candles.get()
        latest_sample = PegSample.select(peewee.fn.MAX(PegSample.id)).scalar()
        hour = clock.now().astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        key = (hour, latest_sample)
        with self._lock:
            same = len(self._sources) == 2 and all(
                a is b for a, b in zip(self._sources, (universe, current), strict=True)
            )
            if not same or key != self._key:
                self._text = json.dumps(asset_list(universe, current, peg_of), allow_nan=False)
                self._etag = f'W/"assets-{zlib.crc32(self._text.encode()):08x}"'
                self._sources, self._key = (universe, current), key
            return self._text, self._etag
