"""Point-in-time screens: computed as of a past day, stored as history.

A screen as of day ``D`` reads only the candles dated ``D`` or earlier, with the depeg events
active then, and is dated the moment ``D``'s close became final (00:00 UTC of ``D + 1``). It is
stored beside the regular screens but never becomes the latest one (``/screen/latest`` and
``/pairs`` serve the newest regular screen) and is never pruned by ``screens_kept``: it is the
record of what the screen said then, which ``/screens?at=`` serves.
"""

from __future__ import annotations

from datetime import date

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
