"""Point-in-time screens: computed as of a past day, stored as history.

A screen as of day ``D`` reads only the candles dated ``D`` or earlier, with the depeg events
active then, and is dated the moment ``D``'s close became final (00:00 UTC of ``D + 1``). It is
stored beside the regular screens but never becomes the latest one (``/screen/latest`` and
``/pairs`` serve the newest regular screen) and is never pruned by ``screens_kept``: it is the
record of what the screen said then, which ``/screens?at=`` serves.

An intraday universe screens as of a bar's close instead (:func:`run_screen_as_of_close`):
the bars closed by then, dated that close, stored with the day of its last bar as ``as_of``
and the close itself as ``as_of_close``.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from pairscreen.market.cutoff import close_of
from pairscreen.progress import Progress, no_progress
from pairscreen.runtime import Runtime
from pairscreen.screen_store.publish import ScreenSummary
from pairscreen.screening.screen import screen_text


def run_screen_as_of(
    rt: Runtime,
    day: date,
    *,
    processes: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress = no_progress,
) -> ScreenSummary:
    """Screen with the candles known at the close of ``day`` and store it as history.

    A second screen as of the same day replaces the first (same inputs, newer code or data
    corrections), so each past day has one answer.
    """
    computed = screen_text(
        rt,
        close_of(day),
        processes=processes,
        executor=executor,
        scheduler=scheduler,
        on_progress=on_progress,
        as_of=day,
    )
    return rt.screens.publish(rt.settings, computed, as_of=day)


def run_screen_as_of_close(
    rt: Runtime,
    close: datetime,
    *,
    processes: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress = no_progress,
) -> ScreenSummary:
    """Screen an intraday universe with the bars closed at ``close`` (a bar's close time,
    aware UTC) or earlier, and store it as history; again as of the same close replaces it.
    Its ``as_of`` day is the day that last bar belongs to (a bar closing at 00:00 is the
    day before's last)."""
    computed = screen_text(
        rt,
        close,
        processes=processes,
        executor=executor,
        scheduler=scheduler,
        on_progress=on_progress,
        as_of=close,
    )
    day = (close - timedelta(seconds=1)).date()
    return rt.screens.publish(rt.settings, computed, as_of=day, as_of_close=close)
