"""How fresh an intraday universe's stored bars are, measured in bars and in time.

An asset's limit is its class's staleness in days (``[staleness]``, the daily sync's), kept a
span of time: an hourly asset of a 2-day class is stale once its last stored bar closed 48
bars or more before the last closed bar (the rule of ``pairscreen.market.freshness``, which
the screen, ``/assets`` and a snapshot apply). The sync of bars leads its report with this line,
as the daily sync leads with the stale days.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pairscreen.contracts.bars import DAY_SECONDS, BarSize
from pairscreen.market.bar_checks import iso_time
from pairscreen.market.freshness import bars_between, lag_reaches
from pairscreen.universe import Universe
from pairscreen.wording import plural


@dataclass(frozen=True)
class BarFreshness:
    """One asset's last stored bar against the last closed one."""

    ticker: str
    last_close: int  # epoch seconds of its last stored bar
    bars_behind: int  # bars closed since it
    limit_days: int  # its class's staleness, a span of time
    seconds: int  # the bar's length

    @property
    def stale(self) -> bool:
        return lag_reaches(self.bars_behind * self.seconds, self.limit_days)


def bar_freshness(
    universe: Universe, bar: BarSize, last_closes: Mapping[str, int], until: int
) -> dict[str, BarFreshness]:
    """Each stored asset's freshness: ``last_closes`` are their last bars' close times,
    ``until`` the last closed bar's (epoch seconds)."""
    return {
        a.ticker: BarFreshness(
            a.ticker,
            last_closes[a.ticker],
            bars_between(last_closes[a.ticker], until, bar.seconds),
            universe.staleness_days(a),
            bar.seconds,
        )
        for a in universe.assets
        if a.ticker in last_closes
    }


def bar_headline(fresh: Mapping[str, BarFreshness], bar: BarSize) -> str:
    """``2 of 3 assets are stale; the oldest is BTC, last bar closed … (N bars, D days
    behind the last closed 1h bar …, limit L days)``, or that none is."""
    if not fresh:
        return "no bars stored yet"
    stale = [f for f in fresh.values() if f.stale]
    if not stale:
        return (
            f"no stale assets: {plural(len(fresh), 'asset')} with {bar.name} bars, each within "
            "its class's limit"
        )
    oldest = max(stale, key=lambda f: f.bars_behind)
    days = oldest.bars_behind * bar.seconds / DAY_SECONDS
    return (
        f"{len(stale)} of {plural(len(fresh), 'asset')} {'is' if len(stale) == 1 else 'are'} "
        f"stale; the oldest is {oldest.ticker}, last bar closed {iso_time(oldest.last_close)} "
        f"({plural(oldest.bars_behind, 'bar')}, {days:,.1f} days behind the last closed "
        f"{bar.name} bar, limit {plural(oldest.limit_days, 'day')})"
    )
