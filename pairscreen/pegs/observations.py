"""When a peg's inputs were observed, and what follows from it (docs/api.md, peg status).

A peg sample compares a token price with a reference price, each observed at its own
moment. Two rules hang on those moments:

* **a sample is one new observation**: sampling again while neither price has a newer
  observation compares the same two prices again, which is no evidence at all (a day of
  daily closes sampled hourly would otherwise count 24 times toward a sustained event);
* **nothing stays active after its data ends**: a comparison is only as current as the
  older of its two prices. Once that price is older than the asset class's staleness limit
  (the universe's ``[staleness]``), whatever the comparison said is ``unknown`` now, and a
  depeg event built on it is over, as ``stale``, not as recovered.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pairscreen import clock
from pairscreen.market.freshness import age_days
from pairscreen.universe import DEFAULT_STALENESS_DAYS, Universe
from pairscreen.wording import plural


@dataclass(frozen=True)
class Observed:
    """When a sample's token and reference prices were observed (None: no such price)."""

    token: datetime | None
    reference: datetime | None

    def is_newer_than(self, previous: Observed | None) -> bool:
        """Whether either price was observed after ``previous``'s (no previous: yes)."""
        if previous is None:
            return True
        return _later(self.token, previous.token) or _later(self.reference, previous.reference)

    def stale_at(self, sampled_at: datetime, limit: timedelta) -> datetime:
        """The moment a comparison of these prices stops being current: its older price's
        observation plus ``limit`` (a sample stored without its moments: its own time)."""
        known = [t for t in (self.token, self.reference) if t is not None]
        return (min(known) if known else sampled_at) + limit

    def stale_reason(
        self,
        ticker: str,
        reference: str,
        sampled_at: datetime,
        limit: timedelta,
        at: datetime,
        newest: Observed | None = None,
    ) -> str:
        """Why a sample of these prices no longer holds at ``at``, one sentence naming the
        asset and the price that stopped: ``PAXG: reference XAU last observed
        2023-12-30T00:00:00+00:00, 700 days ago (its class allows 5 days)``; "" while it
        holds. ``newest`` (the newest observations since) leaves out a price observed again
        after the sample; when both were, the two were not comparable since."""
        if at <= self.stale_at(sampled_at, limit):
            return ""
        days = limit // timedelta(days=1)
        allows = f"(its class allows {plural(days, 'day')})"
        newest = newest or self
        stopped = [
            (what, moment)
            for what, moment, since in (
                ("token price", self.token, newest.token),
                (f"reference {reference}", self.reference, newest.reference),
            )
            if moment is not None and not _later(since, moment) and at - moment > limit
        ]
        if not stopped:
            return (
                f"{ticker}: token and reference last compared {clock.iso(sampled_at)}, "
                f"{observation_age(sampled_at, at)} ago {allows}"
            )
        parts = [
            f"{what} last observed {clock.iso(t)}, {observation_age(t, at)} ago"
            for what, t in stopped
        ]
        return f"{ticker}: {'; '.join(parts)} {allows}"


def _later(new: datetime | None, old: datetime | None) -> bool:
    return new is not None and (old is None or new > old)


def observation_age(moment: datetime, at: datetime) -> str:
    """How old a price observed at ``moment`` is at ``at``, as people read it everywhere:
    in days from a day on (``1,426 days``: :func:`~pairscreen.market.freshness.age_days` of
    the UTC day the price belongs to, a close at 24:00 belonging to the day it closes, so a
    peg reason says what ``/assets`` and the sync say), else in hours or minutes."""
    age = at - moment
    if age >= timedelta(days=1):
        belongs_to = (moment - timedelta(microseconds=1)).astimezone(UTC).date()
        return plural(age_days(belongs_to, clock.today(at)), "day", grouped=True)
    return duration_text(age)


def duration_text(span: timedelta) -> str:
    """A span of time between two moments: ``3 days`` from a day on, else hours or minutes."""
    if span >= timedelta(days=1):
        return plural(span // timedelta(days=1), "day", grouped=True)
    if span >= timedelta(hours=1):
        return f"{span / timedelta(hours=1):.1f} h"
    return f"{span / timedelta(minutes=1):.0f} min"


def staleness_limit(universe: Universe, asset_class: str) -> timedelta:
    """The asset class's staleness limit (the universe's ``[staleness]``)."""
    return timedelta(days=universe.staleness.get(asset_class, DEFAULT_STALENESS_DAYS["crypto"]))


def reference_symbol(universe: Universe, ticker: str) -> str:
    """The symbol ``ticker`` is pegged to, for a sentence ("price" once it left the universe)."""
    asset = universe.resolve(ticker)
    if asset is not None and asset.ticker == ticker and asset.peg is not None:
        return asset.peg.reference
    return "price"
