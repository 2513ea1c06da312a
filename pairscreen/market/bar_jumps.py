"""Implausible moves between bars: the daily hold (:mod:`~pairscreen.market.jumps`) at a
bar's scale.

A universe's ``[move_limits]`` are percent **a day**. A move from one bar's close to the
next spans less time, and prices wander roughly as the square root of time, so the class
limit of a move is scaled by ``sqrt(span / 1 day)``, the span being the time between the two
closes, at most a day: crypto's 60 % a day is 12.2 % from one hourly close to the next, 24.5 %
over a 4-hour bar and 6.1 % over 15 minutes; a move across a gap (an exchange outage of
three hours) gets the limit of its three hours. The typical move is measured per bar (the
median absolute log move from one bar to the next, :func:`~pairscreen.market.jumps.typical_move`)
and scaled the same way for a move spanning several bars. A move is held when it is beyond
both :data:`~pairscreen.market.jumps.JUMP_FACTOR` times the typical move and the scaled
class limit, exactly as a day's is; one beyond the scaled limit only is stored and named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts.bars import DAY_SECONDS, BarSize
from pairscreen.market.bar_checks import iso_time
from pairscreen.market.jumps import JUMP_FACTOR, MIN_HISTORY_MOVES, NAMED_JUMPS, Typical


def scaled_limit_pct(limit_pct: float, span_seconds: np.ndarray | int) -> np.ndarray:
    """The class limit (percent a day) of a move spanning ``span_seconds``: scaled by the
    square root of the span as a fraction of a day, a day at most."""
    span = np.minimum(np.asarray(span_seconds, dtype=np.float64), DAY_SECONDS)
    scaled: np.ndarray = limit_pct * np.sqrt(span / DAY_SECONDS)
    return scaled


@dataclass(frozen=True)
class BarMove:
    """One move into the bar closing at ``close_time`` from the close before it."""

    ticker: str
    close_time: int  # epoch seconds
    span: int  # seconds since the close before (a bar's length, more across a gap)
    before: float
    after: float

    @property
    def move_pct(self) -> float:
        return (self.after / self.before - 1.0) * 100.0

    @property
    def key(self) -> str:
        """How ``data sync --accept`` names it: ``BTC:2023-03-10T14:00:00Z``."""
        return f"{self.ticker}:{iso_time(self.close_time)}"

    def describe(self, bar: BarSize) -> str:
        gap = (
            f", across a gap of {self.span // bar.seconds - 1} missing bars"
            if self.span > bar.seconds
            else ""
        )
        return (
            f"{self.move_pct:+.1f} % into the bar closing {iso_time(self.close_time)} "
            f"({self.before:.10g} -> {self.after:.10g}{gap})"
        )


def _listed(moves: Sequence[BarMove], bar: BarSize) -> str:
    named = "; ".join(m.describe(bar) for m in moves[:NAMED_JUMPS])
    more = len(moves) - NAMED_JUMPS
    return named + (f"; and {more} more" if more > 0 else "")


def _moves(close: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each move's size in percent either way, its log move and its span in seconds."""
    size = np.abs(close[1:] / close[:-1] - 1.0) * 100.0
    return size, np.diff(np.log(close)), np.diff(times)


def exceeds_bar_limit(close: np.ndarray, times: np.ndarray, limit_pct: float) -> bool:
    """Whether any move is beyond its scaled class limit (the cheap test that says whether
    the typical move needs measuring at all)."""
    if len(close) < 2:
        return False
    size, _, span = _moves(close, times)
    return bool((size > scaled_limit_pct(limit_pct, span)).any())


def implausible_bars(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    bar: BarSize,
    limit_pct: float,
    typical: Typical,
) -> list[BarMove]:
    """The moves beyond both their scaled class limit and :data:`JUMP_FACTOR` times the
    typical bar move (scaled to their span), in time order; ``times`` are close times."""
    if len(close) < 2:
        return []
    size, log_move, span = _moves(close, times)
    beyond = size > scaled_limit_pct(limit_pct, span)
    if typical.median_log is not None:
        bars_spanned = np.minimum(span, DAY_SECONDS) / bar.seconds
        beyond &= np.abs(log_move) > JUMP_FACTOR * typical.median_log * np.sqrt(bars_spanned)
    return _at(ticker, close, times, np.flatnonzero(beyond))


def big_bar_moves(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    limit_pct: float,
    skip: frozenset[int] = frozenset(),
) -> tuple[int, BarMove] | None:
    """How many moves are above their scaled class limit, but for those into a close time
    of ``skip`` (named otherwise), and the largest; None when none is."""
    if len(close) < 2:
        return None
    size, _, span = _moves(close, times)
    above = size > scaled_limit_pct(limit_pct, span)
    if skip:
        above &= ~np.isin(times[1:], np.array(sorted(skip), dtype=np.int64))
    found = np.flatnonzero(above)
    if not len(found):
        return None
    worst = int(found[np.argmax(size[found])])
    return len(found), _at(ticker, close, times, np.array([worst]))[0]


def _at(ticker: str, close: np.ndarray, times: np.ndarray, into: np.ndarray) -> list[BarMove]:
    """The moves into the bars ``into + 1`` (``into`` indexes the moves)."""
    return [
        BarMove(
            ticker=ticker,
            close_time=int(times[i + 1]),
            span=int(times[i + 1] - times[i]),
            before=float(close[i]),
            after=float(close[i + 1]),
        )
        for i in into.tolist()
    ]


def _beyond(typical: Typical, bar: BarSize, limit_pct: float) -> str:
    """What a held bar move is beyond, for a person."""
    one_bar = float(scaled_limit_pct(limit_pct, bar.seconds))
    limit = f"its class limit of {limit_pct:g} % a day ({one_bar:.1f} % over a {bar.name} bar)"
    if typical.median_log is None:
        return (
            f"{limit} (its typical {bar.name} move is unknown: "
            f"{typical.basis.format(typical.moves)}, {MIN_HISTORY_MOVES} needed)"
        )
    pct = float(np.expm1(typical.median_log)) * 100.0
    return (
        f"{JUMP_FACTOR:g} x its median {bar.name} move ({pct:.2f} % over "
        f"{typical.basis.format(typical.moves)}) and {limit}"
    )


@dataclass(frozen=True)
class BarHold:
    """An asset whose new bars wait: the implausible moves no one has accepted yet."""

    ticker: str
    bar: BarSize
    moves: tuple[BarMove, ...]  # held, in time order
    waiting: int  # new bars not stored
    limit_pct: float
    typical: Typical
    accepted: tuple[BarMove, ...] = ()  # accepted in this sync, yet waiting on the held ones

    def describe(self) -> str:
        keys = ",".join(m.key for m in (*self.accepted, *self.moves))
        them = "it" if len(self.moves) == 1 and not self.accepted else "them"
        accepted = (
            f" (accepted, still waiting on the rest: {_listed(self.accepted, self.bar)})"
            if self.accepted
            else ""
        )
        return (
            f"{self.ticker}: close moved {_listed(self.moves, self.bar)}{accepted}, beyond "
            f"{_beyond(self.typical, self.bar, self.limit_pct)}; its {self.waiting} new bars "
            f"wait, none stored; after review 'pairscreen data sync --accept {keys}' adopts "
            f"{them}"
        )


@dataclass(frozen=True)
class BarAcceptance:
    """Implausible bar moves of one asset adopted by a person, and how."""

    ticker: str
    bar: BarSize
    moves: tuple[BarMove, ...]
    by: str  # "--accept ..." or "--replace"

    def describe(self) -> str:
        return (
            f"{self.ticker}: close moved {_listed(self.moves, self.bar)}, accepted by "
            f"{self.by}; stored"
        )


@dataclass(frozen=True)
class BigBarMoves:
    """The moves of one asset above their scaled class limit yet within its own range:
    stored, and named."""

    ticker: str
    bar: BarSize
    count: int
    limit_pct: float
    largest: BarMove

    def describe(self) -> str:
        more = f" and {self.count - 1} more" if self.count > 1 else ""
        one_bar = float(scaled_limit_pct(self.limit_pct, self.bar.seconds))
        return (
            f"{self.ticker}: close moved {self.largest.describe(self.bar)}{more}, above its "
            f"limit of {self.limit_pct:g} % a day ({one_bar:.1f} % over a {self.bar.name} "
            "bar); stored"
        )
