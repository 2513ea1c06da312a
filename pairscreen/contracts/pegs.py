"""The peg contracts: an independent reference price for what a token claims to track, a
token's intraday price, and the depeg events a plugin may listen to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, runtime_checkable

from pairscreen.contracts.assets import Asset

__all__ = ["IntradayMarketPrice", "PegEventChange", "PegSource", "ReferenceQuote"]


@dataclass(frozen=True)
class ReferenceQuote:
    """A reference price and the time the source says it is from."""

    source: str
    reference: str
    price: float
    as_of: datetime


@runtime_checkable
class PegSource(Protocol):
    """An independent price for what a tokenized asset claims to track (XAU, AAPL, a NAV)."""

    @property
    def name(self) -> str: ...

    @property
    def max_age(self) -> timedelta:
        """An answer older than this (at the sampling time) does not count."""
        ...

    def reference_price(
        self, reference: str, at: datetime, options: Mapping[str, Any]
    ) -> ReferenceQuote | None:
        """Return the latest quote at or before ``at``, or None when the source has none."""
        ...


@runtime_checkable
class IntradayMarketPrice(Protocol):
    """An optional capability of a peg source: the token's own market price at any time.

    A market whose candles are daily knows a token's price only at each day's close; a peg
    check at a given hour needs the price at that hour. The peg source named like the
    universe's market source may offer it (the demo's does); the sampler uses it when the
    source satisfies this Protocol and falls back to the last daily close otherwise.
    """

    def market_price(self, asset: Asset, at: datetime, options: Mapping[str, Any]) -> float | None:
        """The token's price at ``at``, or None when the source has none."""
        ...


@dataclass(frozen=True)
class PegEventChange:
    """A depeg event that opened or closed, passed to ``pairscreen_peg_event_changed``."""

    ticker: str
    asset_class: str
    change: Literal["opened", "closed"]
    first_unhealthy: datetime
    last_unhealthy: datetime
    median_drift_pct: float
    sample_count: int
    reference_source: str
    # Why a closed event ended: "recovered" (a healthy sample) or "stale" (its token or
    # reference price was no longer observed within the asset class's staleness limit:
    # nobody knows whether it recovered); "" for an opened event.
    ended: Literal["", "recovered", "stale"] = ""
    end_reason: str = ""  # the stale end's sentence ("PAXG: reference XAU last observed ...")
