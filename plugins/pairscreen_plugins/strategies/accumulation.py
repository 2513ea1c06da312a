"""The accumulation backtest: walk-forward band swaps, counted in coins.

Leg "A" is ``pairscan_rmr.walk_forward_backtest`` on the last ``L + bt`` closes of (A, B) with
``lookback_days=L``; leg "B" is the same run on (B, A). Every pair of the panel is simulated at
once: the rolling p5/p95 bands of both legs come from one pass of exact rolling order
statistics (``_rolling``), the swap decisions from a vectorised hysteresis (a swap happens
exactly when the latest band signal differs from the coin held), and the coin counts from
one multiplication per swap, in the reference's order of operations, so growth, drawdown and
trades equal the reference bit for bit.

Trades of leg "B" carry the run's own decision value, ``ln(B/A)`` at ``t-1`` (as the reference
run on (B, A) reports it).

No lookahead: the band of day ``t`` is read from the log-ratios strictly before ``t``, the
decision from ``r[t-1]``, and the swap executes at day-``t`` closes.

Days are calendar days: ``bt`` simulates the closes of the last ``bt`` calendar days, and the
band of a simulated day ``t`` holds the closes of the ``L`` calendar days before it
(``t - L <= day < t``). For two assets with a close every day those are exactly ``bt`` and
``L`` closes, the reference's windows, on the fast path above. For a pair mixing calendars
(crypto x equity) each band holds the common closes inside its span, a number that varies
from day to day: one fixed-window pass per band length, each day reading its own
(``_ragged_bands``), still for every pair of the panel at once and with the same bits as the
reference's ``np.percentile`` of that day's band.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np

from pairscreen.contracts import BacktestBatch, Leg, PairPanel, Strategy, Trade, hookimpl
from pairscreen_plugins.strategies._rolling import rolling_percentiles

FEE = 0.001
ENTRY_LOW = 0.2
ENTRY_HIGH = 0.8
BAND_PCTS = (5.0, 95.0)
MIN_BAND_DAYS = 200
START_QTY = 100.0

_HOLD_START, _HOLD_OTHER = 1, 2
_BLOCK = 1024  # pairs simulated together: bounds the (pairs, days) temporaries
_BAND_BLOCK = 1024  # pairs per rolling-band pass: its sort buffers are the larger ones
# Up to this many band lengths (a mixed calendar has 2 to 4), one fixed-window pass per length.
_MAX_BAND_LENGTHS = 8


@dataclass(frozen=True)
class Plan:
    """How a panel's history is used, in calendar days: band window ``lookback``,
    ``simulated`` days, and whether buy-and-hold is reported (not for histories shorter than
    200 + bt)."""

    lookback: int
    simulated: int
    buy_hold: bool

    @property
    def span(self) -> int:
        return self.lookback + self.simulated


def plan(n_days: int, window_days: int, bt_days: int, min_band: int = MIN_BAND_DAYS) -> Plan:
    """The short-history rules of docs/methodology.md, for ``n_days`` calendar days of
    history (every argument in one unit: days, or bars for :func:`plan_of`)."""
    if n_days >= window_days + bt_days:
        return Plan(window_days, bt_days, True)
    if n_days - bt_days >= min_band:
        return Plan(n_days - bt_days, bt_days, True)
    return Plan(min_band, max(n_days - min_band, 0), False)


def plan_of(panel: PairPanel, bt_days: int) -> Plan:
    """:func:`plan` of ``panel``'s history, counted in its bars: the window, the backtest's
    ``bt_days`` and the shortest band are spans of time, ``days * bars per day`` bars (for
    daily closes, the days themselves). The shortest band of intraday bars is the window
    when that is under :data:`MIN_BAND_DAYS` (an hourly universe's 30 days): 200 days would
    leave a short history of bars no backtest at all."""
    bars = panel.bar.bars
    shortest = MIN_BAND_DAYS
    if panel.bar.intraday:
        shortest = min(MIN_BAND_DAYS, panel.window_days)
    return plan(history_of(panel), bars(panel.window_days), bars(bt_days), bars(shortest))


@dataclass(frozen=True)
class Columns:
    """Where a plan falls on a panel: the first simulated column and, per simulated column
    ``first + k``, the first column of its band (the band is ``lo[k] : first + k``)."""

    first: int
    lo: np.ndarray

    def uniform(self) -> int | None:
        """The band length when every band is that many closes right before its day (two
        assets with a close every day), else None."""
        if self.lo.size == 0:
            return None
        lengths = self.first + np.arange(self.lo.size) - self.lo
        length = int(lengths[0])
        return length if length > 0 and bool((lengths == length).all()) else None


def columns(panel: PairPanel, p: Plan) -> Columns:
    """The plan's spans (in bars, :func:`plan_of`) as column ranges of ``panel``."""
    offsets = panel.bar_offsets
    first = int(np.searchsorted(-offsets, -p.simulated, side="right"))
    lo = np.searchsorted(-offsets, -(offsets[first:] + p.lookback), side="left")
    return Columns(first, lo.astype(np.intp))


def history_of(panel: PairPanel) -> int:
    """Bars from the panel's first close to its last, both counted (its usable history;
    calendar days for daily closes)."""
    return int(panel.bar_offsets[0]) + 1 if panel.n_days else 0


def _bands(panel: PairPanel, p: Plan, cols: Columns, leg: Leg) -> tuple[np.ndarray, np.ndarray]:
    """p5/p95 of the band of every simulated day, for ``leg``.

    One pass computes both legs (the mirror leg reads the same sorted order); the other leg's
    bands wait on the panel until that leg runs, then leave the panel's cache (they are the
    largest thing the strategy holds). A leg run again simply recomputes.
    """
    key = f"accumulation_bands:{p.lookback}:{p.simulated}"
    pending: dict[Leg, tuple[np.ndarray, np.ndarray]] = panel.cached(key, dict)
    if leg not in pending:
        pending.update(_both_bands(panel, cols))
    bands = pending.pop(leg)
    if not pending:
        panel.forget(key)
    return bands


def _both_bands(panel: PairPanel, cols: Columns) -> dict[Leg, tuple[np.ndarray, np.ndarray]]:
    """The p5/p95 bands of both legs, :data:`_BAND_BLOCK` rows at a time."""
    length = cols.uniform()
    shape = (panel.n_pairs, cols.lo.size)
    both: dict[Leg, tuple[np.ndarray, np.ndarray]] = {
        side: (np.empty(shape), np.empty(shape)) for side in ("A", "B")
    }
    for start in range(0, panel.n_pairs, _BAND_BLOCK):
        rows = slice(start, start + _BAND_BLOCK)
        if length is not None:
            span = slice(int(cols.lo[0]), panel.n_days - 1)
            direct = panel.log_ratio[rows, span]
            mirror = _mirror_log_ratio(panel, span, rows)
            (lo_a, hi_a), mirrored = rolling_percentiles(direct, length, BAND_PCTS, mirror)
            assert mirrored is not None
            lo_b, hi_b = mirrored
        else:
            (lo_a, hi_a), (lo_b, hi_b) = _ragged_bands(panel, cols, rows)
        sides: tuple[tuple[Leg, Iterable[np.ndarray]], ...]  # (leg, (low, high) bands)
        sides = (("A", (lo_a, hi_a)), ("B", (lo_b, hi_b)))
        for side, (lo, hi) in sides:
            both[side][0][rows] = lo
            both[side][1][rows] = hi
    return both


def _ragged_bands(panel: PairPanel, cols: Columns, rows: slice) -> tuple[np.ndarray, np.ndarray]:
    """Both legs' p5/p95 when bands differ in length (a pair mixing calendars); NaN for a day
    whose band has no close.

    A band is always the closes right before its day (``lo[k] : first + k``), only its length
    varies (an exchange's calendar gives 540 calendar days 385 or 386 weekdays). So each
    distinct length runs the fixed-window pass on the whole span, and every day reads the
    pass of its own length: a few times the cost of two daily legs, exactly the same numbers.
    With many distinct lengths (an irregular history) the days are computed one at a time,
    still for every pair at once.
    """
    span = slice(int(cols.lo.min(initial=cols.first)), panel.n_days - 1)
    direct = panel.log_ratio[rows, span]
    mirror = _mirror_log_ratio(panel, span, rows)
    shape = (len(BAND_PCTS), direct.shape[0], cols.lo.size)
    out_a, out_b = np.full(shape, np.nan), np.full(shape, np.nan)
    days = np.arange(cols.lo.size)
    lengths = cols.first + days - cols.lo
    distinct = np.unique(lengths[lengths > 0])
    if distinct.size <= _MAX_BAND_LENGTHS:
        for length in distinct.tolist():
            on = np.flatnonzero(lengths == length)
            bands, mirrored = rolling_percentiles(direct, length, BAND_PCTS, mirror)
            assert mirrored is not None
            at = cols.lo[on] - span.start  # each day's window start in the pass
            out_a[:, :, on] = bands[:, :, at]
            out_b[:, :, on] = mirrored[:, :, at]
        return out_a, out_b
    for k, lo in enumerate(cols.lo.tolist()):
        band = slice(lo - span.start, cols.first + k - span.start)
        if band.stop > band.start:
            out_a[:, :, k] = np.percentile(direct[:, band], BAND_PCTS, axis=1)
            out_b[:, :, k] = np.percentile(mirror[:, band], BAND_PCTS, axis=1)
    return out_a, out_b


def _mirror_log_ratio(panel: PairPanel, columns: slice, rows: slice = slice(None)) -> np.ndarray:
    """``ln(B/A)`` on some days, as the flipped panel computes it (an elementwise expression,
    so the same on any slice; not ``-ln(A/B)``, which can differ in the last bit)."""
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, np.log(panel.close_b[rows, columns] / panel.close_a[rows, columns]))


def _hold_sequence(position: np.ndarray) -> np.ndarray:
    """Per pair (rows) and simulated day (columns), whether the start coin is held after
    that day's decision.

    Holding the start coin, a swap out happens at position >= 0.8; holding the other, a swap
    back at position <= 0.2.
    """
    return hold_sequence(position <= ENTRY_LOW, position >= ENTRY_HIGH)


def hold_sequence(back: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Whether the start coin is held after each day, given the days that ask for the start
    coin (``back``) and for the other one (``out``); the two never fire on the same day.

    The coin held after a day is the one the latest signal asked for (the start coin before
    any signal): a forward fill, done as a running maximum of ``day * 4 + signal``.
    """
    days = np.arange(back.shape[1], dtype=np.int32) * 4
    code = back * (days + _HOLD_START)
    code += out * (days + _HOLD_OTHER)
    latest = np.maximum.accumulate(code, axis=1)
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, (latest & 3) != _HOLD_OTHER)


def _coins_held(
    swaps: np.ndarray,
    hold_start: np.ndarray,
    own_per_other: np.ndarray,
    other_per_own: np.ndarray,
    fee: float = FEE,
    slippage: np.ndarray | None = None,
) -> np.ndarray:
    """Coins held after each day, per pair (start coin or other coin, whichever is held).

    A swap multiplies the coins by the day's rate, then by 1 - fee - slippage, in that order
    (the reference's), so the counts match it to the last bit (``1 - fee - 0.0`` is
    ``1 - fee`` exactly). The loop runs over the k-th swap of every pair at once, not over
    days.
    """
    n = swaps.shape[0]
    keep: float | np.ndarray = 1.0 - fee
    count = np.cumsum(swaps, axis=1, dtype=np.int32)  # swaps so far, per day
    n_swaps = count[:, -1]
    _, swap_days = np.nonzero(swaps)  # row-major: each pair's swaps in day order
    first = np.concatenate([[0], np.cumsum(n_swaps)[:-1]])
    after = np.empty((n, int(n_swaps.max(initial=0)) + 1))
    after[:, 0] = START_QTY
    qty = np.full(n, START_QTY)
    for k in range(after.shape[1] - 1):
        active = np.flatnonzero(n_swaps > k)
        day = swap_days[first[active] + k]
        rate = np.where(
            hold_start[active, day], other_per_own[active, day], own_per_other[active, day]
        )
        if slippage is not None:
            keep = (1.0 - fee) - slippage[active, day]
        qty[active] = qty[active] * rate * keep
        after[:, k + 1] = qty
    return np.take_along_axis(after, count, axis=1)


def once_per_panel(
    strategy: Strategy,
    run: Callable[[PairPanel, int, Leg, bool], BacktestBatch],
    panel: PairPanel,
    bt_days: int,
    start_leg: Leg,
    with_trades: bool,
) -> BacktestBatch:
    """``run``'s batch, computed once per panel for this strategy, fee, window, start leg and
    trade listing: the screen's metrics (the break-even fee) and its legs share it."""
    fee = getattr(strategy, "fee", None)
    key = f"backtest:{strategy.name}:{fee!r}:{bt_days}:{start_leg}:{with_trades}"
    return panel.cached(key, lambda: run(panel, bt_days, start_leg, with_trades))


@dataclass(frozen=True)
class AccumulationStrategy:
    """Walk-forward accumulation on p5/p95 bands with a 0.1 % fee per swap."""

    name: str = "accumulation"
    fee: float = FEE  # per swap; read by evaluations that price holding a leg

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        return once_per_panel(self, self._run, panel, bt_days, start_leg, with_trades)

    def _run(
        self, panel: PairPanel, bt_days: int, start_leg: Leg, with_trades: bool
    ) -> BacktestBatch:
        p = plan_of(panel, bt_days)
        cols = columns(panel, p)
        bands: tuple[np.ndarray, np.ndarray] | None = None

        def holds(rows: slice, decided_on: np.ndarray) -> np.ndarray:
            nonlocal bands
            if bands is None:
                bands = _bands(panel, p, cols, start_leg)  # (pair, simulated day), both at once
            low, high = bands[0][rows], bands[1][rows]
            width = high - low
            flat = width == 0
            position = np.where(flat, 0.5, (decided_on - low) / np.where(flat, 1.0, width))
            return _hold_sequence(position)

        return walk_forward(panel, p, cols, start_leg, holds, fee=self.fee, with_trades=with_trades)


HoldRule = Callable[[slice, np.ndarray], np.ndarray]


def walk_forward(
    panel: PairPanel,
    p: Plan,
    cols: Columns,
    start_leg: Leg,
    holds: HoldRule,
    *,
    fee: float,
    with_trades: bool = False,
    decide_at_close: bool = False,
) -> BacktestBatch:
    """Simulate every pair of the panel over the plan's days (the columns from
    ``cols.first``), starting in ``start_leg``.

    ``holds(rows, decided_on)`` says, for a block of rows and their decision values
    ``r[t-1]`` (in the leg's orientation), whether the start coin is held after each simulated
    day; it may read nothing after day ``t-1`` for day ``t``. Swaps execute at day-``t``
    closes at ``fee`` plus the panel's slippage of that day. With ``decide_at_close`` the
    decision values are ``r[t]`` and ``holds`` may read day ``t``'s closes too (a strategy
    that decides at the close it trades at).
    """
    n = panel.n_pairs
    # the simulated span in whole days (its bars over the bars of a day)
    history = np.full(n, p.simulated // panel.bar.per_day, dtype=np.int64)
    observations = np.full(n, cols.lo.size, dtype=np.int64)
    if cols.lo.size == 0:
        zeros = np.zeros(n)
        return BacktestBatch(
            start_leg=start_leg,
            history_days=history,
            growth_pct=zeros,
            n_trades=np.zeros(n, dtype=np.int64),
            max_drawdown_pct=zeros.copy(),
            buy_hold_growth_pct=np.full(n, np.nan),
            trades=tuple(() for _ in range(n)) if with_trades else None,
            observations=observations,
            breakeven_fee=np.full(n, np.nan),
            breakeven_swaps=np.zeros(n, dtype=np.int64),
            open_position_pct=np.full(n, np.nan),
            breakeven_min_swaps=MIN_CLOSED_SWAPS,
        )

    sim = slice(cols.first, panel.n_days)  # the simulated days t
    lag = 0 if decide_at_close else 1
    decided = slice(cols.first - lag, panel.n_days - lag)  # r[t-1] (r[t] at the close)
    if start_leg == "A":
        own, other, ratio = panel.close_a, panel.close_b, panel.log_ratio[:, decided]
    else:
        own, other = panel.close_b, panel.close_a
        ratio = _mirror_log_ratio(panel, decided)
    slippage = None if panel.slippage is None else panel.slippage[:, sim]

    growth = np.empty(n)
    drawdown = np.empty(n)
    n_trades = np.empty(n, dtype=np.int64)
    buy_hold = np.full(n, np.nan)
    breakeven = np.empty(n)
    closed = np.empty(n, dtype=np.int64)
    open_pct = np.empty(n)
    trades: list[tuple[Trade, ...]] = []
    for start in range(0, n, _BLOCK):
        rows = slice(start, start + _BLOCK)
        leg = _simulate(
            own[rows, sim],
            other[rows, sim],
            ratio[rows],
            holds(rows, ratio[rows]),
            fee,
            None if slippage is None else slippage[rows],
        )
        growth[rows], drawdown[rows], n_trades[rows] = leg.growth, leg.drawdown, leg.n_trades
        breakeven[rows] = leg.breakeven_fee
        closed[rows] = closed_swaps(leg.swaps, leg.hold_start).sum(axis=1)
        open_pct[rows] = leg.open_position_pct
        if p.buy_hold:
            buy_hold[rows] = leg.buy_hold
        if with_trades:
            trades += _trades(panel, rows, leg, sim.start, start_leg)
    return BacktestBatch(
        start_leg=start_leg,
        history_days=history,
        growth_pct=growth,
        n_trades=n_trades,
        max_drawdown_pct=drawdown,
        buy_hold_growth_pct=buy_hold,
        trades=tuple(trades) if with_trades else None,
        observations=observations,
        breakeven_fee=breakeven,
        breakeven_swaps=closed,
        open_position_pct=open_pct,
        breakeven_min_swaps=MIN_CLOSED_SWAPS,
    )


@dataclass(frozen=True)
class _Leg:
    """One block of pairs simulated: per-pair results and, for trades, the day arrays."""

    growth: np.ndarray
    drawdown: np.ndarray
    n_trades: np.ndarray
    buy_hold: np.ndarray
    breakeven_fee: np.ndarray
    open_position_pct: np.ndarray
    swaps: np.ndarray
    hold_start: np.ndarray
    decided_on: np.ndarray


def _simulate(
    own: np.ndarray,
    other: np.ndarray,
    decided_on: np.ndarray,
    hold_start: np.ndarray,
    fee: float,
    slippage: np.ndarray | None,
) -> _Leg:
    """Simulate pairs (rows) over the simulated days (columns) from the start coin ``own``."""
    swaps = np.empty_like(hold_start)
    swaps[:, 0] = ~hold_start[:, 0]
    np.not_equal(hold_start[:, 1:], hold_start[:, :-1], out=swaps[:, 1:])

    own_per_other = own / other  # a[t] / b[t]: start coin -> other coin
    other_per_own = other / own  # b[t] / a[t]: other coin -> start coin
    coins = _coins_held(swaps, hold_start, own_per_other, other_per_own, fee, slippage)
    value = coins * other_per_own  # marked to market in the start coin ...
    np.copyto(value, coins, where=hold_start)  # ... unless the start coin is held
    peak = np.maximum.accumulate(value, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        drawdown = np.subtract(peak, value)
        drawdown /= peak
    if not (peak > 0).all():  # the reference counts no drawdown from a non-positive peak
        drawdown[~(peak > 0)] = 0.0
    keep_first = 1.0 - fee if slippage is None else (1.0 - fee) - slippage[:, 0]
    held_other = START_QTY * own_per_other[:, 0] * keep_first
    return _Leg(
        growth=100.0 * (value[:, -1] / 100.0 - 1.0),
        drawdown=100.0 * drawdown.max(axis=1),
        n_trades=swaps.sum(axis=1),
        buy_hold=100.0 * (held_other * other_per_own[:, -1] / 100.0 - 1.0),
        breakeven_fee=breakeven_fee(swaps, hold_start, own_per_other, other_per_own, slippage),
        open_position_pct=open_position_pct(swaps, hold_start, own_per_other, other_per_own),
        swaps=swaps,
        hold_start=hold_start,
        decided_on=decided_on,
    )


MIN_CLOSED_SWAPS = 3  # fewer closed swaps than this give no break-even fee


def closed_swaps(swaps: np.ndarray, hold_start: np.ndarray) -> np.ndarray:
    """The swaps whose outcome is known: every swap up to the last one back into the start
    coin. A swap into the other coin after it is the open position, still marked to market."""
    home = swaps & hold_start  # the swaps back into the start coin
    days = np.arange(swaps.shape[1])
    last_home = np.where(home, days, -1).max(axis=1, initial=-1)
    closed: np.ndarray = swaps & (days <= last_home[:, None])
    return closed


def open_position_pct(
    swaps: np.ndarray,
    hold_start: np.ndarray,
    own_per_other: np.ndarray,
    other_per_own: np.ndarray,
) -> np.ndarray:
    """Per pair, how far the open position (the other coin, held since the last swap into
    it) is up in the start coin at the last close, in percent before fees; NaN when the leg
    ends in its start coin."""
    days = np.arange(swaps.shape[1])
    opened = np.where(swaps & ~hold_start, days, 0).max(axis=1, initial=0)
    rows = np.arange(swaps.shape[0])
    gross = own_per_other[rows, opened] * other_per_own[:, -1]
    return np.where(hold_start[:, -1], np.nan, 100.0 * (gross - 1.0))


def breakeven_fee(
    swaps: np.ndarray,
    hold_start: np.ndarray,
    own_per_other: np.ndarray,
    other_per_own: np.ndarray,
    slippage: np.ndarray | None,
) -> np.ndarray:
    """Per pair, the fee per swap at which its closed swaps (:func:`closed_swaps`) end at
    the start's value; NaN with fewer than :data:`MIN_CLOSED_SWAPS` of them.

    Only closed swaps count: an open position marked to market is a paper gain, and one or
    two swaps give a per-swap figure that says nothing about the next ones. The value after
    the last closed swap is ``100 G prod_k (1 - f - s_k)``, ``G`` the product of the swaps'
    rates, ``s_k`` the slippage of swap ``k``. Without slippage ``f = 1 - G^(-1/n)`` in
    closed form; with it, ``sum_k ln(1 - f - s_k) = -ln G`` is solved by Newton's method
    (the left side falls strictly and is concave in ``f``, so the steps from the closed form
    at the mean slippage converge). Negative when the swaps lose even without any fee.
    """
    swaps = closed_swaps(swaps, hold_start)
    n_swaps = swaps.sum(axis=1)
    rate = np.where(hold_start, other_per_own, own_per_other)
    log_gain = np.where(swaps, np.log(rate), 0.0).sum(axis=1)
    has = n_swaps >= MIN_CLOSED_SWAPS
    count = np.where(n_swaps > 0, n_swaps, 1)
    with np.errstate(over="ignore", invalid="ignore"):
        if slippage is None:
            fee = -np.expm1(-log_gain / count)
        else:
            slip = np.where(swaps, slippage, 0.0)
            fee = -np.expm1(-log_gain / count) - slip.sum(axis=1) / count
            active = has.copy()  # each pair stops on its own, so its bits are its own
            for _ in range(50):
                keep = np.where(swaps, 1.0 - fee[:, None] - slip, 1.0)
                h = np.log(keep).sum(axis=1) + log_gain
                dh = -np.where(swaps, 1.0 / keep, 0.0).sum(axis=1)
                step = h / np.where(has, dh, -1.0)
                fee = np.where(active, fee - step, fee)
                active &= ~(np.abs(step) <= 1e-16 * np.maximum(1.0, np.abs(fee)))
                if not active.any():
                    break
    return np.where(has, fee, np.nan)


def _trades(
    panel: PairPanel, rows: slice, leg: _Leg, first_day: int, start_leg: Leg
) -> list[tuple[Trade, ...]]:
    """Per pair of the block, its swaps as Trades."""
    other_leg: Leg = "B" if start_leg == "A" else "A"
    out: list[tuple[Trade, ...]] = []
    for i, row in enumerate(range(panel.n_pairs)[rows]):
        days = np.flatnonzero(leg.swaps[i])
        # the UTC day of each swap's bar (for daily closes, the close's day)
        dates = panel.dates[row, first_day + days].astype("datetime64[D]").tolist()
        out.append(
            tuple(
                Trade(
                    day_index=int(first_day + d),
                    day=day,
                    bought=start_leg if leg.hold_start[i, d] else other_leg,
                    log_ratio=float(leg.decided_on[i, d]),
                )
                for d, day in zip(days, dates, strict=True)
            )
        )
    return out


@hookimpl
def pairscreen_register_strategies() -> list[Strategy]:
    """The accumulation strategy."""
    return [AccumulationStrategy()]
