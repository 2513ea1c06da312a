"""Implausible moves between bars: the daily hold (:mod:`~pairscreen.market.jumps`) at the
bars' clock.

A universe's ``[move_limits]`` are percent **a day**, and so are they here. Two moves are
judged against them: the move of each UTC day (from the last bar of the day before to the
day's last bar, which at 00:00Z is the day's close: what a daily universe of the same closes
judges), and each bar-to-bar move (no single bar may move more than a whole day may). A move
is implausible when beyond both the class limit and
:data:`~pairscreen.market.jumps.JUMP_FACTOR` times the asset's typical day (the median
absolute daily log move of its stored bars' days, the source's own on a first sync, as for
days). The move named, and accepted, is a bar's: the bar-to-bar move itself, or the largest
one inside the implausible day (a splice or a wrong row is one step).

Why not a limit scaled down to the bar: intraday moves have fat tails. Scaling crypto's 60 %
a day by ``sqrt(1 h / 1 day)`` (12.2 % an hour) held 233 real hourly moves of the 20 Binance
majors over 2021-2023 (the crash of 2021-05-19 in most of them), and the daily limit over
every rolling 24 hours 23; UTC days and single bars hold 9, the daily sync's 8 days and one
DOGE hour of +70 % (docs/bar_sizes.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts.bars import DAY_SECONDS
from pairscreen.market.bar_checks import iso_time
from pairscreen.market.jumps import JUMP_FACTOR, MIN_HISTORY_MOVES, NAMED_JUMPS, Hold, Typical


def day_ends(times: np.ndarray) -> np.ndarray:
    """Which bars end their UTC day: the bar closing at 00:00Z, or the last one before the
    next day's bars (a day's bars open on that day)."""
    open_day = (times - 1) // DAY_SECONDS
    ends = np.ones(len(times), dtype=bool)
    ends[:-1] = open_day[1:] != open_day[:-1]
    return ends


def _windows(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The moves judged, as (start, end) bar indexes: each bar-to-bar move, then each UTC
    day's move from the last bar of the day before (the first bar for the first day)."""
    bars = np.arange(1, len(times))
    ends = np.flatnonzero(day_ends(times))
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)[: len(ends)]
    days = ends > starts
    return np.concatenate([bars - 1, starts[days]]), np.concatenate([bars, ends[days]])


def typical_day_move(
    stored_close: np.ndarray,
    stored_times: np.ndarray,
    new_close: np.ndarray,
    new_times: np.ndarray,
) -> Typical:
    """The median absolute daily log move of the stored bars' UTC days, or of the stored and
    the new bars' when the stored ones hold fewer than :data:`MIN_HISTORY_MOVES` (unknown
    when those do too)."""
    stored = _daily_moves(stored_close, stored_times)
    if len(stored) >= MIN_HISTORY_MOVES:
        moves, basis = stored, "its {} stored daily moves"
    else:
        moves = _daily_moves(
            np.concatenate([stored_close, new_close]), np.concatenate([stored_times, new_times])
        )
        basis = (
            "its {} stored and new daily moves"
            if len(stored_times)
            else "the source's {} daily moves"
        )
    if len(moves) < MIN_HISTORY_MOVES:
        return Typical(None, len(moves), basis)
    return Typical(float(np.median(moves)), len(moves), basis)


def _daily_moves(close: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The absolute log moves from one UTC day's last bar to the next."""
    ends = day_ends(times)
    moves: np.ndarray = np.abs(np.diff(np.log(close[ends])))
    return moves


@dataclass(frozen=True)
class BarMove:
    """One move into the bar closing at ``close_time`` from the close before it, named for
    the move to ``window_end`` from ``window_before`` (itself, or its UTC day's)."""

    ticker: str
    close_time: int  # epoch seconds
    before: float
    after: float
    window_end: int  # epoch seconds: the bar ending the move beyond the limits
    window_before: float  # the close the move starts from
    window_after: float  # the close it ends at

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
                f", {self.window_pct:+.1f} % over the UTC day to {iso_time(self.window_end)} "
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


def _window_moves(
    close: np.ndarray, times: np.ndarray, first_new: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The judged moves ending at a bar from ``first_new`` on: starts, ends, log moves."""
    starts, ends = _windows(times)
    new = ends >= first_new
    starts, ends = starts[new], ends[new]
    log_close = np.log(close)
    return starts, ends, log_close[ends] - log_close[starts]


def _beyond_limit(log_move: np.ndarray, limit_pct: float) -> np.ndarray:
    above: np.ndarray = np.abs(np.expm1(log_move)) * 100.0 > limit_pct
    return above


def exceeds_day_limit(
    close: np.ndarray, times: np.ndarray, first_new: int, limit_pct: float
) -> bool:
    """Whether a judged move ending at a bar from ``first_new`` on is beyond ``limit_pct``
    (the cheap test that says whether the typical day needs measuring at all)."""
    if len(close) < 2:
        return False
    _, _, log_move = _window_moves(close, times, first_new)
    return bool(_beyond_limit(log_move, limit_pct).any())


def _blamed(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    flagged: tuple[np.ndarray, np.ndarray],
    first_new: int,
) -> list[BarMove]:
    """The bar-to-bar move to name for each flagged (start, end) move, once each, in time
    order: a bar's own move, or the largest inside a day; a day whose largest move is a
    stored bar's (verified history) names none."""
    steps = np.abs(np.diff(np.log(close)))  # steps[i]: the move into bar i + 1
    found: dict[int, BarMove] = {}
    for start, end in zip(*(f.tolist() for f in flagged), strict=True):
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
    """The bar moves to name for judged moves (ending at a bar from ``first_new`` on) beyond
    both ``limit_pct`` and :data:`JUMP_FACTOR` times the typical day."""
    if len(close) < 2:
        return []
    starts, ends, log_move = _window_moves(close, times, first_new)
    flagged = _beyond_limit(log_move, limit_pct)
    if typical.median_log is not None:
        flagged &= np.abs(log_move) > JUMP_FACTOR * typical.median_log
    return _blamed(ticker, close, times, (starts[flagged], ends[flagged]), first_new)


def big_day_moves(
    ticker: str,
    close: np.ndarray,
    times: np.ndarray,
    first_new: int,
    limit_pct: float,
    skip: frozenset[int] = frozenset(),
) -> list[BarMove]:
    """The bar moves to name for judged moves above ``limit_pct`` (stored, and named), but
    for those into a close time of ``skip`` (named otherwise)."""
    if len(close) < 2:
        return []
    starts, ends, log_move = _window_moves(close, times, first_new)
    flagged = _beyond_limit(log_move, limit_pct)
    found = _blamed(ticker, close, times, (starts[flagged], ends[flagged]), first_new)
    return [m for m in found if m.close_time not in skip]


def bar_hold(
    ticker: str,
    moves: tuple[BarMove, ...],
    waiting: int,
    limit_pct: float,
    typical: Typical,
    accepted: tuple[BarMove, ...] = (),
) -> Hold:
    """An asset whose new bars wait on its held moves: a daily sync's hold, told in bars and
    with its limit per day (a bar's move spans less than a day)."""
    return Hold(ticker, moves, waiting, limit_pct, typical, accepted, unit="bars", per=" a day")


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
    """The moves of one asset above its class limit yet within its own range: stored, and
    named by the bar carrying each."""

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
