"""Peg reference source ``demo``: the synthetic demo market's reference series, hour by hour.

Every price here is synthetic, like the rest of the demo market.

References
----------
Gold (``XAU``) and the stocks (``AAPL``, ``MSTR`` ...) come from the demo market's intraday
reference series (:func:`pairscreen_plugins.demo_market.model.demo_reference_at`): during the
session (gold 00:00-22:00 UTC on weekdays, stocks 14:30-21:00 UTC on weekdays) the price is
as of the asked time; outside it the answer is the last close, ``as_of`` the close's time. The
source's maximum age is 90 minutes, so a weekend gold quote and a stock quote overnight or
at a weekend do not count: a tokenized equity is ``unknown`` while its market is closed,
never a false depeg. The fund NAV (``USTBNAV``) is struck daily at 21:00 UTC and accrues at
a known rate, so the answer is the indicative NAV at the asked time (the last strike accrued
since), as a fund publishes one intraday.

The tokens' hourly market price
-------------------------------
The demo market has daily candles only; a peg check needs the token's price at the sampling
hour. This source supplies it through :meth:`DemoPegSource.market_price` (the sampler asks
the peg source that has the market source's name): the reference's price at that hour times
``units_per_token`` times ``1 + premium``, the premium being a small deterministic wobble
(within +/-0.2 %, below every threshold) plus the scripted episodes below. It is scripted
rather than taken from the daily model's premium so that the demo shows exactly the depegs
it means to show; the daily model's own rare premium shocks would add events at random.

Scripted episodes
-----------------
Placed relative to an anchor: the option ``scenario_anchor`` (an ISO 8601 time), by default
the start of the hour in which the source was created, i.e. when the demo started.

* ``PAXG`` trades 2.5 % below gold over the last 21 hours in which gold traded, up to the
  anchor, and for 4 hours after it: an event (at least 12 h and 6 samples) that is active
  when the demo starts, whatever the weekday; over a weekend the gold quotes are stale, the
  samples ``unknown``, and the run from Friday stays open.
* ``USTB`` trades 0.9 % above its NAV for the 6 hours from 36 to 30 hours before the anchor:
  a short blip that never becomes an event.

Options (the ``[plugins.demo_reference]`` table; ``[peg_sources.demo]`` for one more release):
``seed`` (the demo market's seed, default the same as the market source's),
``scenario_anchor``, ``scenario = false`` to turn the episodes off, ``max_age_hours``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from pairscreen import clock
from pairscreen.contracts import Asset, PluginOption, ReferenceQuote, hookimpl
from pairscreen_plugins.demo_market.catalogue import DEFAULT_SEED, REFERENCE_BY_SYMBOL
from pairscreen_plugins.demo_market.model import demo_reference_at

HOUR = timedelta(hours=1)
MAX_AGE = timedelta(minutes=90)


@dataclass(frozen=True)
class Episode:
    """A scripted premium of one token over ``[start, stop)``."""

    ticker: str
    drift_pct: float
    start: datetime
    stop: datetime

    def covers(self, ticker: str, at: datetime) -> bool:
        return ticker == self.ticker and self.start <= at < self.stop


def hour_start(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def reference_quote(reference: str, at: datetime, seed: int) -> tuple[float, datetime]:
    """(price, as_of) of a demo reference at ``at``; KeyError for an unknown symbol."""
    price, as_of = demo_reference_at(reference, at, seed=seed)
    if REFERENCE_BY_SYMBOL[reference].kind == "nav":
        accrual = REFERENCE_BY_SYMBOL[reference].drift  # per day
        price *= math.exp(accrual * ((at - as_of) / timedelta(days=1)))
        as_of = at
    return price, as_of


@lru_cache(maxsize=16)
def demo_episodes(anchor: datetime, seed: int) -> tuple[Episode, ...]:
    """The scripted episodes around ``anchor`` (see the module docstring)."""
    # Walk back hour by hour until gold has traded (been fresh) for 21 sampled hours.
    start, fresh = anchor, 0
    for back in range(24 * 8):
        moment = anchor - back * HOUR
        _, as_of = reference_quote("XAU", moment, seed)
        if moment - as_of <= MAX_AGE:
            fresh += 1
            start = moment
            if fresh == 21:
                break
    return (
        Episode("PAXG", -2.5, start, anchor + 5 * HOUR),
        Episode("USTB", 0.9, anchor - 36 * HOUR, anchor - 30 * HOUR),
    )


def wobble_pct(ticker: str, at: datetime) -> float:
    """A token's everyday premium in percent: two slow waves, never beyond +/-0.18 %."""
    phase = zlib.crc32(ticker.encode("utf-8")) / 2**32 * 2 * math.pi
    hours = at.timestamp() / 3600
    return 0.12 * math.sin(2 * math.pi * hours / 19 + phase) + 0.06 * math.sin(
        2 * math.pi * hours / 7 + 2 * phase
    )


class DemoPegSource:
    """The ``demo`` peg reference source (see the module docstring)."""

    name = "demo"
    max_age = MAX_AGE
    # Its market price is intraday (the sampling time) and a quote counts for 90 minutes:
    # the two moments may be that far apart.
    max_skew = MAX_AGE

    def __init__(self) -> None:
        self.created = hour_start(clock.now())

    def reference_price(
        self, reference: str, at: datetime, options: Mapping[str, Any]
    ) -> ReferenceQuote | None:
        if reference not in REFERENCE_BY_SYMBOL:
            return None
        price, as_of = reference_quote(reference, at, _seed(options))
        return ReferenceQuote(source=self.name, reference=reference, price=price, as_of=as_of)

    def market_price(self, asset: Asset, at: datetime, options: Mapping[str, Any]) -> float | None:
        """The token's price at ``at``: its reference times the scripted premium."""
        if asset.peg is None or asset.peg.reference not in REFERENCE_BY_SYMBOL:
            return None
        seed = _seed(options)
        reference, _ = reference_quote(asset.peg.reference, at, seed)
        premium = wobble_pct(asset.ticker, at) + self.scripted_drift_pct(asset.ticker, at, options)
        return reference * asset.peg.units_per_token * (1 + premium / 100)

    def scripted_drift_pct(self, ticker: str, at: datetime, options: Mapping[str, Any]) -> float:
        if not options.get("scenario", True):
            return 0.0
        episodes = demo_episodes(self.anchor(options), _seed(options))
        return sum(e.drift_pct for e in episodes if e.covers(ticker, at))

    def anchor(self, options: Mapping[str, Any]) -> datetime:
        value = options.get("scenario_anchor")
        if value is None:
            return self.created
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _seed(options: Mapping[str, Any]) -> int:
    return int(options.get("seed", DEFAULT_SEED))


@hookimpl
def pairscreen_register_peg_sources() -> list[DemoPegSource]:
    return [DemoPegSource()]


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.demo_reference]`` table; a key left out is not given to the source."""
    return [
        PluginOption("seed", DEFAULT_SEED, "the demo market's seed (the market source's default)"),
        PluginOption("scenario", True, "play the scripted depeg episodes"),
        PluginOption(
            "scenario_anchor", "", "when the episodes end, ISO time (unset: when the source loaded)"
        ),
        PluginOption("max_age_hours", 1.5, "an answer older than this many hours does not count"),
        PluginOption(
            "max_skew_hours",
            1.5,
            "how many hours apart the token price's moment and the answer's may be",
        ),
        PluginOption(
            "max_deviation_pct",
            50.0,
            "an answer farther than this from the market price is a broken feed, not a depeg",
        ),
    ]
