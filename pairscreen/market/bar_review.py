"""Which new bars of an asset a sync may write as far as their moves go, decided before
its write transaction: the daily sync's implausible-move hold (:mod:`~pairscreen.market.sync_plan`)
per bar, with the limits of :mod:`~pairscreen.market.bar_jumps`.

New bars whose moves are all plausible, or whose implausible moves a person accepted
(``--accept BTC:2023-03-10T14:00:00Z``), are written; otherwise none of the asset's new bars
is, and the asset is held. A replacing history (``--replace``) is written whole, its
implausible moves named as accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pairscreen.contracts import Candles
from pairscreen.contracts.bars import BarSize
from pairscreen.market.bar_jumps import (
    BarAcceptance,
    BarHold,
    BigBarMoves,
    big_bar_moves,
    exceeds_bar_limit,
    implausible_bars,
)
from pairscreen.market.bar_store import bar_times
from pairscreen.market.jumps import typical_move

NO_CLOSES = np.array([], dtype=np.float64)


@dataclass
class BarReview:
    """The move checks of one intraday sync, asset by asset.

    ``accept`` holds the moves a person adopted (``BTC:2023-03-10T14:00:00Z``);
    ``stored_closes`` reads an asset's whole stored closes, needed only when a new bar moves
    beyond its scaled class limit.
    """

    bar: BarSize
    accept: set[str]
    stored_closes: Callable[[str], np.ndarray]
    holds: list[BarHold] = field(default_factory=list)
    accepted: list[BarAcceptance] = field(default_factory=list)
    moves: list[BigBarMoves] = field(default_factory=list)
    matched: set[str] = field(default_factory=set)  # the accepted moves found held

    def unmatched(self) -> tuple[str, ...]:
        """The moves given to accept that no asset held."""
        return tuple(sorted(self.accept - self.matched))

    def plausible(self, new: Candles, stored: Candles | None, limit_pct: float) -> bool:
        """Whether ``new`` (the bars after ``stored``, whose tail it continues) may be
        written: no implausible move, or each one accepted. A held asset goes in
        ``holds``; moves above the scaled limit that are written are noted."""
        ticker = new.ticker
        close, times = new.close, bar_times(new)
        if stored is not None and len(stored.dates):
            close = np.concatenate([stored.close[-1:], close])
            times = np.concatenate([bar_times(stored)[-1:], times])
        if not exceeds_bar_limit(close, times, limit_pct):
            return True
        known = self.stored_closes(ticker) if stored is not None else NO_CLOSES
        typical = typical_move(known, new.close)
        found = implausible_bars(ticker, close, times, self.bar, limit_pct, typical)
        accepted = tuple(m for m in found if m.key in self.accept)
        held = tuple(m for m in found if m.key not in self.accept)
        self.matched.update(m.key for m in accepted)
        if held:
            self.holds.append(
                BarHold(ticker, self.bar, held, len(new.dates), limit_pct, typical, accepted)
            )
            return False
        if accepted:
            by = "--accept " + ",".join(m.key for m in accepted)
            self.accepted.append(BarAcceptance(ticker, self.bar, accepted, by))
        self._note(ticker, close, times, limit_pct, frozenset(m.close_time for m in found))
        return True

    def adopt_replaced(self, history: Candles, limit_pct: float) -> None:
        """A replacing history is written whole: its implausible moves are accepted and
        named."""
        times = bar_times(history)
        typical = typical_move(NO_CLOSES, history.close)
        found = implausible_bars(history.ticker, history.close, times, self.bar, limit_pct, typical)
        if found:
            self.accepted.append(BarAcceptance(history.ticker, self.bar, tuple(found), "--replace"))
        skip = frozenset(m.close_time for m in found)
        self._note(history.ticker, history.close, times, limit_pct, skip)

    def _note(
        self,
        ticker: str,
        close: np.ndarray,
        times: np.ndarray,
        limit_pct: float,
        skip: frozenset[int],
    ) -> None:
        found = big_bar_moves(ticker, close, times, limit_pct, skip)
        if found is not None:
            count, largest = found
            self.moves.append(BigBarMoves(ticker, self.bar, count, limit_pct, largest))
