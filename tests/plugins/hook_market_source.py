"""Test plugin: a market-data source ``hook_steady`` whose every asset rises one unit a day.

Each asset starts at a price derived from its ticker, so a pair's ratio is known exactly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np

from pairscreen import Asset, Candles, hookimpl


def start_price(ticker: str) -> float:
    return 10.0 * (1 + sum(map(ord, ticker)) % 7)


class SteadySource:
    name = "hook_steady"

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        days = int(options.get("days", 30))
        first = until - timedelta(days=days - 1)
        for asset in assets:
            after = since.get(asset.ticker)
            start = max(first, after + timedelta(days=1)) if after else first
            n = (until - start).days + 1
            if n <= 0:
                continue
            offset = (start - first).days
            closes = start_price(asset.ticker) + offset + np.arange(n, dtype=float)
            dates = np.datetime64(start, "D") + np.arange(n)
            yield Candles(asset.ticker, dates, closes, np.full(n, 1000.0))


@hookimpl
def pairscreen_register_market_sources() -> list[SteadySource]:
    return [SteadySource()]
