"""How old each asset's data is, so that no number is shown or ranked without its age.

A daily candle counts once its day has closed (24:00 UTC), so the newest usable day is
always the day before the current UTC day. An asset whose last close lags the current day
by more than its class allows (the universe's ``[staleness]``) is stale: its pairs are
rejected with a reason naming the asset and its last day, instead of ranking prices that
stopped moving only because the data stopped.

On an intraday universe the same limits (calendar days per class) are spans of time: an
asset's lag is the bars closed since its last bar, up to the last bar the clock has closed,
and it is stale once that lag reaches its class's limit (48 bars of a 2-day class on 1h).
That is the daily rule read at the bar's scale: a daily candle is stale once the days closed
since it reach the limit (age in days above the limit), whatever UTC day either falls on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Candles
from pairscreen.contracts.bars import DAY_SECONDS, BarSize
from pairscreen.engine.guarantees import PASSES, STALE_LEG, core_reason
from pairscreen.engine.guarantees import STALE as STALE  # re-exported: the core's code
from pairscreen.universe import Universe
from pairscreen.wording import plural


def last_closed_day(at: datetime | None = None) -> date:
    """The newest day whose candle has closed: yesterday, in UTC."""
    return clock.today(at) - timedelta(days=1)


def day_start(value: np.datetime64) -> datetime:
    """00:00 UTC of a ``datetime64`` day: how a candle's ``data_time`` is written."""
    return datetime.combine(day_of(value), datetime.min.time(), UTC)


def day_of(value: np.datetime64) -> date:
    """A ``datetime64`` day as a ``date``."""
    return date.fromisoformat(str(value.astype("datetime64[D]")))


def lag_reaches(behind_seconds: int, limit_days: int) -> bool:
    """Whether a lag of closed bars (in seconds) makes data stale against a limit in days:
    once it reaches the limit as a span of time. The one rule for bars: an asset, a stale
    screen's newest close, the sync's report and a peg sample's token price all apply it."""
    return behind_seconds >= limit_days * DAY_SECONDS


def bars_between(last_close: int, until: int, bar_seconds: int) -> int:
    """The bars that closed after a bar closing at ``last_close`` up to one closing at
    ``until`` (epoch seconds, both on the bar's grid): the lag in bars every intraday view
    counts, 0 when ``last_close`` is the newer."""
    return max(0, (until - last_close) // bar_seconds)


def age_days(last_day: date, today: date) -> int:
    """The age of data whose last close is dated ``last_day``, on the UTC day ``today``: whole
    days from the close's day to the current UTC day (yesterday's close, the newest there can
    be, is 1 day old). The one definition of an age in days: ``/assets``, a stale reason, the
    sync report, a peg sample's reason and the website all say this number."""
    return (today - last_day).days


@dataclass(frozen=True)
class AssetFreshness:
    """One asset's last close, its age in days (:func:`age_days`), and its limit."""

    ticker: str
    last_day: date | None  # None: no candles stored
    age_days: int | None
    limit_days: int
    # An intraday asset's lag (None on a daily universe): its bar, its last bar's close time
    # (epoch seconds) and the bars closed since, up to the last bar the clock has closed.
    bar: BarSize | None = None
    last_close: int | None = None
    bars_behind: int | None = None

    @property
    def behind_seconds(self) -> int | None:
        """The lag in time: the bars closed since its last one, in seconds."""
        if self.bar is None or self.bars_behind is None:
            return None
        return self.bars_behind * self.bar.seconds

    @property
    def stale(self) -> bool:
        behind = self.behind_seconds
        if self.bar is not None:
            return behind is not None and lag_reaches(behind, self.limit_days)
        return self.age_days is not None and self.age_days > self.limit_days

    def reason(self) -> str:
        """The filter reason of a pair with this leg: ``stale: X has no close since D (n days)``."""
        return f"{STALE}: {self.describe()}"

    def describe(self) -> str:
        """``X has no close since D (n days)``: the leg's part of a stale reason; for bars
        ``X has no 1h bar since T (49 bars, 49 h)``."""
        if self.bar is not None and self.last_close is not None:
            since = clock.iso(_moment(self.last_close))
            return (
                f"{self.ticker} has no {self.bar.name} bar since {since} "
                f"({plural(self.bars_behind or 0, 'bar', grouped=True)}, "
                f"{span_words(self.behind_seconds or 0)})"
            )
        return (
            f"{self.ticker} has no close since {self.last_day} "
            f"({plural(self.age_days or 0, 'day', grouped=True)})"
        )


def last_days(candles: Mapping[str, Candles]) -> dict[str, date]:
    """The last stored day of each ticker with candles."""
    return {t: day_of(c.dates[-1]) for t, c in candles.items() if len(c.dates)}


def asset_freshness(
    universe: Universe, last: Mapping[str, date], at: datetime | None = None
) -> dict[str, AssetFreshness]:
    """Every universe asset's freshness from its last day, against the current UTC day."""
    today = clock.today(at)
    return {
        asset.ticker: leg_freshness(universe, asset, last.get(asset.ticker), today)
        for asset in universe.assets
    }


def leg_freshness(
    universe: Universe, asset: Asset, last_day: date | None, today: date
) -> AssetFreshness:
    """One asset's freshness: what a live snapshot needs for its two legs, not the universe."""
    age = age_days(last_day, today) if last_day is not None else None
    return AssetFreshness(asset.ticker, last_day, age, universe.staleness_days(asset))


def bar_freshness_of(
    universe: Universe,
    bar: BarSize,
    last_closes: Mapping[str, int],
    at: datetime | None = None,
) -> dict[str, AssetFreshness]:
    """Every universe asset's freshness on an intraday universe, from its last bar's close
    time (epoch seconds): its lag in bars and time up to the last bar closed at ``at``, and
    its age in days from the day that bar belongs to (as a daily candle's)."""
    moment = at or clock.now()
    return {
        asset.ticker: leg_bar_freshness(universe, asset, bar, last_closes.get(asset.ticker), moment)
        for asset in universe.assets
    }


def leg_bar_freshness(
    universe: Universe, asset: Asset, bar: BarSize, last_close: int | None, at: datetime
) -> AssetFreshness:
    """One intraday asset's freshness (:func:`bar_freshness_of`)."""
    limit = universe.staleness_days(asset)
    if last_close is None:
        return AssetFreshness(asset.ticker, None, None, limit, bar)
    until = bar.last_closed(at)
    belongs_to = _moment(last_close - 1).date()  # the bar closing at 00:00 is the day before's
    behind = bars_between(last_close, until, bar.seconds)
    age = age_days(belongs_to, clock.today(at))
    return AssetFreshness(asset.ticker, belongs_to, age, limit, bar, last_close, behind)


def candle_freshness(
    universe: Universe,
    candles: Mapping[str, Candles],
    bar: BarSize,
    at: datetime | None = None,
) -> dict[str, AssetFreshness]:
    """The freshness of every asset from the candles a screen reads: in days for daily
    candles, in bars and time for intraday bars (their dates are close times)."""
    if not bar.intraday:
        return asset_freshness(universe, last_days(candles), at)
    return bar_freshness_of(universe, bar, last_close_times(candles), at)


def last_close_times(candles: Mapping[str, Candles]) -> dict[str, int]:
    """Each ticker's last bar's close time, epoch seconds."""
    return {
        t: int(c.dates[-1].astype("datetime64[s]").astype(np.int64))
        for t, c in candles.items()
        if len(c.dates)
    }


def span_words(seconds: int) -> str:
    """A lag in time, as a trader reads it: ``49 h``, ``45 min``, ``2 h 15 min``."""
    hours, minutes = divmod(seconds // 60, 60)
    if not hours:
        return f"{minutes} min"
    return f"{hours:,} h" + (f" {minutes} min" if minutes else "")


def _moment(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, UTC)


def stale_reason(fresh: Mapping[str, AssetFreshness], a: Asset, b: Asset) -> str:
    """The stale reason of a pair, naming every stale leg with its age, ``""`` when both are
    fresh: ``stale: PAXG has no close since 2025-01-02 (328 days); XAUT has no close since
    2022-12-31 (1,426 days)``."""
    legs = [fresh.get(asset.ticker) for asset in (a, b)]
    stale = [leg.describe() for leg in legs if leg is not None and leg.stale]
    return core_reason(STALE_LEG if stale else PASSES, stale_legs=stale)


def describe(fresh: Mapping[str, AssetFreshness]) -> str:
    """For a person: the newest and oldest last close, and every stale asset with its day."""
    known = [f for f in fresh.values() if f.last_day is not None]
    if not known:
        return "no candles stored yet"
    newest = max(f.last_day for f in known if f.last_day is not None)
    oldest = min(f.last_day for f in known if f.last_day is not None)
    text = f"newest close {newest}, oldest last close {oldest}"
    stale = [f"{f.ticker} (last close {f.last_day})" for f in known if f.stale]
    return text + (f"; stale: {', '.join(stale)}" if stale else "; no stale assets")
