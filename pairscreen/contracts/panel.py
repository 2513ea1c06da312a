"""The panel every metric and strategy reads: aligned daily closes of many pairs, read-only.

A metric or a strategy receives a :class:`PairPanel` and reads its arrays, its calendar
windows and its derived log-ratios; what the engine does with panels (building them from the
calendar matrix, cutting rows, flipping a pair for its mirror leg, computing a leg once per
asset) lives in the engine (``pairscreen.engine.batch_panel``), not here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

import numpy as np

from pairscreen.contracts.bars import DAILY, BarSize

__all__ = ["CalendarWindow", "Leg", "PairPanel"]

Leg = Literal["A", "B"]
_T = TypeVar("_T")


@dataclass(frozen=True)
class CalendarWindow:
    """The observations of a panel that fall in one calendar span: columns ``start:stop``.

    The span is ``days`` calendar days ending ``before`` bars before each row's last close:
    a column belongs to it when its date ``d`` satisfies
    ``last - before - days < d <= last - before`` (counted in bars: ``days`` days are
    ``days * bars per day`` bars; for daily closes a bar is a day). For two assets with a
    close every day (every bar) that is exactly ``days`` columns (``days * bars per day``);
    for a pair mixing calendars (crypto x equity) it is the common closes inside the span,
    fewer. Every row of a panel shares its columns (see :attr:`PairPanel.bar_offsets`).
    """

    days: int
    before: int
    start: int
    stop: int

    @property
    def observations(self) -> int:
        """How many closes (columns) the span holds."""
        return self.stop - self.start

    @property
    def columns(self) -> slice:
        return slice(self.start, self.stop)


@dataclass(frozen=True, eq=False)
class PairPanel:
    """Aligned daily closes of many pairs: one row per pair, every row the same length.

    Rows are the inner join of the two legs' dates (a pair needs both legs on a day). The
    last column is "today" (the pair's last common close) for every row, and every row has
    its columns on the same calendar days counted back from its own last close
    (:attr:`day_offsets`), so a calendar span is the same columns in every row: metrics read
    their windows with :meth:`calendar_window` (or :attr:`window` and :attr:`band_history`)
    and stay dense arrays. The engine groups pairs so that no row is padded. Derived arrays
    are cached on the panel so that metrics sharing an input (the band percentiles, say)
    compute it once (:meth:`cached`).

    This is what a metric or a strategy reads; it changes nothing of the panel's data. The
    engine builds panels, cuts them into rows and flips them (``pairscreen.engine.
    batch_panel``); a plugin never needs to. A copy (``dataclasses.replace``) starts with
    empty caches.
    """

    a: tuple[str, ...]
    b: tuple[str, ...]
    dates: np.ndarray  # (pairs, days) datetime64[D]
    close_a: np.ndarray  # (pairs, days) float64
    close_b: np.ndarray  # (pairs, days) float64
    volume_a: np.ndarray  # (pairs, days) float64
    volume_b: np.ndarray  # (pairs, days) float64
    window_days: int = 540
    volume_days: int = 30
    # (pairs, days) float64: what a swap costs on each day on top of the strategy's fee
    # (slippage and impact, as a fraction of the amount swapped); None when nothing is set.
    slippage: np.ndarray | None = None
    # The size of the bars the closes are at: every span above is days of time, counted in
    # bars of this size (``window_days`` days of hourly closes are 24 times as many bars).
    bar: BarSize = DAILY
    # What the components computed from this panel (:meth:`cached`), and the panel's own
    # derived arrays (its log-ratios, calendar offsets and windows): never the data itself.
    _shared: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_pairs(self) -> int:
        return int(self.close_a.shape[0])

    @property
    def n_days(self) -> int:
        return int(self.close_a.shape[1])

    def _derive(self, key: str, compute: Callable[[], _T]) -> _T:
        """The panel's own derived value ``key``, computed once."""
        if key not in self._derived:
            self._derived[key] = compute()
        return cast(_T, self._derived[key])  # what compute() returned for this key

    @property
    def log_ratio(self) -> np.ndarray:
        """``ln(close_A / close_B)``, shape (pairs, days)."""
        return self._derive("log_ratio", self._whole_log_ratio)

    def _whole_log_ratio(self) -> np.ndarray:
        recent = self._derived.get("recent_log_ratio")
        if recent is None:
            # numpy types ufuncs on untyped-dtype arrays as Any
            return cast(np.ndarray, np.log(self.close_a / self.close_b))
        # The windows' log-ratios are taken already: only the older days are added, and the
        # windows become views of the whole array, so the panel holds one copy, not two.
        start, tail = recent
        whole = np.empty(self.close_a.shape)
        whole[:, start:] = tail
        whole[:, :start] = np.log(self.close_a[:, :start] / self.close_b[:, :start])
        self._derived["recent_log_ratio"] = (start, whole[:, start:])
        return whole

    @property
    def _recent_log_ratio(self) -> tuple[int, np.ndarray]:
        """The log-ratios from ``H``'s first column on, and that column: all the window metrics
        read. A screen's panel also holds its backtest's older days, which only the survivors
        need, so every pair's metrics take the logarithm of ~540 of its ~900 days only (the
        same floats: a logarithm is taken value by value)."""
        return self._derive("recent_log_ratio", self._recent_of)

    def _recent_of(self) -> tuple[int, np.ndarray]:
        start = min(self.band_window.start, self.metric_window.start)
        if "log_ratio" in self._derived:  # already taken whole: a view of it
            return start, self.log_ratio[:, start:]
        recent = np.log(self.close_a[:, start:] / self.close_b[:, start:])
        return start, cast(np.ndarray, recent)

    def _log_ratio_of(self, span: CalendarWindow) -> np.ndarray:
        start, recent = self._recent_log_ratio
        return recent[:, span.start - start : span.stop - start]

    @property
    def bar_offsets(self) -> np.ndarray:
        """Bars from each column to the row's last close, shape (days,), int64, decreasing to
        0; the same for every row (for daily closes, calendar days).

        Raises ``ValueError`` for a panel whose rows sit on different calendars (the engine
        splits such a panel before any metric or strategy sees it).
        """
        return self._derive("bar_offsets", self._bar_offsets)

    def _bar_offsets(self) -> np.ndarray:
        dates = np.asarray(self.dates, dtype=self.bar.dtype)
        if self.n_pairs == 0 or self.n_days == 0:
            return np.arange(self.n_days - 1, -1, -1, dtype=np.int64)
        first: np.ndarray = (dates[0, -1] - dates[0]).astype(np.int64)
        if dates.shape[0] > 1 and dates.strides[0] != 0:  # a broadcast row is one calendar
            offsets = (dates[:, -1:] - dates).astype(np.int64)
            if not (offsets == first).all():
                raise ValueError(
                    "the rows of this panel sit on different calendars; "
                    "split it with pairscreen's engine before computing on it"
                )
        return first

    @property
    def day_offsets(self) -> np.ndarray:
        """Time from each column to the row's last close in days, shape (days,), decreasing
        to 0; the same for every row. For daily closes whole calendar days (int64, the same
        array as :attr:`bar_offsets`); for intraday bars fractional days (float64: an hourly
        bar 3 hours before the last close is 0.125), so that a slope or a span read from
        them is per day whatever the bar."""
        if not self.bar.intraday:
            return self.bar_offsets
        return self._derive("day_offsets", lambda: self.bar_offsets / self.bar.per_day)

    def calendar_window(self, days: int, *, before: int = 0) -> CalendarWindow:
        """The columns of the ``days`` calendar days ending ``before`` bars before the last
        close (``before=0``: ending at it, the current bar included; for daily closes a bar
        is a day)."""
        rising = -self.bar_offsets  # increasing: -(bars back)
        span = self.bar.bars(days)
        start = int(np.searchsorted(rising, -(before + span), side="right"))
        stop = int(np.searchsorted(rising, -before, side="right"))
        return CalendarWindow(days, before, start, max(start, stop))

    def spacing(self, span: CalendarWindow) -> float:
        """Mean calendar days between consecutive observations of ``span`` (1.0 for a pair
        with a close every day, 1/24 for hourly bars without a gap); NaN with fewer than two
        observations."""
        if span.observations < 2:
            return float("nan")
        offsets = self.bar_offsets
        bars = float(offsets[span.start] - offsets[span.stop - 1]) / (span.observations - 1)
        return bars / self.bar.per_day if self.bar.intraday else bars

    @property
    def metric_window(self) -> CalendarWindow:
        """``W``'s span: the ``window_days`` calendar days ending at the last close."""
        return self._derive("metric_window", lambda: self.calendar_window(self.window_days))

    @property
    def band_window(self) -> CalendarWindow:
        """``H``'s span: the ``window_days`` calendar days ending one bar before the last
        close (the day before, for daily closes)."""
        return self._derive("band_window", lambda: self.calendar_window(self.window_days, before=1))

    @property
    def window(self) -> np.ndarray:
        """``W``: the log-ratios of the ``window_days`` calendar days ending at the last close,
        the current one included (the last ``window_days`` values for daily closes)."""
        return self._log_ratio_of(self.metric_window)

    @property
    def band_history(self) -> np.ndarray:
        """``H``: the log-ratios of the ``window_days`` calendar days before the last close."""
        return self._log_ratio_of(self.band_window)

    @property
    def r_current(self) -> np.ndarray:
        return self._recent_log_ratio[1][:, -1]

    @property
    def swap_slippage(self) -> np.ndarray:
        """``slippage``, or zeros (pairs, days) when the universe sets none."""
        if self.slippage is None:
            return np.zeros(self.close_a.shape)
        return self.slippage

    @property
    def has_full_window(self) -> np.ndarray:
        """True per row when the history reaches back to ``H``'s first day (``window_days``
        calendar days before the last close), so both spans are complete."""
        full = self.n_days > 0 and int(self.bar_offsets[0]) >= self.bar.bars(self.window_days)
        return np.full(self.n_pairs, full)

    def cached(self, key: str, compute: Callable[[], _T]) -> _T:
        """The value components computed under ``key`` on this panel, computing it once with
        ``compute()``: metrics sharing an input (the band percentiles, say) compute it once."""
        if key not in self._shared:
            self._shared[key] = compute()
        return cast(_T, self._shared[key])  # what compute() returned for this key

    def forget(self, key: str) -> None:
        """Drop what :meth:`cached` holds under ``key`` (a large value no component needs any
        more); nothing happens when it holds none."""
        self._shared.pop(key, None)

    def each_leg(
        self, compute: Callable[[np.ndarray], tuple[np.ndarray, ...]], columns: slice
    ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """``compute(close_a[:, columns])`` and ``compute(close_b[:, columns])``, each a tuple
        of arrays with one row per pair.

        ``compute`` must work row by row (a row's results depend on that row alone): a panel
        the engine built knows which rows hold the same asset (a screen's panel is a few
        assets against many, so about half its legs repeat) and computes each distinct
        asset's closes once, giving every row naming it the very same floats. Results may be
        read-only views shared between rows (a leg common to every row is broadcast).
        """
        close_a, close_b = self.close_a[:, columns], self.close_b[:, columns]
        # An engine-built panel's leg ids (``engine.batch_panel.BatchPanel``): data it
        # carries, read here, so that no call from a plugin climbs back into the engine.
        ids: tuple[np.ndarray, np.ndarray] | None = getattr(self, "leg_ids", None)
        if ids is None:
            return compute(close_a), compute(close_b)
        return _once_per_asset(compute, close_a, close_b, np.concatenate(ids))


def _once_per_asset(
    compute: Callable[[np.ndarray], tuple[np.ndarray, ...]],
    close_a: np.ndarray,
    close_b: np.ndarray,
    ids: np.ndarray,
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """:meth:`PairPanel.each_leg` with the legs' asset ids (A's rows, then B's)."""
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    n = close_a.shape[0]
    if first.size == ids.size:
        return compute(close_a), compute(close_b)
    # Each distinct asset's closes from the first row naming it, in the order of the ids.
    distinct = np.empty((first.size, close_a.shape[1]))
    in_a = first < n
    distinct[in_a] = close_a[first[in_a]]
    distinct[~in_a] = close_b[first[~in_a] - n]
    results = compute(distinct)

    def expand(rows: np.ndarray) -> tuple[np.ndarray, ...]:
        if rows.size and (rows == rows[0]).all():  # one asset: every row is the same
            return tuple(np.broadcast_to(r[rows[0]], (rows.size, *r.shape[1:])) for r in results)
        return tuple(r[rows] for r in results)

    return expand(inverse[:n]), expand(inverse[n:])
