"""Peg sampling: one peg sample per tokenized asset, then the depeg detector (docs/api.md).

For each tokenized asset at the sampling time ``at``:

* **market price**: the token's price at ``at`` when the universe's market source has an
  intraday price for it, else the close of the last full UTC day before ``at`` from the
  candle store. The intraday price comes from the peg source that carries the market
  source's name and satisfies :class:`~pairscreen.types.IntradayMarketPrice` (the demo's
  does: its market has daily candles only, its peg plugin knows the hourly prices);
* **reference**: every source the universe names for the asset (``peg.sources``) is asked
  for the asset's reference symbol with the options of its ``[peg_sources.<name>]`` table.
  An answer counts when it is a positive finite price, not from the future, not older than
  the source's maximum age (``max_age_hours`` in the source's options overrides the
  source's default) and, once scaled by ``units_per_token``, within ``max_deviation_pct``
  (default 50) of the market price: farther than that is a broken answer (wrong units, a
  bad feed), not a depeg. A source that raises or whose answer does not count is skipped
  and logged. The reference price is the median of the answers that count times
  ``units_per_token``, ``reference_source`` their names joined with "+";
* ``drift_pct = 100 * (market / reference - 1)``; the status is ``unhealthy`` when
  ``|drift_pct| > threshold_pct``, ``healthy`` otherwise, and ``unknown`` when there is no
  market price or no answer that counts: never a guess.

The samples are stored (one per ticker and time: sampling the same time again keeps the
first), samples older than the retention (``Settings.peg_retention_days``, default 90) are
deleted, the detector reconciles the depeg events, and the ``peg_sample`` job time, which
``/peg-events`` reports as ``checked_at``, is set, all in one transaction. The reference
sources are asked before it opens, since some of them are remote.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeGuard

import numpy as np

from pairscreen import clock
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import JobRun, PegSample
from pairscreen.pegs.detector import detect_events
from pairscreen.pegs.status import PEG_JOB, depegged_tickers, threshold_pct
from pairscreen.progress import Progress, no_progress
from pairscreen.runtime import Runtime
from pairscreen.types import Asset, Candles, IntradayMarketPrice, PegEventChange, ReferenceQuote

log = logging.getLogger(__name__)

DEFAULT_MAX_DEVIATION_PCT = 50.0
# A source's clock may run slightly ahead of ours; further ahead is a broken answer.
FUTURE_TOLERANCE = timedelta(minutes=5)


@dataclass(frozen=True)
class PegReading:
    """One tokenized asset's peg at one time, as stored in a :class:`PegSample`."""

    ticker: str
    status: str  # healthy | unhealthy | unknown
    market_price: float | None
    reference_price: float | None
    reference_source: str
    drift_pct: float | None
    threshold_pct: float


@dataclass(frozen=True)
class SamplingReport:
    sampled_at: datetime
    readings: tuple[PegReading, ...]
    inserted: int  # new samples (a time already sampled keeps its first sample)
    expired: int  # samples deleted by the retention
    changes: tuple[PegEventChange, ...]  # events opened or closed by this run
    active_events: tuple[str, ...]  # tickers in an active event afterwards

    def summary(self) -> str:
        counts = {
            s: sum(r.status == s for r in self.readings)
            for s in ("healthy", "unhealthy", "unknown")
        }
        text = (
            f"peg sample at {clock.iso(self.sampled_at)}: {len(self.readings)} tokenized "
            f"assets ({', '.join(f'{n} {s}' for s, n in counts.items())}), "
            f"{self.inserted} new samples"
        )
        for change in self.changes:
            text += f"; event {change.change}: {change.ticker}"
        return text + f"; active depeg events: {', '.join(self.active_events) or 'none'}"


def sample_pegs(rt: Runtime, at: datetime | None = None) -> SamplingReport:
    """Sample every tokenized asset at ``at`` (default now), store, detect, record the run."""
    at = (at or clock.now()).astimezone(UTC).replace(microsecond=0)
    candles = rt.candles.get()
    readings = tuple(read_peg(rt, a, at, candles) for a in rt.universe.assets if a.is_tokenized)
    rows = [{**asdict(r), "sampled_at": at} for r in readings]
    cutoff = clock.now() - timedelta(days=rt.settings.peg_retention_days)
    tickers = [r.ticker for r in readings]
    with write_transaction():
        already = (
            PegSample.select()
            .where((PegSample.sampled_at == at) & PegSample.ticker.in_(tickers))
            .count()
        )
        if rows:
            PegSample.insert_many(rows).on_conflict_ignore().execute()
        expired = PegSample.delete().where(PegSample.sampled_at < cutoff).execute()
        changes = detect_events(rt.plugins, rt.universe, tickers)
        finished = clock.now()
        JobRun.insert(name=PEG_JOB, finished_at=finished).on_conflict(
            conflict_target=[JobRun.name], update={JobRun.finished_at: finished}
        ).execute()
    return SamplingReport(
        sampled_at=at,
        readings=readings,
        inserted=len(rows) - already,
        expired=expired,
        changes=tuple(changes),
        active_events=tuple(sorted(depegged_tickers())),
    )


def backfill_pegs(
    rt: Runtime, hours: int, until: datetime | None = None, *, on_progress: Progress = no_progress
) -> list[SamplingReport]:
    """Sample each whole hour of the last ``hours`` hours, oldest first, then ``until``;
    ``on_progress`` hears of each moment sampled."""
    until = (until or clock.now()).astimezone(UTC)
    top = until.replace(minute=0, second=0, microsecond=0)
    moments = [top - timedelta(hours=h) for h in range(hours, 0, -1)]
    if top != until.replace(microsecond=0):
        moments.append(top)
    moments.append(until)
    reports: list[SamplingReport] = []
    on_progress(0, len(moments))
    for at in moments:
        reports.append(sample_pegs(rt, at))
        on_progress(len(reports), len(moments))
    return reports


def read_peg(rt: Runtime, asset: Asset, at: datetime, candles: Mapping[str, Candles]) -> PegReading:
    """One asset's peg at ``at`` (nothing stored)."""
    peg = asset.peg
    threshold = threshold_pct(asset)
    market = market_price(rt, asset, at, candles)
    names: list[str] = []
    prices: list[float] = []
    for name in peg.sources if peg else ():
        quote = _ask(rt, name, asset, at)
        if quote is None:
            continue
        assert peg is not None  # the loop runs over a pegged asset's sources only
        problem = _problem(rt, name, quote, at, market, peg.units_per_token)
        if problem:
            log.log(
                logging.INFO if problem.startswith("stale") else logging.WARNING,
                "peg source %s for %s (%s): %s; skipped",
                name,
                asset.ticker,
                peg.reference,
                problem,
            )
            continue
        names.append(name)
        prices.append(quote.price)
    reference = float(statistics.median(prices)) * peg.units_per_token if prices and peg else None
    drift = 100.0 * (market / reference - 1.0) if market and reference else None
    return PegReading(
        ticker=asset.ticker,
        status=peg_health(drift, threshold),
        market_price=market,
        reference_price=reference,
        reference_source="+".join(names),
        drift_pct=drift,
        threshold_pct=threshold,
    )


def peg_health(drift_pct: float | None, threshold_pct: float) -> str:
    """``unknown`` without a drift, ``unhealthy`` beyond the threshold, else ``healthy``."""
    if drift_pct is None:
        return "unknown"
    return "unhealthy" if abs(drift_pct) > threshold_pct else "healthy"


def market_price(
    rt: Runtime, asset: Asset, at: datetime, candles: Mapping[str, Candles]
) -> float | None:
    """The token's intraday price from the market's peg source, else its last daily close."""
    name = rt.universe.market_source
    source = rt.plugins.peg_sources.items.get(name)
    if isinstance(source, IntradayMarketPrice):
        try:
            price = source.market_price(asset, at, _options(rt, name))
        except Exception as exc:
            log.warning("intraday price of %s from %s failed: %s", asset.ticker, name, exc)
            price = None
        if _positive(price):
            return float(price)
    series = candles.get(asset.ticker)
    if series is None:
        return None
    full_days = int(np.searchsorted(series.dates, np.datetime64(at.date(), "D"), side="left"))
    if full_days == 0:
        return None
    close = float(series.close[full_days - 1])
    return close if _positive(close) else None


def _options(rt: Runtime, source: str) -> Mapping[str, Any]:
    return rt.universe.peg_source_options.get(source, {})


def _ask(rt: Runtime, name: str, asset: Asset, at: datetime) -> ReferenceQuote | None:
    assert asset.peg is not None
    if name not in rt.plugins.peg_sources:
        log.warning("%s: no peg source named %r is installed; skipped", asset.ticker, name)
        return None
    source = rt.plugins.peg_sources.get(name)
    try:
        quote = source.reference_price(asset.peg.reference, at, _options(rt, name))
    except Exception as exc:
        log.warning(
            "peg source %s failed for %s (%s): %s", name, asset.ticker, asset.peg.reference, exc
        )
        return None
    if quote is None:
        log.info("peg source %s has no price for %s", name, asset.peg.reference)
        return None
    if not isinstance(quote, ReferenceQuote) or not isinstance(quote.as_of, datetime):
        log.warning(
            "peg source %s answered %r for %s, not a ReferenceQuote; skipped",
            name,
            quote,
            asset.ticker,
        )
        return None
    return quote


def _problem(
    rt: Runtime,
    name: str,
    quote: ReferenceQuote,
    at: datetime,
    market: float | None,
    units_per_token: float,
) -> str:
    """Why an answer does not count ("" when it does)."""
    if not _positive(quote.price):
        return f"price {quote.price!r} is not a positive number"
    as_of = quote.as_of if quote.as_of.tzinfo else quote.as_of.replace(tzinfo=UTC)
    if as_of > at + FUTURE_TOLERANCE:
        return f"the answer is dated {clock.iso(as_of)}, after the sampling time"
    options = _options(rt, name)
    source = rt.plugins.peg_sources.get(name)
    max_age = (
        timedelta(hours=float(options["max_age_hours"]))
        if "max_age_hours" in options
        else source.max_age
    )
    if at - as_of > max_age:
        return f"stale: as of {clock.iso(as_of)}, older than {max_age}"
    if market is not None:
        deviation = abs(100.0 * (market / (quote.price * units_per_token) - 1.0))
        limit = float(options.get("max_deviation_pct", DEFAULT_MAX_DEVIATION_PCT))
        if deviation > limit:
            return f"{quote.price:g} is {deviation:.0f} % away from the market price"
    return ""


def _positive(value: Any) -> TypeGuard[float]:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
