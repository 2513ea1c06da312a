"""Peg sampling: one peg sample per tokenized asset, then the depeg detector (docs/api.md).

For each tokenized asset at the sampling time ``at``:

* **token price**: the token's price at ``at`` when the universe's market source has an
  intraday price for it (observed at ``at``), else the close of the last full UTC day before
  ``at`` from the candle store, observed at the market's close time (the end of the UTC day
  unless the market source's ``close_time`` option says otherwise). The intraday price comes
  from the peg source that carries the market source's name and satisfies
  :class:`~pairscreen.contracts.IntradayMarketPrice` (the demo's does: its market has daily
  candles only, its peg plugin knows the hourly prices). A token price older than the asset
  class's staleness limit (the universe's ``[staleness]``) is not compared at all;
* **reference**: every source the universe names for the asset (``peg.sources``) is asked
  for the asset's reference symbol with the options of its ``[peg_sources.<name>]`` table.
  An answer counts when it is a positive finite price, not from the future, not older than
  the source's maximum age (``max_age_hours`` in the source's options overrides the
  source's default) nor the class's staleness limit, observed at most the source's
  ``max_skew`` (default 1 hour; ``max_skew_hours`` overrides it) before or after the token
  price (a daily close and an intraday quote are different moments, and prices move in
  between), and, once scaled by ``units_per_token``, within ``max_deviation_pct`` (default
  50) of the market price: farther than that is a broken answer (wrong units, a bad feed),
  not a depeg. A source that raises or whose answer does not count is skipped and logged.
  The reference price is the median of the answers that count times ``units_per_token``,
  ``reference_source`` their names joined with "+";
* ``drift_pct = 100 * (market / reference - 1)``; the status is ``unhealthy`` when
  ``|drift_pct| > threshold_pct``, ``healthy`` otherwise, and ``unknown`` when there is no
  comparable token price or no answer that counts: never a guess, and never a depeg event
  (the detector skips unknown samples). An unknown sample keeps its ``reason``
  ("XAUT: token price 1,426 days old (...)").

A reading is stored as a sample only when it is a new observation: its token price or its
reference (the newest answer that counted) was observed after the ticker's previous
sample's, both moments being stored with it (:mod:`pairscreen.pegs.observations`). Reading
the same daily closes every hour adds nothing, so the detector's "6 samples" are 6
observations. One sample per ticker and time: sampling the same time again keeps the first.
Samples older than the retention (``Settings.peg_retention_days``, default 90) are
deleted, the detector reconciles the depeg events, and the ``peg_sample`` job time, which
``/peg-events`` reports as ``checked_at``, is set, all in one transaction. The reference
sources are asked before it opens, since some of them are remote. A sampling time (or a
backfill) older than the retention is refused: its samples would be deleted by the same run.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypeGuard

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Candles, IntradayMarketPrice, PegEventChange, ReferenceQuote
from pairscreen.contracts.bars import BarSize, bar_size
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import JobRun, PegSample
from pairscreen.market.freshness import bars_between, day_of, lag_reaches, span_words
from pairscreen.pegs.detector import detect_events
from pairscreen.pegs.observations import Observed, duration_text, observation_age
from pairscreen.pegs.status import PEG_JOB, depegged_tickers, threshold_pct
from pairscreen.progress import Progress, no_progress
from pairscreen.runtime import Runtime
from pairscreen.wording import plural

log = logging.getLogger(__name__)

DEFAULT_MAX_DEVIATION_PCT = 50.0
# How far apart the token price's and a reference answer's moments may be unless the peg
# source declares its own ``max_skew`` (or ``max_skew_hours`` is set in its options).
MAX_SKEW = timedelta(hours=1)
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
    reason: str = ""  # why the status is unknown; "" otherwise
    # when the token price and the reference (the newest answer that counted) were observed
    token_observed_at: datetime | None = None
    reference_observed_at: datetime | None = None

    @property
    def observed(self) -> Observed:
        return Observed(self.token_observed_at, self.reference_observed_at)


@dataclass(frozen=True)
class SamplingReport:
    sampled_at: datetime
    readings: tuple[PegReading, ...]
    inserted: int  # samples written: readings with a new observation, at a time not sampled
    expired: int  # samples deleted by the retention
    changes: tuple[PegEventChange, ...]  # events opened or closed by this run
    active_events: tuple[str, ...]  # tickers in an active event afterwards

    def summary(self) -> str:
        counts = {
            s: sum(r.status == s for r in self.readings)
            for s in ("healthy", "unhealthy", "unknown")
        }
        text = (
            f"peg sample at {clock.iso(self.sampled_at)}: "
            f"{plural(len(self.readings), 'tokenized asset', grouped=True)} "
            f"({', '.join(f'{n} {s}' for s, n in counts.items())}), "
            f"{plural(self.inserted, 'new sample', grouped=True)}, {self.expired} expired"
        )
        return text + _events_text(self.changes, self.active_events)

    def unknown_reasons(self) -> list[str]:
        """Why each unknown asset is unknown, one sentence each."""
        return [r.reason for r in self.readings if r.status == "unknown" and r.reason]


def backfill_summary(reports: Sequence[SamplingReport]) -> str:
    """One line for a whole backfill: the samples every run wrote and expired, the events
    every run opened or closed, and the active events at its end."""
    first, last = reports[0], reports[-1]
    written = sum(r.inserted for r in reports)
    expired = sum(r.expired for r in reports)
    changes = tuple(c for r in reports for c in r.changes)
    text = (
        f"peg backfill of {plural(len(reports), 'sampling time', grouped=True)} from "
        f"{clock.iso(first.sampled_at)} to {clock.iso(last.sampled_at)}: "
        f"{plural(written, 'new sample', grouped=True)}, {expired} expired"
    )
    return text + _events_text(changes, last.active_events)


def _events_text(changes: Sequence[PegEventChange], active: Sequence[str]) -> str:
    text = ""
    for change in changes:
        text += f"; event {change.change}: {change.ticker}"
        if change.ended == "stale":
            text += " (stale)"
    return text + f"; active depeg events: {', '.join(active) or 'none'}"


class BeyondRetention(ValueError):
    """A sampling time older than the retention: its samples would be deleted at once."""


def retention_cutoff(rt: Runtime) -> datetime:
    """Samples taken before this moment are deleted (``Settings.peg_retention_days``)."""
    return clock.now() - timedelta(days=rt.settings.peg_retention_days)


def refuse_beyond_retention(rt: Runtime, earliest: datetime, what: str) -> None:
    """Raise :class:`BeyondRetention` when ``earliest`` is older than the retention keeps."""
    cutoff = retention_cutoff(rt)
    if earliest < cutoff:
        days = rt.settings.peg_retention_days
        raise BeyondRetention(
            f"{what} reaches back to {clock.iso(earliest)}, before the {days}-day retention "
            f"of peg samples ({clock.iso(cutoff.replace(microsecond=0))}): those samples "
            f"would be deleted as soon as they were written. Sample a later time, or raise "
            f"PAIRSCREEN_PEG_RETENTION_DAYS."
        )


def sample_pegs(
    rt: Runtime, at: datetime | None = None, *, keep_from: datetime | None = None
) -> SamplingReport:
    """Sample every tokenized asset at ``at`` (default now), store, detect, record the run.

    A time older than the retention is refused (:class:`BeyondRetention`): the retention
    would delete its samples in the same run, and the run would report samples it kept none
    of. The retention never deletes a sample of the sampled time itself, nor one from
    ``keep_from`` on (what a backfill wrote before this run).
    """
    at = (at or clock.now()).astimezone(UTC).replace(microsecond=0)
    refuse_beyond_retention(rt, at, f"sampling at {clock.iso(at)}")
    candles = market_candles(rt)
    readings = tuple(read_peg(rt, a, at, candles) for a in rt.universe.assets if a.is_tokenized)
    cutoff = min(retention_cutoff(rt), keep_from or at, at)
    tickers = [r.ticker for r in readings]
    with write_transaction():
        new = [r for r in readings if r.observed.is_newer_than(previous_observed(r.ticker, at))]
        rows = [{**asdict(r), "sampled_at": at} for r in new]
        already = (
            PegSample.select()
            .where((PegSample.sampled_at == at) & PegSample.ticker.in_([r.ticker for r in new]))
            .count()
        )
        if rows:
            PegSample.insert_many(rows).on_conflict_ignore().execute()
        expired = PegSample.delete().where(PegSample.sampled_at < cutoff).execute()
        # Whether an event's data has gone stale is a question about the present; a test or
        # a clock behind the sampled time asks it at the sampled time at least.
        changes = detect_events(rt.plugins, rt.universe, tickers, at=max(at, clock.now()))
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


def previous_observed(ticker: str, at: datetime) -> Observed | None:
    """When the prices of ``ticker``'s last sample at or before ``at`` were observed (None:
    no sample yet). A sample stored without those moments counts as observed when taken."""
    row = (
        PegSample.select(
            PegSample.sampled_at, PegSample.token_observed_at, PegSample.reference_observed_at
        )
        .where((PegSample.ticker == ticker) & (PegSample.sampled_at <= at))
        .order_by(PegSample.sampled_at.desc())
        .first()
    )
    if row is None:
        return None
    if row.token_observed_at is None and row.reference_observed_at is None:
        return Observed(row.sampled_at, row.sampled_at)
    return Observed(row.token_observed_at, row.reference_observed_at)


def backfill_pegs(
    rt: Runtime, hours: int, until: datetime | None = None, *, on_progress: Progress = no_progress
) -> list[SamplingReport]:
    """Sample each whole hour of the last ``hours`` hours, oldest first, then ``until``;
    ``on_progress`` hears of each moment sampled. A backfill reaching back beyond the
    retention is refused before anything is sampled (:class:`BeyondRetention`)."""
    until = (until or clock.now()).astimezone(UTC)
    top = until.replace(minute=0, second=0, microsecond=0)
    moments = [top - timedelta(hours=h) for h in range(hours, 0, -1)]
    if top != until.replace(microsecond=0):
        moments.append(top)
    moments.append(until)
    refuse_beyond_retention(rt, moments[0], f"a backfill of {hours:,} hours")
    reports: list[SamplingReport] = []
    on_progress(0, len(moments))
    for at in moments:
        reports.append(sample_pegs(rt, at, keep_from=moments[0]))
        on_progress(len(reports), len(moments))
    return reports


def read_peg(rt: Runtime, asset: Asset, at: datetime, candles: Mapping[str, Candles]) -> PegReading:
    """One asset's peg at ``at`` (nothing stored).

    ``unknown`` (with the reason) unless the token price and at least one reference answer
    are comparable: each no older than the asset class's staleness limit, and observed at
    most the answering source's ``max_skew`` apart.
    """
    peg = asset.peg
    threshold = threshold_pct(asset)
    token = token_price(rt, asset, at, candles)
    limit = timedelta(days=rt.universe.staleness_days(asset))
    problem = _token_problem(token, at, limit)
    names: list[str] = []
    prices: list[float] = []
    observed: list[datetime] = []
    problems: list[str] = []
    for name in peg.sources if peg and not problem else ():
        quote = _ask(rt, name, asset, at)
        if quote is None:
            problems.append(f"no answer from {name}")
            continue
        assert peg is not None and token is not None  # asked only with a usable token price
        why = _problem(rt, name, quote, at, token, peg.units_per_token, limit)
        if why:
            log.log(
                logging.INFO if why.startswith("stale") else logging.WARNING,
                "peg source %s for %s (%s): %s; skipped",
                name,
                asset.ticker,
                peg.reference,
                why,
            )
            problems.append(f"{name}: {why}")
            continue
        names.append(name)
        prices.append(quote.price)
        observed.append(_aware(quote.as_of))
    reference = float(statistics.median(prices)) * peg.units_per_token if prices and peg else None
    market = token.price if token else None
    drift = 100.0 * (market / reference - 1.0) if market and reference else None
    reason = ""
    if drift is None:
        reason = f"{asset.ticker}: " + (problem or _no_reference(asset, problems))
    return PegReading(
        ticker=asset.ticker,
        status=peg_health(drift, threshold),
        market_price=market,
        reference_price=reference,
        reference_source="+".join(names),
        drift_pct=drift,
        threshold_pct=threshold,
        reason=reason,
        token_observed_at=token.observed_at if token else None,
        reference_observed_at=max(observed) if observed else None,
    )


def _token_problem(token: TokenPrice | None, at: datetime, limit: timedelta) -> str:
    """Why the token price cannot be compared ("" when it can)."""
    if token is None:
        return "no token price (no close stored before the sampling time)"
    if token.bar is not None:
        return _bar_problem(token, token.bar, at, limit)
    age = at - token.observed_at
    if age > limit:
        return (
            f"token price {observation_age(token.observed_at, at)} old ({token.what}; "
            f"its class allows {plural(limit.days, 'day')})"
        )
    return ""


def _bar_problem(token: TokenPrice, bar: BarSize, at: datetime, limit: timedelta) -> str:
    """A token price of an intraday bar is stale as an asset is (``market.freshness``): once
    the bars closed since it, up to the last closed at ``at``, reach the class's limit."""
    closed = int(token.observed_at.timestamp())
    bars = bars_between(closed, bar.last_closed(at), bar.seconds)
    if not lag_reaches(bars * bar.seconds, limit.days):
        return ""
    return (
        f"token price {plural(bars, 'bar', grouped=True)} ({span_words(bars * bar.seconds)}) "
        f"old ({token.what}; its class allows {plural(limit.days, 'day')})"
    )


def _no_reference(asset: Asset, problems: list[str]) -> str:
    if asset.peg is None or not asset.peg.sources:
        return "no reference source configured (peg.sources in the universe file)"
    return f"no comparable reference price for {asset.peg.reference} ({'; '.join(problems)})"


def peg_health(drift_pct: float | None, threshold_pct: float) -> str:
    """``unknown`` without a drift, ``unhealthy`` beyond the threshold, else ``healthy``."""
    if drift_pct is None:
        return "unknown"
    return "unhealthy" if abs(drift_pct) > threshold_pct else "healthy"


@dataclass(frozen=True)
class TokenPrice:
    """The token's own price and the moment it was observed."""

    price: float
    observed_at: datetime
    what: str  # for a reason sentence: "the close of 2023-12-31", "intraday price"
    day: date | None = None  # a daily close's day (None: an intraday price)
    bar: BarSize | None = None  # an intraday universe's bar: its age is counted in bars


def token_price(
    rt: Runtime, asset: Asset, at: datetime, candles: Mapping[str, Candles]
) -> TokenPrice | None:
    """The token's intraday price from the market's peg source (observed at ``at``), else
    its last daily close before ``at``'s day, observed at the market's close time (on an
    intraday universe, its last bar closed by ``at``: :func:`last_bar_price`)."""
    name = rt.universe.market_source
    source = rt.plugins.peg_sources.items.get(name)
    if isinstance(source, IntradayMarketPrice):
        try:
            price = source.market_price(asset, at, _options(rt, name))
        except Exception as exc:
            log.warning("intraday price of %s from %s failed: %s", asset.ticker, name, exc)
            price = None
        if _positive(price):
            return TokenPrice(float(price), at, "intraday price")
    series = candles.get(asset.ticker)
    if series is None:
        return None
    bar = bar_size(rt.universe.bar)
    if bar.intraday:
        return last_bar_price(series, at, bar)
    full_days = int(np.searchsorted(series.dates, np.datetime64(at.date(), "D"), side="left"))
    if full_days == 0:
        return None
    close = float(series.close[full_days - 1])
    if not _positive(close):
        return None
    day = day_of(series.dates[full_days - 1])
    return TokenPrice(close, close_moment(rt, day), f"the close of {day}", day)


def market_candles(rt: Runtime) -> Mapping[str, Candles]:
    """The token prices a sample falls back on: the daily candles, or an intraday
    universe's closed bars (what its screen reads)."""
    # imported here: the screening package imports the pegs' status at module level
    from pairscreen.screening.screen_candles import screen_candles

    return screen_candles(rt, bar_size(rt.universe.bar))


def last_bar_price(series: Candles, at: datetime, bar: BarSize) -> TokenPrice | None:
    """On an intraday universe, the close of the token's last ``bar`` closed at ``at`` or
    before, observed at that close time (a bar is dated by its close)."""
    closes = series.dates.astype("datetime64[s]")
    n = int(np.searchsorted(closes, np.datetime64(int(at.timestamp()), "s"), side="right"))
    if n == 0:
        return None
    close = float(series.close[n - 1])
    if not _positive(close):
        return None
    moment = datetime.fromtimestamp(int(closes[n - 1].astype(np.int64)), UTC)
    return TokenPrice(close, moment, f"the {bar.name} bar closing {clock.iso(moment)}", bar=bar)


def close_moment(rt: Runtime, day: date) -> datetime:
    """When the market's daily close of ``day`` is observed: the market source's option
    ``close_time`` (``"HH:MM"`` UTC, e.g. ``"21:00"`` for a US exchange's close) when set,
    else the end of the UTC day (24:00), as for an exchange's UTC daily candle."""
    text = rt.universe.market_options.get("close_time")
    start = datetime.combine(day, datetime.min.time(), UTC)
    if not text:
        return start + timedelta(days=1)
    try:
        moment = time.fromisoformat(str(text))
    except ValueError:
        raise ValueError(
            f'the market source\'s close_time must be a UTC time of day such as "21:00", '
            f"got {text!r}"
        ) from None
    return start + timedelta(hours=moment.hour, minutes=moment.minute, seconds=moment.second)


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
    token: TokenPrice,
    units_per_token: float,
    class_limit: timedelta,
) -> str:
    """Why an answer does not count ("" when it does)."""
    if not _positive(quote.price):
        return f"price {quote.price!r} is not a positive number"
    as_of = _aware(quote.as_of)
    if as_of > at + FUTURE_TOLERANCE:
        return f"the answer is dated {clock.iso(as_of)}, after the sampling time"
    options = _options(rt, name)
    source = rt.plugins.peg_sources.get(name)
    max_age = min(_hours_option(options, "max_age_hours", source.max_age), class_limit)
    if at - as_of > max_age:
        return f"stale: reference price {observation_age(as_of, at)} old (as of {clock.iso(as_of)})"
    deviation = abs(100.0 * (token.price / (quote.price * units_per_token) - 1.0))
    limit = float(options.get("max_deviation_pct", DEFAULT_MAX_DEVIATION_PCT))
    if deviation > limit:
        return f"{quote.price:g} is {deviation:.0f} % away from the market price"
    max_skew = _hours_option(options, "max_skew_hours", getattr(source, "max_skew", MAX_SKEW))
    skew = abs(as_of - token.observed_at)
    if skew > max_skew:
        return (
            f"reference price as of {clock.iso(as_of)} and token price ({token.what}, "
            f"{clock.iso(token.observed_at)}) are {duration_text(skew)} apart "
            f"(at most {duration_text(max_skew)})"
        )
    return ""


def _aware(moment: datetime) -> datetime:
    """A source's naive answer time is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _hours_option(options: Mapping[str, Any], key: str, default: timedelta) -> timedelta:
    return timedelta(hours=float(options[key])) if key in options else default


def _positive(value: Any) -> TypeGuard[float]:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
