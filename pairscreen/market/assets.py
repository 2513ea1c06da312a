"""``/assets``: every ticker of the universe with how much data it has and how old it is.

The list is what a client needs before asking for a pair: which tickers exist, from which
day to which day they have closes, whether the latest is stale, and for a tokenized asset
its peg status. It is rendered once and kept until the candles, the UTC hour or the latest
peg sample change, so a request costs one indexed read (the hour: a peg whose data went
stale turns ``unknown`` without a new sample). The peg column is the caller's
(``pegs.status.peg_status``): the peg package reads market data, not the other way round.

On an intraday universe the list sums up the closed bars instead
(:mod:`pairscreen.market.bar_history`: first day, days and last bar, without unpacking them
all), days being the UTC days the bars belong to, and adds each asset's lag in bars and
seconds (the stale decision's, :mod:`pairscreen.market.freshness`); it is rendered again
when a bar closes or a sync stores one.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np
import peewee

from pairscreen import clock
from pairscreen.contracts import Asset, Candles
from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.db.models import PegSample
from pairscreen.market.bar_history import CloseHistory, bar_histories
from pairscreen.market.bar_store import last_closes
from pairscreen.market.candle_cache import CandleCache
from pairscreen.market.freshness import AssetFreshness, asset_freshness, bar_freshness_of, day_of
from pairscreen.universe import Universe

PegOf = Callable[[Asset], dict[str, Any] | None]  # an asset's peg status, as /assets shows it


def asset_list(
    universe: Universe,
    histories: Mapping[str, CloseHistory],
    peg_of: PegOf,
    at: datetime | None = None,
    bar: BarSize = DAILY,
) -> dict[str, Any]:
    """The ``/assets`` body, in universe order: ``histories`` sum up each asset's daily
    candles (:func:`candle_histories`) or its closed bars of an intraday ``bar``
    (:func:`~pairscreen.market.bar_history.bar_histories`)."""
    fresh = _freshness(universe, histories, bar, at)
    assets = []
    for asset in universe.assets:
        h = histories.get(asset.ticker)
        f = fresh[asset.ticker]
        assets.append(
            {
                "ticker": asset.ticker,
                "sector": asset.sector,
                "asset_class": asset.asset_class,
                "first_close": str(day_of(h.first_day)) if h is not None else None,
                "last_close": str(f.last_day) if f.last_day is not None else None,
                "history_days": h.days if h is not None else 0,
                "latest_close": h.latest_close if h is not None else None,
                "age_days": f.age_days,
                "stale_after_days": f.limit_days,
                "stale": f.stale,
                **(_bar_lag(f, bar) if bar.intraday else {}),
                "peg": peg_of(asset),
            }
        )
    return {"generated_at": clock.iso(at or clock.now()), "count": len(assets), "assets": assets}


def candle_histories(candles: Mapping[str, Candles]) -> dict[str, CloseHistory]:
    """Each ticker's daily candles summed up as ``/assets`` shows them: a day is a close."""
    return {
        ticker: CloseHistory(c.dates[0], len(c.dates), c.dates[-1], float(c.close[-1]))
        for ticker, c in candles.items()
        if len(c.dates)
    }


def _freshness(
    universe: Universe, histories: Mapping[str, CloseHistory], bar: BarSize, at: datetime | None
) -> dict[str, AssetFreshness]:
    """The stale decision's freshness, from each asset's last close (a day, or a bar's close
    time), as :func:`~pairscreen.market.freshness.candle_freshness` takes it from candles."""
    if not bar.intraday:
        return asset_freshness(
            universe, {t: day_of(h.last_close) for t, h in histories.items()}, at
        )
    last = {
        t: int(h.last_close.astype("datetime64[s]").astype(np.int64)) for t, h in histories.items()
    }
    return bar_freshness_of(universe, bar, last, at)


def _bar_lag(f: AssetFreshness, bar: BarSize) -> dict[str, Any]:
    """An intraday asset's bar, last bar's close time and lag in bars and seconds."""
    last = None
    if f.last_close is not None:
        last = clock.iso(datetime.fromtimestamp(f.last_close, UTC))
    return {
        "bar": bar.name,
        "last_bar_close": last,
        "bars_behind": f.bars_behind,
        "behind_seconds": f.behind_seconds,
    }


class AssetListCache:
    """The ``/assets`` body as JSON text, re-rendered only when something it shows changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # What the text was rendered from: the universe and candles (compared by identity:
        # the candle cache hands out a new dict when it reloads), the UTC hour, the last sample.
        self._sources: tuple[object, ...] = ()
        self._key: tuple[object, ...] | None = None
        self._text = ""
        self._etag = ""

    def json(
        self, universe: Universe, candles: CandleCache, peg_of: PegOf, bar: BarSize = DAILY
    ) -> str:
        """The body for ``universe``; needs the request's database connection."""
        return self.tagged(universe, candles, peg_of, bar)[0]

    def tagged(
        self, universe: Universe, candles: CandleCache, peg_of: PegOf, bar: BarSize = DAILY
    ) -> tuple[str, str]:
        """The body and its ``ETag`` (a checksum of the text: a client polling the list gets
        ``304`` until something it shows changed). An intraday universe's bars are read
        again only when a bar has closed or a sync stored one since the last rendering."""
        latest_sample = PegSample.select(peewee.fn.MAX(PegSample.id)).scalar()
        now = clock.now()
        hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        key: tuple[object, ...] = (hour, latest_sample)
        current: dict[str, Candles] | None = None  # daily candles, compared by identity
        if bar.intraday:
            key = (*key, bar.last_closed(now), tuple(sorted(last_closes(bar).items())))
        else:
            current = candles.get()
        with self._lock:
            same = len(self._sources) == 2 and all(
                a is b for a, b in zip(self._sources, (universe, current), strict=True)
            )
            if not same or key != self._key:
                histories = (
                    candle_histories(current)
                    if current is not None
                    else bar_histories(bar, bar.last_closed(now))
                )
                body = asset_list(universe, histories, peg_of, now, bar)
                self._text = json.dumps(body, allow_nan=False)
                self._etag = f'W/"assets-{zlib.crc32(self._text.encode()):08x}"'
                self._sources, self._key = (universe, current), key
            return self._text, self._etag
