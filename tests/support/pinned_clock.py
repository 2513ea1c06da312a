"""The test suite's "today": one fixed moment, whatever day the suite runs.

The demo market is generated to end on the service's today, so a suite reading the system
clock would screen a different market every day (a test's precondition could hold on one
day and not the next). :func:`pin_clock` sets ``PAIRSCREEN_CLOCK_SHIFT`` so that the
service's clock (``pairscreen.clock.now``) reads :data:`PINNED_NOW` when the suite starts
and flows on from there; every process the tests start (the CLI, live servers, the worker)
inherits the variable, and :func:`date_shift_script` gives the browser the same clock.
``PAIRSCREEN_TEST_NOW`` (ISO 8601, UTC) chooses another moment, which is how a test shows
that the suite's date-dependent fixtures hold on other days too.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from pairscreen import clock

# Noon UTC: a run of the suite (minutes) never crosses into the next day.
PINNED_NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
MOMENT_VARIABLE = "PAIRSCREEN_TEST_NOW"


def pinned_moment() -> datetime:
    """The moment the suite starts at: ``PAIRSCREEN_TEST_NOW`` when set, else PINNED_NOW."""
    text = os.environ.get(MOMENT_VARIABLE, "").strip()
    if not text:
        return PINNED_NOW
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def pin_clock() -> datetime:
    """Move the service's clock to the pinned moment for this process and its children."""
    moment = pinned_moment()
    os.environ[clock.SHIFT_VARIABLE] = clock.shift_to(moment)
    return moment


def date_shift_script() -> str | None:
    """JavaScript that moves the page's ``Date`` by the same shift (None when unshifted).

    Injected before any page script (Chromium's ``Page.addScriptToEvaluateOnNewDocument``),
    so the website's "closed 2 days ago" reads the same clock as the server it talks to.
    """
    milliseconds = round(clock.shift().total_seconds() * 1000)
    if not milliseconds:
        return None
    return (
        "(() => { const shift = SHIFT; const SystemDate = Date;"
        " class ShiftedDate extends SystemDate {"
        " constructor(...args) { if (args.length) { super(...args); }"
        " else { super(SystemDate.now() + shift); } }"
        " static now() { return SystemDate.now() + shift; } }"
        " globalThis.Date = ShiftedDate; })();"
    ).replace("SHIFT", str(milliseconds))
