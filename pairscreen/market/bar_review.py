"""Which new bars of an asset a sync may write as far as their moves go, decided before
its write transaction: the daily sync's implausible-move hold (:mod:`~pairscreen.market.sync_plan`)
applied to the bars' UTC days and to each bar-to-bar move (:mod:`~pairscreen.market.bar_jumps`).

New bars whose moves are all plausible, or whose named moves a person accepted
(``--accept BTC:2023-03-10T14:00:00Z``), are written; otherwise none of the asset's new bars
is, and the asset is held. A replacing history (``--replace``) is written whole, its
implausible moves named as accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pairscreen.contracts import Candles
from pairscreen.market.bar_jumps import (
    BarAcceptance,
    BigBarMoves,
    bar_hold,
    big_day_moves,
    exceeds_day_limit,
    implausible_bars,
    typical_day_move,
)
from pairscreen.market.bar_store import bar_times
from pairscreen.market.jumps import Hold

NO_CLOSES = np.array([], dtype=np.float64)
NO_TIMES = np.array([], dtype=np.int64)


@dataclass
class BarReview:
    """The move checks of one intraday sync, asset by asset.

    ``accept`` holds the moves a person adopted (``BTC:2023-03-10T14:00:00Z``);
    ``stored_bars`` reads an asset's whole stored bars, needed only when a new bar's move
    or day is beyond its class limit.
    """

    accept: set[str]
    stored_bars: Callable[[str], Candles | None]
    holds: list[Hold] = field(default_factory=list)
    accepted: list[BarAcceptance] = field(default_factory=list)
    moves: list[BigBarMoves] = field(default_factory=list)
    matched: set[str] = field(default_factory=set)  # the accepted moves found held

    def unmatched(self) -> tuple[str, ...]:
        """The moves given to accept that no asset held."""
        return tuple(sorted(self.accept - self.matched))

    def plausible(self, new: Candles, stored: Candles | None, limit_pct: float) -> bool:
        """Whether ``new`` (the bars after ``stored``, the stored tail it continues) may be
        written: no implausible move, or each one accepted. A held asset goes in ``holds``;
        the moves above the class limit that are written are noted."""
        ticker = new.ticker
        close, times = new.close, bar_times(new)
        first_new = 0
        if stored is not None and len(stored.dates):
            close = np.concatenate([stored.close, close])
            times = np.concatenate([bar_times(stored), times])
            first_new = len(stored.dates)
        if not exceeds_day_limit(close, times, first_new, limit_pct):
            return True
        history = self.stored_bars(ticker) if stored is not None else None
        known_close = history.close if history is not None else NO_CLOSES
        known_times = bar_times(history) if history is not None else NO_TIMES
        typical = typical_day_move(known_close, known_times, new.close, bar_times(new))
        found = implausible_bars(ticker, close, times, first_new, limit_pct, typical)
        accepted = tuple(m for m in found if m.key in self.accept)
        held = tuple(m for m in found if m.key not in self.accept)
        self.matched.update(m.key for m in accepted)
        if held:
            self.holds.append(bar_hold(ticker, held, len(new.dates), limit_pct, typical, accepted))
            return False
        if accepted:
            by = "--accept " + ",".join(m.key for m in accepted)
            self.accepted.append(BarAcceptance(ticker, accepted, by))
        skip = frozenset(m.close_time for m in found)
        self._note(ticker, close, times, first_new, limit_pct, skip)
        return True

    def adopt_replaced(self, history: Candles, limit_pct: float) -> None:
        """A replacing history is written whole: its implausible moves are accepted and
        named."""
        times = bar_times(history)
        typical = typical_day_move(NO_CLOSES, NO_TIMES, history.close, times)
        found = implausible_bars(history.ticker, history.close, times, 0, limit_pct, typical)
        if found:
            self.accepted.append(BarAcceptance(history.ticker, tuple(found), "--replace"))
        skip = frozenset(m.close_time for m in found)
        self._note(history.ticker, history.close, times, 0, limit_pct, skip)

    def _note(
        self,
        ticker: str,
        close: np.ndarray,
        times: np.ndarray,
        first_new: int,
        limit_pct: float,
        skip: frozenset[int],
    ) -> None:
        found = big_day_moves(ticker, close, times, first_new, limit_pct, skip)
        if found:
            self.moves.append(BigBarMoves(ticker, tuple(found), limit_pct))
