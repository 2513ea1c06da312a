"""The depeg detector: depeg events rebuilt from the stored peg samples (docs/api.md).

The rule: a tokenized asset is in an active depeg event while it has been continuously
unhealthy for at least 12 hours with at least 6 samples. Each sample is one new observation
(the sampler stores none while neither price has a newer one), so daily closes need six days
of drift. An ``unknown`` sample (no fresh reference) neither extends nor breaks an unhealthy
run; the first healthy sample ends it (``recovered``). So does time: once the older price of
the run's last unhealthy sample is older than the asset class's staleness limit, the run
ended then (``stale``, with the sentence saying which price stopped), and a later unhealthy
sample starts a new run. ``first_unhealthy`` / ``last_unhealthy`` are the run's first and
last unhealthy samples, ``median_drift_pct`` the median drift of its unhealthy samples.

Events are not kept as a state machine fed by the latest sample: every run recomputes the
runs from the samples themselves and reconciles the ``peg_event`` rows with them, so the
result is the same after a restart and with samples that arrive late or out of order. What
a late sample can do, and what the detector does about it:

* extend a run at either end, or add samples inside it: the event row is updated;
* make a run long enough: the event opens (even one that is already over, which then opens
  and closes in the same run);
* split an announced event with a healthy sample: the part that keeps the event's start
  keeps its row, and an event row that no run supports any longer closes.

Every event row gets exactly one ``opened`` and at most one ``closed`` call of
``pairscreen_peg_event_changed``; a closed row never reopens (a new run is a new event). The
hooks run inside the detector's transaction, so what a hook writes (the outbox rows of the
depeg alerts) commits together with the event, and two detectors never announce one event
twice (``BEGIN IMMEDIATE`` on SQLite, a transaction-scoped advisory lock on PostgreSQL).

Closed history is final once it is older than :data:`REBUILD_WINDOW`: the rebuild starts at
a healthy sample at least that far before the newest one, where no run can be in progress,
so expiring old samples never rewrites old events.
"""

from __future__ import annotations

import operator
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from typing import Literal

from peewee import fn

from pairscreen import clock
from pairscreen.contracts import PegEventChange
from pairscreen.db import rows
from pairscreen.db.connection import database, is_sqlite, write_transaction
from pairscreen.db.models import AssetRow, PegEvent, PegSample
from pairscreen.pegs.observations import Observed, reference_symbol, staleness_limit
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import Universe

MIN_HOURS = 12.0
MIN_SAMPLES = 6
REBUILD_WINDOW = timedelta(days=7)
_PG_LOCK_KEY = 0x70656764  # "pegd": serialises detectors on PostgreSQL


@dataclass(frozen=True)
class Sample:
    """What the detector reads of a peg sample."""

    sampled_at: datetime
    status: str  # healthy | unhealthy | unknown
    drift_pct: float | None = None
    reference_source: str = ""
    token_observed_at: datetime | None = None
    reference_observed_at: datetime | None = None

    @property
    def observed(self) -> Observed:
        return Observed(self.token_observed_at, self.reference_observed_at)

    def stale_at(self, limit: timedelta) -> datetime:
        return self.observed.stale_at(self.sampled_at, limit)


@dataclass(frozen=True)
class Run:
    """A maximal run of unhealthy samples with no healthy sample in between and no gap in
    which its data went stale."""

    unhealthy: tuple[Sample, ...]
    # The healthy sample that ended it, or the moment its data went stale; None while it
    # goes on
    ended_at: datetime | None
    ended: Literal["", "recovered", "stale"] = ""

    @property
    def first(self) -> datetime:
        return self.unhealthy[0].sampled_at

    @property
    def last(self) -> datetime:
        return self.unhealthy[-1].sampled_at

    @property
    def hours(self) -> float:
        return (self.last - self.first).total_seconds() / 3600

    @property
    def is_event(self) -> bool:
        return len(self.unhealthy) >= MIN_SAMPLES and self.hours >= MIN_HOURS

    @property
    def median_drift_pct(self) -> float:
        return float(statistics.median(s.drift_pct or 0.0 for s in self.unhealthy))

    @property
    def reference_source(self) -> str:
        """Every source name that answered during the run, in order of appearance."""
        names: dict[str, None] = {}
        for s in self.unhealthy:
            names.update(dict.fromkeys(filter(None, s.reference_source.split("+"))))
        return "+".join(names)


def unhealthy_runs(
    samples: Iterable[Sample], limit: timedelta | None = None, at: datetime | None = None
) -> list[Run]:
    """The unhealthy runs of a ticker's samples (any order; unknown samples are skipped).

    With a staleness ``limit``, a run also ends where its last unhealthy sample's data goes
    stale before the next sample is taken, or before ``at`` (the present) for the last run.
    """
    runs: list[Run] = []
    current: list[Sample] = []
    for s in sorted(samples, key=lambda s: s.sampled_at):
        if current and limit is not None and s.sampled_at > current[-1].stale_at(limit):
            runs.append(Run(tuple(current), current[-1].stale_at(limit), "stale"))
            current = []
        if s.status == "unhealthy":
            current.append(s)
        elif s.status == "healthy" and current:
            runs.append(Run(tuple(current), s.sampled_at, "recovered"))
            current = []
    if current:
        went_stale = current[-1].stale_at(limit) if limit is not None else None
        if went_stale is not None and at is not None and at > went_stale:
            runs.append(Run(tuple(current), went_stale, "stale"))
        else:
            runs.append(Run(tuple(current), None))
    return runs


def detect_events(
    plugins: Plugins,
    universe: Universe,
    tickers: Iterable[str] | None = None,
    *,
    at: datetime | None = None,
) -> list[PegEventChange]:
    """Reconcile the event rows of ``tickers`` (default: every sampled ticker) with their
    samples as of ``at`` (default now: whether a run's data has gone stale depends on the
    present); returns the changes, each already announced through the hook."""
    at = at or clock.now()
    changes: list[PegEventChange] = []
    with write_transaction():
        if not is_sqlite():
            database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK_KEY,))
        wanted = None if tickers is None else list(tickers)
        samples, horizons = _load_samples(wanted)
        events = _load_events(wanted)
        for ticker in sorted(set(samples) | set(events)):
            asset_class = _asset_class(universe, ticker)
            found = _reconcile(
                Watched(
                    ticker,
                    asset_class,
                    reference_symbol(universe, ticker),
                    staleness_limit(universe, asset_class),
                ),
                samples.get(ticker, []),
                events.get(ticker, []),
                horizons.get(ticker),
                at,
            )
            for change in found:
                plugins.peg_event_changed(change)
                changes.append(change)
    return changes


def _asset_class(universe: Universe, ticker: str) -> str:
    asset = universe.resolve(ticker)
    if asset is not None and asset.ticker == ticker:
        return asset.asset_class
    # a ticker since removed from the universe: the class it was synced with
    row = AssetRow.get_or_none(AssetRow.ticker == ticker)
    return row.asset_class if row else "tokenized_metal"


@dataclass(frozen=True)
class Watched:
    """What the detector needs to know of a ticker besides its samples."""

    ticker: str
    asset_class: str
    reference: str  # the reference symbol, for a stale end's sentence
    limit: timedelta  # the asset class's staleness limit


def _load_samples(
    tickers: list[str] | None,
) -> tuple[dict[str, list[Sample]], dict[str, datetime]]:
    """Per ticker, its samples (oldest first) from its rebuild horizon on, and the horizons:
    the last healthy sample at least :data:`REBUILD_WINDOW` before the ticker's newest one,
    where no run can be in progress (no horizon: every sample counts). Three queries."""
    newest_query = PegSample.select(PegSample.ticker, fn.MAX(PegSample.sampled_at))
    if tickers is not None:
        newest_query = newest_query.where(PegSample.ticker.in_(tickers))
    newest: dict[str, datetime] = dict(rows.tuples(newest_query.group_by(PegSample.ticker)))
    if not newest:
        return {}, {}
    before_window = reduce(
        operator.or_,
        (
            (PegSample.ticker == t) & (PegSample.sampled_at <= last - REBUILD_WINDOW)
            for t, last in newest.items()
        ),
    )
    horizons: dict[str, datetime] = dict(
        rows.tuples(
            PegSample.select(PegSample.ticker, fn.MAX(PegSample.sampled_at))
            .where((PegSample.status == "healthy") & before_window)
            .group_by(PegSample.ticker)
        )
    )
    since_horizon = reduce(
        operator.or_,
        (
            (PegSample.ticker == t) & (PegSample.sampled_at >= horizons[t])
            if t in horizons
            else PegSample.ticker == t
            for t in newest
        ),
    )
    query = PegSample.select(
        PegSample.ticker,
        PegSample.sampled_at,
        PegSample.status,
        PegSample.drift_pct,
        PegSample.reference_source,
        PegSample.token_observed_at,
        PegSample.reference_observed_at,
    ).where(since_horizon)
    samples: dict[str, list[Sample]] = {}
    for ticker, *values in rows.tuples(query.order_by(PegSample.ticker, PegSample.sampled_at)):
        samples.setdefault(ticker, []).append(Sample(*values))
    return samples, horizons


def _load_events(tickers: list[str] | None) -> dict[str, list[PegEvent]]:
    query = PegEvent.select()
    if tickers is not None:
        query = query.where(PegEvent.ticker.in_(tickers))
    out: dict[str, list[PegEvent]] = {}
    for row in query.order_by(PegEvent.first_unhealthy, PegEvent.id):
        out.setdefault(row.ticker, []).append(row)
    return out


def _reconcile(
    watched: Watched,
    samples: Sequence[Sample],
    stored_rows: Sequence[PegEvent],
    horizon: datetime | None,
    at: datetime,
) -> list[PegEventChange]:
    if horizon is not None:  # closed events before the horizon are final
        stored_rows = [r for r in stored_rows if r.active or r.last_unhealthy >= horizon]
    runs = [r for r in unhealthy_runs(samples, watched.limit, at) if r.is_event]
    claimed: set[int] = set()
    changes: list[PegEventChange] = []
    for run in runs:
        ongoing = run.ended_at is None
        row = _match(run, stored_rows, claimed, active_only=ongoing)
        if row is None:
            row = PegEvent(ticker=watched.ticker, active=True)
            _copy(run, row, watched.asset_class)
            row.save()
            changes.append(_change(row, "opened"))
        else:
            claimed.add(row.id)
            _copy(run, row, watched.asset_class)
        if not ongoing and row.active:
            row.active = False
            row.closed_at = run.ended_at
            row.ended = run.ended
            if run.ended == "stale":
                last = run.unhealthy[-1]
                row.end_reason = last.observed.stale_reason(
                    watched.ticker,
                    watched.reference,
                    last.sampled_at,
                    watched.limit,
                    at,
                    newest_observed(samples),
                )
            changes.append(_change(row, "closed"))
        if row.is_dirty():
            row.save()
    for row in stored_rows:
        if row.active and row.id not in claimed:
            # No run supports this event any more (a late healthy sample split it).
            row.active = False
            row.closed_at = at
            row.ended = "recovered"
            row.save()
            changes.append(_change(row, "closed"))
    return changes


def newest_observed(samples: Iterable[Sample]) -> Observed:
    """The newest token and reference observations among ``samples``."""
    tokens = [s.token_observed_at for s in samples if s.token_observed_at is not None]
    references = [s.reference_observed_at for s in samples if s.reference_observed_at]
    return Observed(max(tokens, default=None), max(references, default=None))


def _match(
    run: Run, stored: Sequence[PegEvent], claimed: set[int], *, active_only: bool
) -> PegEvent | None:
    """The earliest unclaimed stored event overlapping ``run`` (an ongoing run only
    continues an active event: a closed one never reopens)."""
    for row in stored:
        if row.id in claimed or (active_only and not row.active):
            continue
        if row.first_unhealthy <= run.last and row.last_unhealthy >= run.first:
            return row
    return None


def _copy(run: Run, row: PegEvent, asset_class: str) -> None:
    values = {
        "asset_class": asset_class,
        "first_unhealthy": run.first,
        "last_unhealthy": run.last,
        "sample_count": len(run.unhealthy),
        "median_drift_pct": run.median_drift_pct,
        "reference_source": run.reference_source,
    }
    for name, value in values.items():
        if getattr(row, name) != value:
            setattr(row, name, value)


def _recovered(change: str) -> Literal["", "recovered"]:
    return "recovered" if change == "closed" else ""


def _change(row: PegEvent, change: Literal["opened", "closed"]) -> PegEventChange:
    return PegEventChange(
        ticker=row.ticker,
        asset_class=row.asset_class,
        change=change,
        first_unhealthy=row.first_unhealthy,
        last_unhealthy=row.last_unhealthy,
        median_drift_pct=row.median_drift_pct,
        sample_count=row.sample_count,
        reference_source=row.reference_source,
        ended="stale" if change == "closed" and row.ended == "stale" else _recovered(change),
        end_reason=row.end_reason if change == "closed" else "",
    )
