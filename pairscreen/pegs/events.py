"""Active depeg events as ``/peg-events`` lists them."""

from __future__ import annotations

from typing import Any

from pairscreen import clock
from pairscreen.db.models import JobRun, PegEvent

PEG_JOB = "peg_sample"


def event_json(event: PegEvent) -> dict[str, Any]:
    return {
        "ticker": event.ticker,
        "asset_class": event.asset_class,
        "first_unhealthy": clock.iso(event.first_unhealthy),
        "last_unhealthy": clock.iso(event.last_unhealthy),
        "hours_unhealthy": (event.last_unhealthy - event.first_unhealthy).total_seconds() / 3600,
        "median_drift_pct": event.median_drift_pct,
        "sample_count": event.sample_count,
        "reference_source": event.reference_source,
    }


def active_events() -> dict[str, Any]:
    """The active events, with ``checked_at`` of the last peg check (now when none ran)."""
    events = PegEvent.select().where(PegEvent.active).order_by(PegEvent.ticker)
    run = JobRun.get_or_none(JobRun.name == PEG_JOB)
    checked = run.finished_at if run else clock.now()
    return {"events": [event_json(e) for e in events], "checked_at": clock.iso(checked)}
