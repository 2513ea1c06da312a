"""When the worker screens: after the universe's bars close, not on a fixed interval.

A screen can only change when a bar closes, so the worker screens once per closed bar (or
per ``every`` bars) a ``delay`` after the close, which gives the exchange time to publish it:
an hourly universe at 14:05, 15:05, ... UTC, a daily one at 00:05 UTC, after every asset's
day has closed. A fixed interval either screens the same data again (a daily universe
every 6 hours) or lags the bars (an hourly one).

The close times are the bar's UTC grid (``pairscreen.contracts.bars``): multiples of
``every`` bar lengths counted from 1970-01-01T00:00Z, so they fall on the same wall-clock
times every day whatever the worker's start time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.triggers.base import BaseTrigger

from pairscreen import clock
from pairscreen.contracts.bars import BarSize

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ScreenSchedule:
    """Screen ``delay`` after every ``every``-th close of ``bar``; retry a failed run after
    ``retry`` (a sync that could not reach its source) rather than a whole step later."""

    bar: BarSize
    every: int = 1
    delay: timedelta = timedelta(minutes=5)
    retry: timedelta = timedelta(minutes=15)

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError(f"the screen runs every 1 or more bars, got {self.every}")
        if not timedelta(0) <= self.delay < self.step:
            raise ValueError(
                f"the screen's delay after a close must be at least 0 and shorter than its "
                f"step ({_span(self.step)}), got {_span(self.delay)}"
            )

    @property
    def step(self) -> timedelta:
        """The time between two screens: ``every`` bar lengths."""
        return timedelta(seconds=self.bar.seconds * self.every)

    def last_at_or_before(self, moment: datetime) -> datetime:
        """The latest screen time of the schedule at or before ``moment``."""
        step = self.step.total_seconds()
        since = (moment.astimezone(UTC) - _EPOCH - self.delay).total_seconds()
        return _EPOCH + self.delay + timedelta(seconds=(since // step) * step)

    def next_after(self, moment: datetime) -> datetime:
        """The first screen time of the schedule strictly after ``moment``."""
        return self.last_at_or_before(moment) + self.step

    def first_due(self, last_finished: datetime | None, now: datetime) -> datetime:
        """When a starting worker screens first: at once when no screen ran since the latest
        scheduled time (never, or a close passed while no worker ran), else at the next."""
        if last_finished is None or last_finished < self.last_at_or_before(now):
            return now
        return self.next_after(now)

    def retry_at(self, failed_at: datetime) -> datetime | None:
        """When to try a failed screen again: ``retry`` later, or None when the next scheduled
        screen comes first anyway."""
        again = failed_at + self.retry
        return again if again < self.next_after(failed_at) else None

    def describe(self) -> str:
        """The schedule in a line: ``after every 1h bar close + 5 min``."""
        if self.bar.intraday:
            closes = (
                f"every {self.bar.name} bar close"
                if self.every == 1
                else f"every {self.every} {self.bar.name} bar closes"
            )
        else:
            closes = (
                "each daily close (00:00 UTC)"
                if self.every == 1
                else f"every {self.every} daily closes (00:00 UTC)"
            )
        return f"after {closes} + {_span(self.delay)}"


class ScreenTrigger(BaseTrigger):  # type: ignore[misc]  # APScheduler ships no type hints
    """APScheduler's trigger for a :class:`ScreenSchedule`, on the service's clock.

    The next time is always the schedule's next point after "now", never the previous
    fire time plus an interval: a retry moved to 00:20 must not move the next day's screen
    to 00:20, and a long screen must not push the next one off the grid.
    """

    def __init__(self, schedule: ScreenSchedule):
        self.schedule = schedule

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        shift = clock.shift()  # APScheduler waits on the system clock, the grid is the service's
        following = self.schedule.next_after(now + shift)
        if previous_fire_time is not None:  # never the same screen time twice
            following = max(following, self.schedule.next_after(previous_fire_time + shift))
        return following - shift

    def __str__(self) -> str:
        return f"screen {self.schedule.describe()}"


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds % 3600 == 0 and seconds:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0 and seconds:
        return f"{seconds // 60} min"
    return f"{seconds} s"
