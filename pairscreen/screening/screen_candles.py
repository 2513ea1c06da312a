"""What a screen reads: a daily universe's candles, or an intraday universe's closed bars.

A daily universe reads the candle cache as it always has. An intraday one reads every bar
stored at its size that has closed at the service's clock
(:func:`~pairscreen.market.bar_store.load_closed_bars`): the dates are close times, and the
engine puts them on the bar's numpy unit. A bar is dated by its close, so the last bar of a
UTC day closes at 00:00 of the next: :func:`bar_day` gives the day a bar belongs to, which is
what a daily candle's date says, so that ages in days mean the same at every bar.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date

import numpy as np

from pairscreen.contracts import Candles
from pairscreen.contracts.bars import BarSize
from pairscreen.db.connection import database
from pairscreen.market.bar_store import load_closed_bars
from pairscreen.market.freshness import day_of
from pairscreen.runtime import Runtime

_ONE_SECOND = np.timedelta64(1, "s")


def screen_candles(rt: Runtime, bar: BarSize) -> Mapping[str, Candles]:
    """The candles a screen of ``rt``'s universe computes on, at ``bar``."""
    if not bar.intraday:
        return rt.candles.get()
    return _closed_bars(bar, None)


def pair_candles(rt: Runtime, bar: BarSize, tickers: Iterable[str]) -> Mapping[str, Candles]:
    """What a snapshot of ``tickers`` computes on: the cached daily candles, or those
    assets' closed bars alone (a request reads two assets, not the universe)."""
    if not bar.intraday:
        return rt.candles.get()
    return _closed_bars(bar, tickers)


def _closed_bars(bar: BarSize, tickers: Iterable[str] | None) -> dict[str, Candles]:
    if database.is_closed():
        with database.connection_context():
            return load_closed_bars(bar, tickers)
    return load_closed_bars(bar, tickers)


def bar_day(value: np.datetime64, bar: BarSize) -> date:
    """The UTC day of the ``bar`` closing at ``value`` (the candle's own day for daily
    candles): the bar closing at 00:00 is the previous day's last."""
    if not bar.intraday:
        return day_of(value)
    return day_of(value.astype("datetime64[s]") - _ONE_SECOND)
