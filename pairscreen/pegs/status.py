"""Per-asset peg status as the snapshot shows it, and the depeg events ``/peg-events`` lists.

The status is the latest peg sample's, unless the newest comparison (healthy or unhealthy
sample) is older than its data allows: once the older of its two prices is past the asset
class's staleness limit, the status is ``unknown`` with the sentence saying which price
stopped, whatever that comparison said (no new sample is written while no price is new, so
the latest sample alone would keep saying it). ``unhealthy_since`` is the first unhealthy
sample of the current unhealthy run (the unhealthy samples after the last healthy one:
``unknown`` samples neither extend nor break a run), shown as soon as the run starts,
before it is long enough to be an event; ``active_event`` says whether the asset is in an
active depeg event whose data is still current. ``token_observed_at`` and
``reference_observed_at`` are the newest observations of each price the samples recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from peewee import fn

from pairscreen import clock
from pairscreen.contracts import Asset, DepeggedLeg
from pairscreen.contracts.assets import DEFAULT_PEG_THRESHOLD_PCT
from pairscreen.db import rows
from pairscreen.db.models import JobRun, PegEvent, PegSample
from pairscreen.pegs.observations import Observed, reference_symbol, staleness_limit
from pairscreen.universe import Universe


def depegged_tickers() -> set[str]:
    """Tickers with an active depeg event (they are kept out of the screen)."""
    return {row.ticker for row in PegEvent.select(PegEvent.ticker).where(PegEvent.active)}


def active_depegs(at: datetime | None = None) -> dict[str, DepeggedLeg]:
    """Each ticker in an active depeg event, with the event's first unhealthy sample, so a
    rejection can say which leg depegged and since when.

    ``at`` asks for the events active at that past moment instead of now (a point-in-time
    screen): begun by then and not yet closed then.
    """
    events = PegEvent.select(PegEvent.ticker, PegEvent.first_unhealthy)
    if at is None:
        events = events.where(PegEvent.active)
    else:
        still_open = PegEvent.active | (PegEvent.closed_at > at)
        events = events.where((PegEvent.first_unhealthy <= at) & still_open)
    out: dict[str, DepeggedLeg] = {}
    for event in events.order_by(PegEvent.first_unhealthy.desc()):
        out[event.ticker] = DepeggedLeg(event.ticker, event.first_unhealthy)  # earliest wins
    return out


def depegged_legs(active: Mapping[str, DepeggedLeg], *tickers: str) -> tuple[DepeggedLeg, ...]:
    """The legs among ``tickers`` in an active depeg event, in the order given."""
    return tuple(active[t] for t in tickers if t in active)


def threshold_pct(asset: Asset) -> float:
    """The asset's configured peg threshold, else its asset class's default."""
    if asset.peg is not None:
        return asset.peg.threshold_pct
    return DEFAULT_PEG_THRESHOLD_PCT.get(asset.asset_class, 1.0)


def unhealthy_since(ticker: str) -> datetime | None:
    """The start of the ticker's current unhealthy run, None when it is not in one."""
    last_healthy = (
        PegSample.select(PegSample.sampled_at)
        .where((PegSample.ticker == ticker) & (PegSample.status == "healthy"))
        .order_by(PegSample.sampled_at.desc())
        .first()
    )
    run = PegSample.select(PegSample.sampled_at).where(
        (PegSample.ticker == ticker) & (PegSample.status == "unhealthy")
    )
    if last_healthy is not None:
        run = run.where(PegSample.sampled_at > last_healthy.sampled_at)
    first = run.order_by(PegSample.sampled_at).first()
    return first.sampled_at if first else None


def last_observed(ticker: str) -> Observed:
    """The newest token and reference observations among ``ticker``'s samples."""
    query = PegSample.select(
        fn.MAX(PegSample.token_observed_at), fn.MAX(PegSample.reference_observed_at)
    ).where(PegSample.ticker == ticker)
    token, reference = next(rows.tuples(query))
    return Observed(token, reference)


def stale_reason(
    universe: Universe, ticker: str, asset_class: str, at: datetime, *, compared: bool = True
) -> str:
    """Why ``ticker``'s newest comparison no longer holds at ``at`` (a price it compared is
    past the class's staleness limit and was not observed since); one sentence, "" when it
    holds. ``compared=False``: without a comparison, its newest sample's prices are judged."""
    query = PegSample.select().where(PegSample.ticker == ticker)
    comparisons = query.where(PegSample.status.in_(["healthy", "unhealthy"]))
    sample = comparisons.order_by(PegSample.sampled_at.desc()).first()
    if sample is None and not compared:
        sample = query.order_by(PegSample.sampled_at.desc()).first()
    if sample is None:
        return ""
    observed = Observed(sample.token_observed_at, sample.reference_observed_at)
    limit = staleness_limit(universe, asset_class)
    reference = reference_symbol(universe, ticker)
    return observed.stale_reason(
        ticker, reference, sample.sampled_at, limit, at, last_observed(ticker)
    )


def observed_json(observed: Observed) -> dict[str, str | None]:
    return {
        "token_observed_at": clock.iso(observed.token) if observed.token else None,
        "reference_observed_at": clock.iso(observed.reference) if observed.reference else None,
    }


def peg_status(
    asset: Asset, universe: Universe, at: datetime | None = None
) -> dict[str, Any] | None:
    """The latest peg status of a tokenized asset at ``at`` (default now); None for native
    crypto."""
    if not asset.is_tokenized:
        return None
    at = at or clock.now()
    sample = (
        PegSample.select()
        .where(PegSample.ticker == asset.ticker)
        .order_by(PegSample.sampled_at.desc())
        .first()
    )
    active = PegEvent.select().where((PegEvent.ticker == asset.ticker) & PegEvent.active).exists()
    if sample is None:
        return {
            "status": "unknown",
            "drift_pct": None,
            "market_price": None,
            "reference_price": None,
            "reference_source": "",
            "threshold_pct": threshold_pct(asset),
            "checked_at": None,
            "unhealthy_since": None,
            "active_event": active,
            "reason": f"{asset.ticker}: never sampled",
            "token_observed_at": None,
            "reference_observed_at": None,
        }
    stale = stale_reason(universe, asset.ticker, asset.asset_class, at, compared=False)
    since = None if stale else unhealthy_since(asset.ticker)
    return {
        "status": "unknown" if stale else sample.status,
        "drift_pct": None if stale else sample.drift_pct,
        "market_price": sample.market_price,
        "reference_price": sample.reference_price,
        "reference_source": sample.reference_source,
        "threshold_pct": sample.threshold_pct,
        "checked_at": clock.iso(sample.sampled_at),
        "unhealthy_since": clock.iso(since) if since else None,
        "active_event": active and not stale,
        "reason": stale or sample.reason or None,
        **observed_json(last_observed(asset.ticker)),
    }


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
        **observed_json(last_observed(event.ticker)),
    }


def active_events(universe: Universe, at: datetime | None = None) -> dict[str, Any]:
    """The active events whose data is still current at ``at`` (default now: an event whose
    data went stale since the detector last ran is not listed), when pegs were last checked
    (``checked_at``, null when never) and last really compared with a reference
    (``compared_at``: the newest sample with a known status; null when every sample was
    unknown), and ``note``, a sentence saying so."""
    at = at or clock.now()
    events = PegEvent.select().where(PegEvent.active).order_by(PegEvent.ticker)
    current = [e for e in events if not stale_reason(universe, e.ticker, e.asset_class, at)]
    run = JobRun.get_or_none(JobRun.name == PEG_JOB)
    checked = run.finished_at if run else None
    compared = (
        PegSample.select(fn.MAX(PegSample.sampled_at))
        .where(PegSample.status.in_(["healthy", "unhealthy"]))
        .scalar()
    )
    return {
        "events": [event_json(e) for e in current],
        "checked_at": clock.iso(checked) if checked else None,
        "compared_at": clock.iso(compared) if compared else None,
        "note": check_note(checked, compared),
    }


def check_note(checked: datetime | None, compared: datetime | None) -> str:
    """For a person: when pegs were last checked and really compared, or that they never were."""
    if checked is None:
        return "Pegs have never been checked on this service: no peg sample was ever taken."
    text = f"Pegs were last checked at {clock.iso(checked)}"
    if compared is None:
        return text + ", but no token price was ever compared with a fresh reference."
    return text + f"; the newest comparison with a reference is from {clock.iso(compared)}."
