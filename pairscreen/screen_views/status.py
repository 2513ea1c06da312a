"""When the latest screen was computed, how long it took and whether its data is stale:
what an operator watches.

A screen's ``generated_at`` is the moment its computation started (unless it was run as of
another day, ``screen run --as-of``), and the ``screen`` job-run row records when the latest
one was published, so their difference is the last screen's duration. Nothing here is
cached: health checks and metrics scrapes want the database's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pairscreen import clock
from pairscreen.contracts import bar_size
from pairscreen.db.models import JobRun, Screen
from pairscreen.errors import NotFound
from pairscreen.market.bar_store import last_closes
from pairscreen.market.freshness import asset_freshness, bar_freshness_of, last_days
from pairscreen.runtime import Runtime
from pairscreen.screen_views.staleness import Staleness, serve_latest


@dataclass(frozen=True)
class ScreenStatus:
    generated_at: datetime
    published_at: datetime | None  # None when no run recorded its end (an old database)

    def age_seconds(self, now: datetime) -> float:
        return max(0.0, (now - self.generated_at).total_seconds())

    @property
    def duration_seconds(self) -> float | None:
        """From start to publication; None when unknown or run as of a past time."""
        if self.published_at is None or self.published_at < self.generated_at:
            return None
        took = (self.published_at - self.generated_at).total_seconds()
        return took if took < 86400 else None  # a screen run --as-of a past day


def latest_screen_status() -> ScreenStatus | None:
    """The latest screen's times; None before the first screen."""
    latest = Screen.select(Screen.generated_at).where(Screen.as_of.is_null())
    row = latest.order_by(Screen.id.desc()).limit(1).first()
    if row is None:
        return None
    run = JobRun.get_or_none(JobRun.name == "screen")
    return ScreenStatus(row.generated_at, run.finished_at if run is not None else None)


def stale_asset_count(rt: Runtime, at: datetime | None = None) -> int:
    """How many assets of the universe are stale now (no close within their class's limit;
    an asset without candles is not counted: it has no age). On an intraday universe, each
    asset's last stored bar closed by ``at``, judged in bars and time."""
    bar = bar_size(rt.universe.bar)
    if bar.intraday:
        moment = at or clock.now()
        until = bar.last_closed(moment)
        closes = {t: c for t, c in last_closes(bar).items() if c <= until}
        fresh = bar_freshness_of(rt.universe, bar, closes, moment)
    else:
        fresh = asset_freshness(rt.universe, last_days(rt.candles.get()), at)
    return sum(f.stale for f in fresh.values())


def latest_screen_staleness(rt: Runtime, at: datetime | None = None) -> Staleness | None:
    """The latest screen's staleness judged at ``at`` (default now); None before the first."""
    try:
        screen = rt.screens.latest()
    except NotFound:
        return None
    return serve_latest(rt.universe, screen, at or clock.now()).staleness
