"""``data sync`` of a universe whose ``[market] bar`` is intraday (4h, 1h, 15m).

The daily sync's rules, per bar: the source is asked, per asset, for the bars after the start
of an overlap (the bars of the last :data:`~pairscreen.market.reconcile.OVERLAP_DAYS` stored
UTC days; the whole stored history with ``verify``); every answer is checked
(:func:`~pairscreen.market.bar_checks.checked_bars`); an asset whose rows could not all be
used, whose stored overlap the source contradicts, or whose new bars move implausibly
(:mod:`~pairscreen.market.bar_review`, until a person accepts each such move) gets nothing
written and is named; the others get their new bars. Only closed bars are stored: the last
bar closed at the service's clock (:mod:`pairscreen.clock`) is the newest one a sync may
write. Bars, asset rows and the ``candles`` data version are written in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from peewee import fn

from pairscreen import clock
from pairscreen.contracts import Candles, RowIssues
from pairscreen.contracts.bars import BarSize, bar_size
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import AssetRow, BarBlock
from pairscreen.market.bar_checks import checked_bars, iso_time
from pairscreen.market.bar_freshness import BarFreshness, bar_freshness, bar_headline
from pairscreen.market.bar_jumps import BarAcceptance, BigBarMoves
from pairscreen.market.bar_review import BarReview
from pairscreen.market.bar_source import bar_source
from pairscreen.market.bar_store import (
    asset_ids,
    bar_times,
    delete_bars,
    last_closes,
    load_bars,
    write_bars,
)
from pairscreen.market.jumps import Hold
from pairscreen.market.reconcile import OVERLAP_DAYS
from pairscreen.market.sync import _bump_version, _connected, _upsert_assets  # one writer each
from pairscreen.market.sync_report import describe_refusal
from pairscreen.plugin_system.registry import Plugins
from pairscreen.progress import Progress, no_progress
from pairscreen.universe import Universe
from pairscreen.wording import plural

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BarConflict:
    """The first bar where the stored history and the source disagree, and how many do."""

    ticker: str
    close_time: int  # epoch seconds
    stored: float | None  # None: the database has no such bar
    source: float | None  # None: the source no longer has it
    bars: int

    def describe(self) -> str:
        when = iso_time(self.close_time)
        stored = "no bar" if self.stored is None else f"close {self.stored:.10g}"
        source = "no bar" if self.source is None else f"close {self.source:.10g}"
        more = f" (first of {self.bars} conflicting bars)" if self.bars > 1 else ""
        return (
            f"{self.ticker}: the bar closing {when}: stored {stored}, the source {source}"
            f"{more}; nothing written for {self.ticker}"
        )


@dataclass(frozen=True)
class BarSyncReport:
    """What one intraday sync did; read like the daily :class:`SyncReport` by ``data sync``."""

    source: str
    bar: str
    until: int  # the close time (epoch seconds) of the last closed bar
    inserted: dict[str, int] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    data_version: int | None = None
    conflicts: tuple[BarConflict, ...] = ()
    issues: dict[str, RowIssues] = field(default_factory=dict)
    replaced: tuple[str, ...] = ()
    holds: tuple[Hold, ...] = ()  # assets whose new bars wait on implausible moves
    accepted: tuple[BarAcceptance, ...] = ()  # implausible moves adopted after review
    moves: tuple[BigBarMoves, ...] = ()  # stored moves above the scaled class limit
    unmatched: tuple[str, ...] = ()  # moves given to accept that no asset held
    freshness: dict[str, BarFreshness] = field(default_factory=dict)  # after the sync

    @property
    def refused(self) -> tuple[str, ...]:
        return tuple(t for t, issues in self.issues.items() if issues.refuses)

    @property
    def needs_review(self) -> tuple[str, ...]:
        names = [c.ticker for c in self.conflicts] + list(self.refused)
        return tuple(dict.fromkeys(names + [h.ticker for h in self.holds]))

    @property
    def total(self) -> int:
        return sum(self.inserted.values())

    def lines(self) -> list[str]:
        """Staleness first, then what needs a look, then the counts (as the daily sync)."""
        out = [bar_headline(self.freshness, bar_size(self.bar))]
        out += [f"conflict: {c.describe()}" for c in self.conflicts]
        out += [f"refused: {describe_refusal(t, self.issues[t])}" for t in self.refused]
        out += [f"held: {h.describe()}" for h in self.holds]
        out += [f"replaced: {t}: adopted the source's {self.bar} bars" for t in self.replaced]
        out += [f"accepted: {a.describe()}" for a in self.accepted]
        out += [
            f"warning: --accept {key}: no move of {key.split(':')[0]} into that bar is held; "
            "nothing accepted"
            for key in self.unmatched
        ]
        out += [f"warning: {m.describe()}" for m in self.moves]
        for ticker, issues in self.issues.items():
            if not issues or issues.refuses:
                continue
            parts = []
            if issues.future:
                parts.append(
                    f"{issues.future} closing after {iso_time(self.until)}, the last closed "
                    f"{self.bar} bar (unfinished)"
                )
            if issues.duplicate:
                parts.append(
                    f"{issues.duplicate} repeating a bar with the same values (stored once)"
                )
            origin = f" ({issues.origin})" if issues.origin else ""
            out.append(f"warning: {ticker}: source rows left out{origin}: {', '.join(parts)}")
        assets = sum(1 for n in self.inserted.values() if n)
        added = (
            f"{self.source}: {plural(self.total, f'new {self.bar} bar')} for "
            f"{plural(assets, 'asset')} through {iso_time(self.until)}"
        )
        if self.data_version is not None:
            added += f" (data version {self.data_version})"
        newest = max((f.last_close for f in self.freshness.values()), default=None)
        if newest is not None and newest < self.until:  # the source stops before the clock
            added += f"; the newest stored bar closed {iso_time(newest)}"
        if self.missing:
            added += f"; no data for {', '.join(self.missing)}"
        out.append(added)
        return out

    def summary(self) -> str:
        return "; ".join(self.lines())


def sync_bars(
    universe: Universe,
    plugins: Plugins,
    *,
    verify: bool = False,
    replace: Collection[str] = (),
    accept: Collection[str] = (),
    on_progress: Progress = no_progress,
) -> BarSyncReport:
    """Check the overlap of every asset with the source and store its new closed bars.

    ``accept`` names implausible moves a person has reviewed, as the sync names them
    (``BTC:2023-03-10T14:00:00Z``, the move into the bar closing then)."""
    bar = bar_size(universe.bar)
    if not bar.intraday:
        raise ValueError(f"sync_bars serves intraday universes; {universe.bar} is daily")
    named = plugins.market_sources.get(universe.market_source)
    source = bar_source(named, bar.name)
    until = bar.last_closed(clock.now())
    replacing = set(replace)
    with _connected():
        tails = _stored_tails(bar, universe.tickers, verify)
        since: dict[str, datetime | None] = {}
        for ticker in universe.tickers:
            tail = tails.get(ticker)
            if ticker in replacing or tail is None:
                since[ticker] = None
            else:
                first = int(bar_times(tail)[0]) - bar.seconds
                since[ticker] = datetime.fromtimestamp(first, UTC)
        fetched: dict[str, Candles] = {}
        total = len(universe.assets)
        on_progress(0, total)
        for candles in source.fetch_bars(
            universe.assets,
            universe.market_options,
            bar=bar.name,
            since=since,
            until=datetime.fromtimestamp(until, UTC),
        ):
            if candles.ticker not in universe.tickers:
                log.warning(
                    "market source %s returned unknown ticker %s; ignored",
                    named.name,
                    candles.ticker,
                )
                continue
            fetched[candles.ticker] = checked_bars(candles, bar, until)
            on_progress(min(len(fetched), total), total)
        on_progress(total, total)

        issues: dict[str, RowIssues] = {}
        conflicts: list[BarConflict] = []
        writes: list[tuple[Candles, bool]] = []  # (bars, replacing the stored ones)
        review = BarReview(set(accept), lambda ticker: load_bars(bar, [ticker]).get(ticker))
        for asset in universe.assets:
            ticker = asset.ticker
            got = fetched.get(ticker)
            if got is None:
                continue
            if got.issues:
                issues[ticker] = got.issues
            if got.issues.refuses or not len(got.dates):
                continue
            limit = universe.move_limit_pct(asset)
            tail = tails.get(ticker)
            if ticker in replacing:
                review.adopt_replaced(got, limit)
                writes.append((got, True))
                continue
            if tail is None:
                if review.plausible(got, None, limit):
                    writes.append((got, False))
                continue
            conflict = _first_conflict(tail, got)
            if conflict is not None:
                conflicts.append(conflict)
                continue
            new = bar_times(got) > int(bar_times(tail)[-1])
            if new.any():
                fresh = Candles(ticker, got.dates[new], got.close[new], got.volume[new])
                if review.plausible(fresh, tail, limit):
                    writes.append((fresh, False))

        inserted: dict[str, int] = {}
        version: int | None = None
        with write_transaction():
            changed = _upsert_assets(universe)
            ids = asset_ids()
            for candles, replacing_it in writes:
                if replacing_it:
                    delete_bars(bar, ids[candles.ticker])
                inserted[candles.ticker] = write_bars(bar, ids, candles)
            if writes or changed:
                version = _bump_version()
        closes = last_closes(bar)
    for hold in review.holds:
        log.warning("sync held: %s", hold.describe())
    for acceptance in review.accepted:
        log.warning("sync accepted after review: %s", acceptance.describe())
    return BarSyncReport(
        source=named.name,
        bar=bar.name,
        until=until,
        inserted=inserted,
        missing=tuple(t for t in universe.tickers if t not in closes),
        data_version=version,
        conflicts=tuple(conflicts),
        issues=issues,
        replaced=tuple(c.ticker for c, replacing_it in writes if replacing_it),
        holds=tuple(review.holds),
        accepted=tuple(review.accepted),
        moves=tuple(review.moves),
        unmatched=review.unmatched(),
        freshness=bar_freshness(universe, bar, closes, until),
    )


def _stored_tails(bar: BarSize, tickers: Collection[str], whole: bool) -> dict[str, Candles]:
    """The stored bars a sync compares: each asset's last :data:`OVERLAP_DAYS` stored UTC
    days (its whole history when ``whole``)."""
    if whole:
        return load_bars(bar, tickers)
    last_days = _last_days(bar)
    out: dict[str, Candles] = {}
    for ticker in tickers:
        last = last_days.get(ticker)
        if last is not None:
            out.update(load_bars(bar, [ticker], since_day=last - OVERLAP_DAYS + 1))
    return out


def _last_days(bar: BarSize) -> dict[str, int]:
    """Each asset's last stored UTC day at ``bar`` (epoch days)."""
    query = (
        BarBlock.select(AssetRow.ticker, fn.MAX(BarBlock.day))
        .join(AssetRow)
        .where(BarBlock.bar_seconds == bar.seconds)
        .group_by(AssetRow.ticker)
    )
    rows = database.execute(query).fetchall()
    days = np.array([str(day)[:10] for _, day in rows], dtype="datetime64[D]").astype(np.int64)
    return {str(ticker): int(day) for (ticker, _), day in zip(rows, days.tolist(), strict=True)}


def _first_conflict(stored: Candles, got: Candles) -> BarConflict | None:
    """Where ``got`` disagrees with ``stored`` over the stored span: a close that differs, a
    stored bar the source lacks, or a bar inside the span the database lacks."""
    mine, theirs = bar_times(stored), bar_times(got)
    inside = (theirs >= mine[0]) & (theirs <= mine[-1])
    theirs_in, their_close = theirs[inside], got.close[inside]
    every = np.union1d(mine, theirs_in)
    stored_close = _at(every, mine, stored.close)
    source_close = _at(every, theirs_in, their_close)
    both = ~np.isnan(stored_close) & ~np.isnan(source_close)
    differs = np.isnan(stored_close) | np.isnan(source_close)
    differs[both] = stored_close[both] != source_close[both]
    bad = np.flatnonzero(differs)
    if not len(bad):
        return None
    first = int(bad[0])

    def value(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    return BarConflict(
        stored.ticker,
        int(every[first]),
        value(stored_close[first]),
        value(source_close[first]),
        len(bad),
    )


def _at(times: np.ndarray, known: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (at the sorted ``known`` times) at each of ``times``; NaN where unknown."""
    out = np.full(len(times), np.nan)
    where = np.searchsorted(known, times)
    hit = where < len(known)
    hit[hit] = known[where[hit]] == times[hit]
    out[hit] = values[where[hit]]
    return out


__all__ = ["BarConflict", "BarSyncReport", "sync_bars"]
