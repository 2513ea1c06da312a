"""Candles as they were known at the close of a past day: the point-in-time view.

A screen or an evaluation "as of" day ``D`` may read only what existed when ``D``'s close
became final (24:00 UTC of ``D``): every candle dated after ``D`` is cut away, per asset, so
no later price can leak into a past verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta

import numpy as np

from pairscreen.contracts import Candles


def candles_until(candles: Mapping[str, Candles], day: date) -> dict[str, Candles]:
    """Each asset's candles dated ``day`` or earlier; an asset with none left is omitted."""
    return closes_until(candles, np.datetime64(day, "D"))


def bars_until(candles: Mapping[str, Candles], moment: datetime) -> dict[str, Candles]:
    """Each asset's intraday bars that closed at ``moment`` (aware, UTC) or earlier: a bar is
    dated by its close time, so a bar closing exactly then is known."""
    seconds = int(moment.astimezone(UTC).timestamp())
    return closes_until(candles, np.datetime64(seconds, "s"))


def closes_until(candles: Mapping[str, Candles], last: np.datetime64) -> dict[str, Candles]:
    """Each asset's candles dated ``last`` or earlier (any datetime64 unit)."""
    out: dict[str, Candles] = {}
    for ticker, series in candles.items():
        n = int(np.searchsorted(series.dates, last, side="right"))
        if n == 0:
            continue
        if n == len(series.dates):
            out[ticker] = series
        else:
            out[ticker] = Candles(ticker, series.dates[:n], series.close[:n], series.volume[:n])
    return out


def close_of(day: date) -> datetime:
    """The moment ``day``'s daily close is final: 00:00 UTC of the next day."""
    return datetime.combine(day + timedelta(days=1), time.min, UTC)
