"""Market source ``demo``: the synthetic demo market (:mod:`pairscreen_plugins.demo_market`).

Every price is synthetic; the demo universe labels itself "synthetic demo market". Like a
real exchange's daily candles, only closed days are served: today's candle is still forming.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Candles, PluginOption, hookimpl
from pairscreen_plugins.demo_market.catalogue import (
    CRYPTO_BY_SYMBOL,
    DEFAULT_DAYS,
    DEFAULT_SEED,
    EPOCH,
)
from pairscreen_plugins.demo_market.model import simulate
from pairscreen_plugins.demo_market.streams import days_through

log = logging.getLogger(__name__)


class DemoMarketSource:
    """The ``demo`` market-data source. Options: ``seed`` (int), ``days`` (history length)."""

    name = "demo"

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        seed = int(options.get("seed", DEFAULT_SEED))
        days = int(options.get("days", DEFAULT_DAYS))
        if days < 1:
            raise ValueError(f"demo market: days must be at least 1, got {days}")
        until = min(until, clock.today() - timedelta(days=1))  # the last closed day
        if until < EPOCH:
            return
        world = simulate(seed, until)
        n = days_through(until)
        for asset in assets:
            symbol = asset.market_symbol
            if symbol not in world.volume:
                log.warning(
                    "demo market: no synthetic series for %s (symbol %r); skipped",
                    asset.ticker,
                    symbol,
                )
                continue
            spec = CRYPTO_BY_SYMBOL.get(symbol)
            history = days
            if spec is not None and spec.listed_days is not None:
                history = min(history, spec.listed_days)
            # ``days`` is how far back a first sync goes; after it, the days asked for (a
            # sync re-reads the stored ones it compares, however old).
            last_stored = since.get(asset.ticker)
            if last_stored is not None:
                first = max(0, (last_stored - EPOCH).days + 1)
            else:
                first = max(0, n - history)
            if first >= n:
                continue
            yield Candles(
                ticker=asset.ticker,
                dates=world.dates[first:n].copy(),
                close=world.close[symbol][first:n].copy(),
                volume=world.volume[symbol][first:n].copy(),
            )

    def fetch_bars(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        bar: str,
        since: Mapping[str, datetime | None],
        until: datetime,
    ) -> Iterator[Candles]:
        """Intraday bars ending on each simulated day's close
        (:mod:`~pairscreen_plugins.demo_market.intraday`); ``days`` bounds a first sync."""
        from pairscreen.contracts.bars import bar_size
        from pairscreen_plugins.demo_market.intraday import DAY_SECONDS, bars_between

        size = bar_size(bar)
        seed = int(options.get("seed", DEFAULT_SEED))
        days = int(options.get("days", DEFAULT_DAYS))
        if days < 1:
            raise ValueError(f"demo market: days must be at least 1, got {days}")
        last = int(until.timestamp())
        end = until.astimezone(UTC).date()
        if end < EPOCH:
            return
        world = simulate(seed, end)
        n = days_through(end)
        first_day = int(world.dates[0].astype(np.int64))
        for asset in assets:
            symbol = asset.market_symbol
            if symbol not in world.volume:
                log.warning("demo market: no synthetic series for %s; skipped", asset.ticker)
                continue
            spec = CRYPTO_BY_SYMBOL.get(symbol)
            history = days
            if spec is not None and spec.listed_days is not None:
                history = min(history, spec.listed_days)  # listed lately, as for daily candles
            after = since.get(asset.ticker)
            start = (first_day + max(0, n - history)) * DAY_SECONDS
            if after is not None:
                start = int(after.timestamp())
            times, close, volume = bars_between(
                seed,
                symbol,
                world.dates[:n],
                world.close[symbol][:n],
                world.volume[symbol][:n],
                float(world.log_return_sd[symbol]),
                size.seconds,
                start,
                last,
            )
            yield Candles(asset.ticker, times.astype("datetime64[s]"), close, volume)


@hookimpl
def pairscreen_register_market_sources() -> list[DemoMarketSource]:
    return [DemoMarketSource()]


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.demo]`` table; a key left out is not given to the source."""
    return [
        PluginOption("seed", DEFAULT_SEED, "the random seed: same seed and end day, same candles"),
        PluginOption("days", DEFAULT_DAYS, "days of history generated on the first sync"),
    ]
