"""Implausible day-over-day jumps: the new closes a sync holds until a person looks.

A move from one close to the next is implausible when its size is beyond both
:data:`JUMP_FACTOR` times the asset's typical day (the median absolute daily log move of its
own history, :func:`typical_move`) and the asset class's limit
(:meth:`~pairscreen.universe.Universe.move_limit_pct`). Either alone would hold real markets:
the typical day alone holds Bitcoin's -39.5 % of 2020-03-12 (its typical day is 1.6 %), the
class limit alone a small coin's every big week. A spliced file (another asset's closes
appended) or a price read wrong by a thousands separator is beyond both.

The typical day is measured on the asset's stored closes, the history already verified, when
they hold at least :data:`MIN_HISTORY_MOVES` moves; with fewer (a first sync) on the stored
and the new closes together, which on a first sync are the source's own. With fewer than that
in all, the asset's typical day is unknown and the class limit alone decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

import numpy as np

from pairscreen.market.row_checks import move_sizes_pct

JUMP_FACTOR = 8.0  # times the median absolute daily log move
MIN_HISTORY_MOVES = 30  # moves needed before a median says what a typical day is
NAMED_JUMPS = 3  # held moves a report line names; the rest are counted


@dataclass(frozen=True)
class Jump:
    """One implausible move: the close of ``day`` against the close before it."""

    ticker: str
    day: date
    before: float
    after: float

    @property
    def move_pct(self) -> float:
        return (self.after / self.before - 1.0) * 100.0

    @property
    def key(self) -> str:
        """How ``data sync --accept`` names it: ``BTC:2023-10-01``."""
        return f"{self.ticker}:{self.day.isoformat()}"

    def describe(self) -> str:
        return f"{self.move_pct:+.1f} % on {self.day} ({self.before:.10g} -> {self.after:.10g})"


@dataclass(frozen=True)
class Typical:
    """An asset's typical day: the median absolute daily log move and what it was taken on."""

    median_log: float | None  # None: fewer than MIN_HISTORY_MOVES moves, unknown
    moves: int
    basis: str  # what the moves were, "its {} stored moves" (a first sync: "the source's {} moves")

    def beyond(self, limit_pct: float, per: str = "") -> str:
        """What a held move is beyond, for a person (``per``: how the limit is counted, " a
        day" for bars, where a move may span less than a day)."""
        limit = f"its class limit of {limit_pct:g} %{per}"
        if self.median_log is None:
            return (
                f"{limit} (its typical day is unknown: {self.basis.format(self.moves)}, "
                f"{MIN_HISTORY_MOVES} needed)"
            )
        pct = float(np.expm1(self.median_log)) * 100.0
        return (
            f"{JUMP_FACTOR:g} x its median daily move ({pct:.2f} % over "
            f"{self.basis.format(self.moves)}) and {limit}"
        )


def typical_move(stored: np.ndarray, new: np.ndarray) -> Typical:
    """The median absolute daily log move of ``stored`` closes, or of ``stored`` then ``new``
    when the stored ones are too few."""
    if len(stored) - 1 >= MIN_HISTORY_MOVES:
        closes, basis = stored, "its {} stored moves"
    else:
        closes = np.concatenate([stored, new])
        basis = "its {} stored and new moves" if len(stored) else "the source's {} moves"
    moves = np.abs(np.diff(np.log(closes)))
    if len(moves) < MIN_HISTORY_MOVES:
        return Typical(None, len(moves), basis)
    return Typical(float(np.median(moves)), len(moves), basis)


def implausible(
    ticker: str, close: np.ndarray, dates: np.ndarray, limit_pct: float, typical: Typical
) -> list[Jump]:
    """The moves from each close of ``close`` to the next beyond both ``limit_pct`` percent and
    :data:`JUMP_FACTOR` times the typical day, in day order."""
    if len(close) < 2:
        return []
    log_move = np.diff(np.log(close))
    beyond = np.abs(np.expm1(log_move)) * 100.0 > limit_pct
    if typical.median_log is not None:
        beyond &= np.abs(log_move) > JUMP_FACTOR * typical.median_log
    return [
        Jump(
            ticker=ticker,
            day=date.fromisoformat(str(dates[i + 1])),
            before=float(close[i]),
            after=float(close[i + 1]),
        )
        for i in np.flatnonzero(beyond).tolist()
    ]


def exceeds_limit(close: np.ndarray, limit_pct: float) -> bool:
    """Whether any move of ``close`` is beyond ``limit_pct`` (the cheap test that says whether
    the typical day needs measuring at all)."""
    if len(close) < 2:
        return False
    return bool((move_sizes_pct(close) > limit_pct).any())


class NamedMove(Protocol):
    """A held move as a hold names it: a daily :class:`Jump` or a bar's move."""

    @property
    def key(self) -> str: ...

    def describe(self) -> str: ...


def _listed(jumps: Sequence[NamedMove]) -> str:
    named = "; ".join(j.describe() for j in jumps[:NAMED_JUMPS])
    more = len(jumps) - NAMED_JUMPS
    return named + (f"; and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class Hold:
    """An asset whose new rows (or bars) wait: the implausible moves no one has accepted yet."""

    ticker: str
    jumps: tuple[NamedMove, ...]  # held, in time order
    waiting: int  # new rows not stored
    limit_pct: float
    typical: Typical
    accepted: tuple[NamedMove, ...] = ()  # accepted in this sync, yet waiting on the held ones
    unit: str = "rows"  # what waits: a daily sync's rows, or an intraday sync's "bars"
    per: str = ""  # how the limit is counted (see :meth:`Typical.beyond`)

    @property
    def moves(self) -> tuple[NamedMove, ...]:
        """The held moves (a bar sync's word for them)."""
        return self.jumps

    def describe(self) -> str:
        keys = ",".join(j.key for j in (*self.accepted, *self.jumps))
        them = "it" if len(self.jumps) == 1 and not self.accepted else "them"
        accepted = (
            f" (accepted, still waiting on the rest: {_listed(self.accepted)})"
            if self.accepted
            else ""
        )
        return (
            f"{self.ticker}: close moved {_listed(self.jumps)}{accepted}, beyond "
            f"{self.typical.beyond(self.limit_pct, self.per)}; its "
            f"{self.waiting} new {self.unit} wait, none stored; after review "
            f"'pairscreen data sync --accept {keys}' adopts {them}"
        )


@dataclass(frozen=True)
class Acceptance:
    """Implausible moves of one asset adopted by a person, and how."""

    ticker: str
    jumps: tuple[Jump, ...]
    by: str  # "--accept" or "--replace"

    def describe(self) -> str:
        return f"{self.ticker}: close moved {_listed(self.jumps)}, accepted by {self.by}; stored"
