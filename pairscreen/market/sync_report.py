"""What one ``data sync`` did, for a person (lines) and for a log (one line).

It leads with the staleness of what is stored after the sync, so a sync that added nothing
never reads as "up to date" while the assets are months old, then names every asset that
needs a look: conflicts, assets whose rows could not all be read and assets whose new closes
move implausibly (nothing written for any of them), replaced histories and accepted moves,
moves above the class limit and rows of the source left out. Each asset takes one line, so a
file of 731 bad rows names its first few and counts the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

from pairscreen.contracts import RowIssues
from pairscreen.market.freshness import AssetFreshness, describe
from pairscreen.market.jumps import Acceptance, Hold
from pairscreen.market.reconcile import OVERLAP_DAYS, Change, Conflict
from pairscreen.market.row_checks import BigMoves
from pairscreen.wording import plural

REVIEW_PREFIXES = ("conflict:", "refused:", "held:")


def stale_headline(fresh: Mapping[str, AssetFreshness]) -> str:
    """How many assets are stale after the sync, and the oldest one."""
    known = [f for f in fresh.values() if f.last_day is not None and f.age_days is not None]
    if not known:
        return "no candles stored yet"
    stale = [f for f in known if f.stale]
    if not stale:
        return (
            f"no stale assets: {plural(len(known), 'asset')} with candles, each closed within "
            "its class's limit"
        )
    oldest = max(stale, key=lambda f: f.age_days or 0)
    return (
        f"{len(stale)} of {plural(len(fresh), 'asset')} {'is' if len(stale) == 1 else 'are'} "
        f"stale; the oldest is {oldest.ticker}, last close {oldest.last_day} "
        f"({plural(oldest.age_days or 0, 'day')} old, "
        f"limit {plural(oldest.limit_days, 'day')})"
    )


def describe_issues(ticker: str, issues: RowIssues, until: date) -> str:
    """``BTC: source rows left out: 3 dated after the last closed day …``: the rows that do
    not refuse the asset."""
    parts = []
    if issues.future:
        parts.append(f"{issues.future} dated after the last closed day {until} (not closed yet)")
    if issues.duplicate:
        parts.append(f"{issues.duplicate} repeating a day with the same values (stored once)")
    origin = f" ({issues.origin})" if issues.origin else ""
    return f"{ticker}: source rows left out{origin}: {', '.join(parts)}"


def describe_refusal(ticker: str, issues: RowIssues) -> str:
    """``BTC: BTC.csv: 731 rows not understood: line 2 …; and 728 more; nothing written``."""
    where = f"{issues.origin}: " if issues.origin else ""
    if issues.unreadable:
        return f"{ticker}: {issues.unreadable}; nothing written for {ticker}"
    count = issues.not_understood
    rows = "1 row" if count == 1 else f"{count} rows"
    named = "; ".join(issues.examples) if issues.examples else "the source names none"
    more = count - len(issues.examples)
    rest = f"; and {more} more" if issues.examples and more > 0 else ""
    return f"{ticker}: {where}{rows} not understood: {named}{rest}; nothing written for {ticker}"


@dataclass(frozen=True)
class SyncReport:
    """What one sync did: new candles per ticker, conflicts, replacements, warnings."""

    source: str
    until: date
    inserted: dict[str, int] = field(default_factory=dict)  # ticker -> new candles
    missing: tuple[str, ...] = ()  # universe tickers with no candles stored at all
    assets_changed: int = 0  # asset rows created or updated
    data_version: int | None = None  # the new "candles" version, None when unchanged
    freshness: dict[str, AssetFreshness] = field(default_factory=dict)  # after the sync
    conflicts: tuple[Conflict, ...] = ()  # assets left as stored: their history changed
    replaced: tuple[Change, ...] = ()  # assets whose stored history was replaced
    moves: tuple[BigMoves, ...] = ()  # new closes moving more than the class allows
    issues: dict[str, RowIssues] = field(default_factory=dict)  # ticker -> rows not used
    unanswered: tuple[str, ...] = ()  # stored assets the source returned nothing for
    verified: bool = False  # whole stored histories compared (``--verify``)
    holds: tuple[Hold, ...] = ()  # assets whose new rows wait on implausible moves
    accepted: tuple[Acceptance, ...] = ()  # implausible moves adopted after review
    unmatched: tuple[str, ...] = ()  # moves given to accept that no asset held

    @property
    def refused(self) -> tuple[str, ...]:
        """The assets none of whose rows were written: the source's rows not all read."""
        return tuple(t for t, issues in self.issues.items() if issues.refuses)

    @property
    def needs_review(self) -> tuple[str, ...]:
        """Every asset left as stored for a person to look at: conflicts, refused, held."""
        names = [c.ticker for c in self.conflicts] + list(self.refused)
        return tuple(dict.fromkeys(names + [h.ticker for h in self.holds]))

    @property
    def total(self) -> int:
        return sum(self.inserted.values())

    @property
    def changed(self) -> bool:
        return self.data_version is not None

    def lines(self) -> list[str]:
        """The report for a person: staleness first, then what needs a look, then counts."""
        out = [stale_headline(self.freshness)]
        span = "whole stored history" if self.verified else f"last {OVERLAP_DAYS} stored days"
        out += [f"conflict: {c.describe()}" for c in self.conflicts]
        out += [f"refused: {describe_refusal(t, self.issues[t])}" for t in self.refused]
        out += [f"held: {h.describe()}" for h in self.holds]
        out += [f"replaced: {c.describe()}" for c in self.replaced]
        out += [f"accepted: {a.describe()}" for a in self.accepted]
        out += [
            f"warning: --accept {key}: no move of {key.split(':')[0]} into that day is held; "
            "nothing accepted"
            for key in self.unmatched
        ]
        out += [f"warning: {m.describe()}" for m in self.moves]
        out += [
            f"warning: {describe_issues(t, i, self.until)}"
            for t, i in self.issues.items()
            if i and not i.refuses
        ]
        if self.unanswered:
            out.append(
                f"warning: the source returned nothing for {', '.join(self.unanswered)}; "
                "kept as stored"
            )
        if not self.changed:
            added = f"{self.source}: no new candles (the {span} checked against the source)"
        else:
            tickers = sum(1 for n in self.inserted.values() if n)
            added = (
                f"{self.source}: {plural(self.total, 'new candle')} for "
                f"{plural(tickers, 'asset')} through "
                f"{self.until.isoformat()} (the {span} checked; data version {self.data_version})"
            )
        if self.missing:
            added += f"; no data for {', '.join(self.missing)}"
        out.append(f"{added}; {describe(self.freshness)}")
        if self.conflicts:
            names = ",".join(c.ticker for c in self.conflicts)
            out.append(
                f"{plural(len(self.conflicts), 'asset')} "
                f"{'conflicts' if len(self.conflicts) == 1 else 'conflict'} with the source and "
                "were not synced; "
                f"'pairscreen data sync --replace {names}' adopts the source's history"
            )
        return out

    def review_lines(self) -> list[str]:
        """The lines naming each asset left as stored for a person (conflict, refused, held):
        what a command that syncs on the way (``screen run``, ``peg sample``) warns of."""
        return [line for line in self.lines() if line.startswith(REVIEW_PREFIXES)]

    def summary(self) -> str:
        """The report on one line (the worker's log)."""
        return "; ".join(self.lines())
