"""Implausible moves between bars: the daily hold (:mod:`~pairscreen.market.jumps`) applied
to every 24 hours of bars.

A universe's ``[move_limits]`` are percent **a day**, and so are they here: the move judged
is the one over the 24 hours ending at each bar (from the last bar closing at or before 24 h
earlier; the history's first bar when it is younger than a day). It is implausible when
beyond both the class limit and :data:`~pairscreen.market.jumps.JUMP_FACTOR` times the
asset's typical 24-hour move (the median absolute 24-hour log move of its stored bars, the
source's own on a first sync, as for days). The move blamed, named and accepted, is the
largest bar-to-bar move inside that window: a splice or a wrong row is one step, so one bar
carries it and the 23 windows after it that hold the same step name the same bar.

Why not a limit scaled down to the bar: intraday moves have fat tails. Scaling crypto's
60 % a day by ``sqrt(1 h / 1 day)`` (12.2 % an hour) held 233 real hourly moves of the 20
Binance majors over 2021-2023 (the crash of 2021-05-19 in most of them, BTC's +12.3 % of
2021-01-29); 24-hour windows hold 23, each a day's move above 60 % (docs/bar_sizes.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts.bars import DAY_SECONDS
from pairscreen.market.bar_checks import iso_time
from pairscreen.market.jumps import JUMP_FACTOR, MIN_HISTORY_MOVES, NAMED_JUMPS, Typical


def window_starts(times: np.ndarray) -> np.ndarray:
    """For each bar, the index of the bar its 24-hour window starts at: the last closing at
    or before 24 h earlier, or the first bar of ``times`` when none does."""
    starts = np.searchsorted(times, times - DAY_SECONDS, side="right") - 1
    out: np.ndarray = np.maximum(starts, 0)
    return out


def full_windows(times: np.ndarray) -> np.ndarray:
    """Which bars' windows reach a whole day back (the typical move is taken on them)."""
    whole: np.ndarray = times - DAY_SECONDS >= times[0] if len(times) else np.zeros(0, bool)
    return whole


def typical_day_move(
    stored_close: np.ndarray,
    stored_times: np.ndarray,
    new_close: np.ndarray,
    new_times: np.ndarray,
) -> Typical:
    """The median absolute 24-hour log move over the stored bars, or over the stored and the
    new ones when the stored bars span fewer than :data:`MIN_HISTORY_MOVES` days (unknown
    when those do too)."""
    needed = MIN_HISTORY_MOVES * DAY_SECONDS
    if len(stored_times) and stored_times[-1] - stored_times[0] >= needed:
        close, times, basis = stored_close, stored_times, "its {} stored 24 h moves"
    else:
        close = np.concatenate([stored_close, new_close])
        times = np.concatenate([stored_times, new_times])
        stored_some = len(stored_times) > 0
        basis = "its {} stored and new 24 h moves" if stored_some else "the source's {} 24 h moves"
    if not len(times):
        return Typical(None, 0, basis)
    whole = full_windows(times)
    moves = np.abs(np.log(close) - np.log(close[window_starts(times)]))[whole]
    if times[-1] - times[0] < needed:
        return Typical(None, len(moves), basis)
    return Typical(float(np.median(moves)), len(moves), basis)


@dataclass(frozen=True)
class BarMove:
    """One move into the bar closing at ``close_time`` from the close before it, blamed for
    the 24-hour move to ``window_end`` (from ``window_before``)."""

    ticker: str
    close_time: int  # epoch seconds
    before: float
    after: float
    window_end: int  # epoch seconds: the bar whose 24-hour move is beyond the limits
    window_before: float  # the close 24 h before it
    window_after: float  # its close

    @property
    def move_pct(self) -> float:
        return (self.after / self.before - 1.0) * 100.0

    @property
    def window_pct(self) -> float:
        return (self.window_after / self.window_before - 1.0) * 100.0

    @property
    def key(self) -> str:
        """How ``data sync --accept`` names it: ``BTC:2023-03-10T14:00:00Z``."""
        return f"{self.ticker}:{iso_time(self.close_time)}"

    def describe(self) -> str:
        if self.window_end == self.close_time and self.window_before == self.before:
            window = ""
        else:
            window = (
                f", {self.window_pct:+.1f} % over the 24 h to {iso_time(self.window_end)} "
                f"({self.window_before:.10g} -> {self.window_after:.10g})"
            )
        return (
            f"{self.move_pct:+.1f} % into the bar closing {iso_time(self.close_time)} "
            f"({self.before:.10g} -> {self.after:.10g}){window}"
        )


def _listed(moves: Sequence[BarMove]) -> str:
    named = "; ".join(m.describe() for m in moves[:NAMED_JUMPS])
    more = len(moves) - NAMED_JUMPS
    return named + (f"; and {more} more" if more > 0 else "")


def _day_moves(close: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each bar's window start and its 24-hour log move."""
    starts = window_starts(times)
    return starts, np.log(close) - np.log(close[starts])


def _beyond_limit(log_move: np.ndarray, limit_pct: float) -> np.ndarray:
    above: np.ndarray = np.abs(np.expm1(log_move)) * 100.0 > limit_pct
    return above


def exceeds_day_limit(
    close: np.ndarray, times: np.ndarray, first_new: int, limit_pct: float
) -> bool:
    """Whether the 24-hour move to any bar from ``first_new`` on is beyond ``limit_pct`` (the
    cheap test that says whether the typical move needs measuring at all)."""
    if len(close) < 2:
        return False
    _, log_move = _day_moves(close, times)
    return bool(_beyond_limit(log_move[first_new:], limit_pct).any())


def _blamed(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    flagged: np.ndarray,
    starts: np.ndarray,
    first_new: int,
) -> list[BarMove]:
    """The largest bar-to-bar move inside each flagged window, once each, in time order;
    a window whose largest move is a stored bar's (verified history) blames none."""
    steps = np.abs(np.diff(np.log(close)))  # steps[i]: the move into bar i + 1
    found: dict[int, BarMove] = {}
    for end in np.flatnonzero(flagged).tolist():
        start = int(starts[end])
        if end <= start:
            continue
        into = start + 1 + int(np.argmax(steps[start:end]))
        if into < first_new or into in found:
            continue
        found[into] = BarMove(
            ticker=ticker,
            close_time=int(times[into]),
            before=float(close[into - 1]),
            after=float(close[into]),
            window_end=int(times[end]),
            window_before=float(close[start]),
            window_after=float(close[end]),
        )
    return [found[i] for i in sorted(found)]


def implausible_bars(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    first_new: int,
    limit_pct: float,
    typical: Typical,
) -> list[BarMove]:
    """The bar moves to blame for 24-hour moves (to a bar from ``first_new`` on) beyond both
    ``limit_pct`` and :data:`JUMP_FACTOR` times the typical 24-hour move."""
    if len(close) < 2:
        return []
    starts, log_move = _day_moves(close, times)
    flagged = _beyond_limit(log_move, limit_pct)
    if typical.median_log is not None:
        flagged &= np.abs(log_move) > JUMP_FACTOR * typical.median_log
    flagged[:first_new] = False
    return _blamed(ticker, close, times, flagged, starts, first_new)


def big_day_moves(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    first_new: int,
    limit_pct: float,
    skip: frozenset[int] = frozenset(),
) -> list[BarMove]:
    """The bar moves to blame for 24-hour moves above ``limit_pct`` (stored, and named), but
    for those into a close time of ``skip`` (named otherwise)."""
    if len(close) < 2:
        return []
    starts, log_move = _day_moves(close, times)
    flagged = _beyond_limit(log_move, limit_pct)
    flagged[:first_new] = False
    return [
        m
        for m in _blamed(ticker, close, times, flagged, starts, first_new)
        if m.close_time not in skip
    ]


def _beyond(typical: Typical, limit_pct: float) -> str:
    """What a held move is beyond, for a person."""
    limit = f"its class limit of {limit_pct:g} % a day"
    if typical.median_log is None:
        return (
            f"{limit} (its typical 24 h move is unknown: {typical.basis.format(typical.moves)} "
            f"span less than {MIN_HISTORY_MOVES} days)"
        )
    pct = float(np.expm1(typical.median_log)) * 100.0
    return (
        f"{JUMP_FACTOR:g} x its median 24 h move ({pct:.2f} % over "
        f"{typical.basis.format(typical.moves)}) and {limit}"
    )


@dataclass(frozen=True)
class BarHold:
    """An asset whose new bars wait: the implausible moves no one has accepted yet."""

    ticker: str
    moves: tuple[BarMove, ...]  # held, in time order
    waiting: int  # new bars not stored
    limit_pct: float
    typical: Typical
    accepted: tuple[BarMove, ...] = ()  # accepted in this sync, yet waiting on the held ones

    def describe(self) -> str:
        keys = ",".join(m.key for m in (*self.accepted, *self.moves))
        them = "it" if len(self.moves) == 1 and not self.accepted else "them"
        accepted = (
            f" (accepted, still waiting on the rest: {_listed(self.accepted)})"
            if self.accepted
            else ""
        )
        return (
            f"{self.ticker}: close moved {_listed(self.moves)}{accepted}, beyond "
            f"{_beyond(self.typical, self.limit_pct)}; its {self.waiting} new bars wait, none "
            f"stored; after review 'pairscreen data sync --accept {keys}' adopts {them}"
        )


@dataclass(frozen=True)
class BarAcceptance:
    """Implausible bar moves of one asset adopted by a person, and how."""

    ticker: str
    moves: tuple[BarMove, ...]
    by: str  # "--accept ..." or "--replace"

    def describe(self) -> str:
        return f"{self.ticker}: close moved {_listed(self.moves)}, accepted by {self.by}; stored"


@dataclass(frozen=True)
class BigBarMoves:
    """The 24-hour moves of one asset above its class limit yet within its own range:
    stored, and named by the bar carrying each."""

    ticker: str
    moves: tuple[BarMove, ...]
    limit_pct: float

    def describe(self) -> str:
        largest = max(self.moves, key=lambda m: abs(m.window_pct))
        more = f" and {len(self.moves) - 1} more" if len(self.moves) > 1 else ""
        return (
            f"{self.ticker}: close moved {largest.describe()}{more}, above its limit of "
            f"{self.limit_pct:g} % a day; stored"
        )
