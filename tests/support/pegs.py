"""Peg rows the tests write straight into the database: an active depeg event and a fresh
unhealthy sample, the two states the screen, the pegs page and ``/assets`` react to."""

from __future__ import annotations

from datetime import datetime, timedelta

from pairscreen import clock
from pairscreen.db.models import PegEvent, PegSample


def open_depeg_event(ticker: str, now: datetime, asset_class: str = "tokenized_metal") -> None:
    """An event still active at ``now``, unhealthy for the last 20 hours (21 samples)."""
    PegEvent.create(
        ticker=ticker,
        asset_class=asset_class,
        first_unhealthy=now - timedelta(hours=20),
        last_unhealthy=now,
        median_drift_pct=-2.5,
        sample_count=21,
        reference_source="demo",
    )


def record_unhealthy_sample(ticker: str) -> None:
    """A sample taken now of ``ticker`` at half its reference price (drift -50 %)."""
    PegSample.create(
        ticker=ticker,
        sampled_at=clock.now(),
        status="unhealthy",
        market_price=1.0,
        reference_price=2.0,
        reference_source="test",
        drift_pct=-50.0,
        threshold_pct=1.0,
    )
