"""What a sync writes for each asset, decided before its write transaction starts.

An asset's answer from the source is written only when every check lets it through, in this
order: its rows were all read (``RowIssues.refuses``), its stored overlap agrees with the
source (:mod:`~pairscreen.market.reconcile`), and its new closes move plausibly or a person
accepted each implausible move (:mod:`~pairscreen.market.jumps`). ``replace`` skips the
overlap and the hold: the operator adopts the source's whole history, its moves named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from pairscreen.contracts import Asset, Candles, RowIssues
from pairscreen.market.jumps import Acceptance, Hold, exceeds_limit, implausible, typical_move
from pairscreen.market.reconcile import Change, Conflict, change, first_conflict
from pairscreen.market.row_checks import BigMoves, big_moves

NO_CLOSES = np.array([], dtype=np.float64)


def _day(value: np.datetime64) -> date:
    return date.fromisoformat(str(value.astype("datetime64[D]")))


@dataclass
class SyncPlan:
    """The writes and the report of one sync, asset by asset.

    ``accept`` holds the implausible moves a person has adopted (``BTC:2023-10-01``);
    ``stored_closes`` reads an asset's whole stored history, needed only when a new close
    moves beyond its class limit.
    """

    accept: set[str]
    stored_closes: Callable[[str], np.ndarray]
    append: list[Candles] = field(default_factory=list)  # new days after the stored ones
    replace: list[Candles] = field(default_factory=list)  # whole histories replacing stored
    inserted: dict[str, int] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    replaced: list[Change] = field(default_factory=list)
    moves: list[BigMoves] = field(default_factory=list)
    issues: dict[str, RowIssues] = field(default_factory=dict)
    holds: list[Hold] = field(default_factory=list)
    accepted: list[Acceptance] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)  # stored assets with no answer
    matched: set[str] = field(default_factory=set)  # the accepted moves found held

    def unmatched(self) -> tuple[str, ...]:
        """The moves given to accept that no asset held."""
        return tuple(sorted(self.accept - self.matched))

    def add(
        self,
        asset: Asset,
        got: Candles,
        mine: Candles | None,
        limit: float,
        until: date,
        replacing: bool,
    ) -> None:
        """Decide what to write of ``got``, the source's answer for ``asset``; ``mine`` is
        what is stored of it (its overlap, or its whole history)."""
        t = asset.ticker
        if got.issues:
            self.issues[t] = got.issues
        if got.issues.refuses:
            return  # rows the source could not all read: nothing of them is written
        if mine is None or not len(mine.dates):
            if not len(got.dates):
                return
            if replacing:
                self._adopt_replaced(got, limit)
            elif not self._plausible(got, None, limit):
                return
            self.append.append(got)
            self.inserted[t] = len(got.dates)
            return
        if replacing:
            if not len(got.dates):
                self.unanswered.append(t)
                return
            self.replace.append(got)
            self.replaced.append(change(mine, got))
            self.inserted[t] = int((got.dates > mine.dates[-1]).sum())
            self._adopt_replaced(got, limit)
            return
        # Stored days after ``until`` (a sync told to stop earlier) were not asked for.
        end = min(_day(mine.dates[-1]), until)
        conflict = first_conflict(mine, got, _day(mine.dates[0]), end)
        if conflict is not None:
            self.conflicts.append(conflict)
            return
        new = got.dates > mine.dates[-1]
        if new.any():
            fresh = Candles(t, got.dates[new], got.close[new], got.volume[new])
            if self._plausible(fresh, mine, limit):
                self.append.append(fresh)
                self.inserted[t] = int(new.sum())

    def _plausible(self, new: Candles, stored: Candles | None, limit: float) -> bool:
        """Whether ``new`` (the days after ``stored``, whose tail it continues) may be
        written: no implausible move, or each one accepted. A held asset goes in ``holds``;
        the moves above the class limit that are written are noted."""
        ticker = new.ticker
        close, dates = new.close, new.dates
        if stored is not None and len(stored.dates):
            close = np.concatenate([stored.close[-1:], close])
            dates = np.concatenate([stored.dates[-1:], dates])
        if not exceeds_limit(close, limit):
            return True
        known = self.stored_closes(ticker) if stored is not None else NO_CLOSES
        typical = typical_move(known, new.close)
        jumps = implausible(ticker, close, dates, limit, typical)
        accepted = tuple(j for j in jumps if j.key in self.accept)
        held = tuple(j for j in jumps if j.key not in self.accept)
        self.matched.update(j.key for j in accepted)
        if held:
            self.holds.append(Hold(ticker, held, len(new.dates), limit, typical, accepted))
            return False
        if accepted:
            by = "--accept " + ",".join(j.key for j in accepted)
            self.accepted.append(Acceptance(ticker, accepted, by))
        self._note_moves(ticker, close, dates, limit, frozenset(j.day for j in jumps))
        return True

    def _adopt_replaced(self, history: Candles, limit: float) -> None:
        """A replacing history is written whole: its implausible moves are accepted and
        named."""
        typical = typical_move(NO_CLOSES, history.close)
        jumps = implausible(history.ticker, history.close, history.dates, limit, typical)
        if jumps:
            self.accepted.append(Acceptance(history.ticker, tuple(jumps), "--replace"))
        skip = frozenset(j.day for j in jumps)
        self._note_moves(history.ticker, history.close, history.dates, limit, skip)

    def _note_moves(
        self,
        ticker: str,
        close: np.ndarray,
        dates: np.ndarray,
        limit: float,
        skip: frozenset[date],
    ) -> None:
        found = big_moves(ticker, close, dates, limit, skip)
        if found is not None:
            self.moves.append(found)
