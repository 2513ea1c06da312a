"""The types that cross the plugin boundary.

Plugins receive and return only these: frozen dataclasses for data, Protocols for the
components a plugin contributes. Everything is batch-first: a metric or a strategy works on
a :class:`PairPanel` of many pairs at once, and a live ``/pair`` snapshot is a panel of one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast, get_args, runtime_checkable
from urllib.parse import urlsplit

import numpy as np

if TYPE_CHECKING:
    import argparse

    from pairscreen.config import Settings

# The plugin API: what ``pairscreen`` re-exports for plugin authors (everything else here
# is the framework's own).
__all__ = [
    "ASSET_CLASSES",
    "AddressError",
    "Asset",
    "BacktestBatch",
    "CalendarWindow",
    "Candles",
    "ChannelNotifier",
    "ChannelSpec",
    "ChartData",
    "ChartRenderer",
    "Command",
    "CommandSpec",
    "DeliveryError",
    "DepeggedLeg",
    "Filter",
    "FilterContext",
    "FilterRule",
    "IntradayMarketPrice",
    "Leg",
    "MarketSource",
    "Metric",
    "MetricField",
    "Notification",
    "Notifier",
    "PairPanel",
    "PegConfig",
    "PegEventChange",
    "PegSource",
    "PluginOption",
    "ReferenceQuote",
    "RowIssues",
    "Scorer",
    "Strategy",
    "Trade",
    "masked_address",
]

AssetClass = Literal[
    "crypto",
    "tokenized_equity",
    "tokenized_metal",
    "tokenized_treasury",
    "spot_metal",
    "equity",
    "etf",
    "index",
    "fx",
]
ASSET_CLASSES: tuple[str, ...] = get_args(AssetClass)
TOKENIZED_PREFIX = "tokenized_"  # only these classes claim a peg to something off-chain
Leg = Literal["A", "B"]
_T = TypeVar("_T")

# Default peg thresholds per asset class, in percent of drift (docs/api.md).
DEFAULT_PEG_THRESHOLD_PCT: Mapping[str, float] = {
    "tokenized_metal": 1.0,
    "tokenized_equity": 1.5,
    "tokenized_treasury": 0.5,
}


# ---------------------------------------------------------------------------
# Universe
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PegConfig:
    """How a tokenized asset's peg is checked: what it claims to track and where to look."""

    reference: str
    sources: tuple[str, ...]
    units_per_token: float = 1.0
    threshold_pct: float = 1.0


@dataclass(frozen=True)
class Asset:
    """One asset of the universe, as the universe file lists it."""

    ticker: str
    sector: str
    asset_class: str = "crypto"
    symbol: str = ""
    peg: PegConfig | None = None

    @property
    def is_tokenized(self) -> bool:
        """A token claiming a peg (``tokenized_*``); crypto, spot metals, equities, ETFs,
        indices and currencies have none."""
        return self.asset_class.startswith(TOKENIZED_PREFIX)

    @property
    def market_symbol(self) -> str:
        """The symbol the market-data source knows this asset by (the ticker by default)."""
        return self.symbol or self.ticker


ROW_EXAMPLES = 3  # rows not understood that RowIssues names one by one; the rest are counted


@dataclass(frozen=True)
class RowIssues:
    """Rows a market source read but could not use, counted per kind so that none is dropped
    without a word (``data sync`` names them per asset).

    ``unparseable``, ``conflicting`` and ``unreadable`` refuse the asset: a sync writes none
    of its rows, since a history with rows left out or chosen between is not the source's
    history. ``future`` and ``duplicate`` rows are harmless: left out or stored once, and
    named. A source that cannot say which rows it skipped leaves ``examples`` and ``origin``
    empty; its counts still decide.
    """

    future: int = 0  # dated after the last closed day asked for (not closed yet)
    duplicate: int = 0  # a day given again with the same values (stored once)
    unparseable: int = 0  # not understood: a bad date, close, volume or number of fields
    conflicting: int = 0  # a day given again with other values: which one is right is unknown
    unreadable: str = ""  # why nothing could be read (an empty file, its encoding, its header)
    examples: tuple[str, ...] = ()  # the first rows not understood, each with its line and why
    origin: str = ""  # where the rows came from, for a person (``BTC.csv``)

    def __add__(self, other: RowIssues) -> RowIssues:
        return RowIssues(
            self.future + other.future,
            self.duplicate + other.duplicate,
            self.unparseable + other.unparseable,
            self.conflicting + other.conflicting,
            self.unreadable or other.unreadable,
            (self.examples + other.examples)[:ROW_EXAMPLES],
            self.origin or other.origin,
        )

    def __bool__(self) -> bool:
        return bool(
            self.future or self.duplicate or self.unparseable or self.conflicting or self.unreadable
        )

    @property
    def refuses(self) -> bool:
        """Whether the asset's rows cannot be stored as a whole (nothing of it is written)."""
        return bool(self.unparseable or self.conflicting or self.unreadable)

    @property
    def not_understood(self) -> int:
        """Rows that refuse the asset: not understood, or a day given twice otherwise."""
        return self.unparseable + self.conflicting


@dataclass(frozen=True)
class Candles:
    """One asset's daily UTC history, oldest first.

    ``volume`` is the day's traded volume in the quote currency, so the volumes of two legs
    are comparable. It is NaN on a day the source reports no volume for (a CSV file without
    the column, an exchange that gives none): an unknown volume is never stored as 0, which
    would read as a market nobody trades.
    """

    ticker: str
    dates: np.ndarray  # datetime64[D], strictly increasing
    close: np.ndarray  # float64, > 0
    volume: np.ndarray  # float64, >= 0, or NaN where unknown
    # What the source skipped while reading these rows (a market source fills it in).
    issues: RowIssues = field(default_factory=RowIssues, compare=False)

    def __post_init__(self) -> None:
        n = len(self.dates)
        if len(self.close) != n or len(self.volume) != n:
            raise ValueError(f"{self.ticker}: dates, close and volume differ in length")


# ---------------------------------------------------------------------------
# The panel every metric and strategy works on
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CalendarWindow:
    """The observations of a panel that fall in one calendar span: columns ``start:stop``.

    The span is ``days`` calendar days ending ``before`` days before each row's last close:
    a column belongs to it when its date ``d`` satisfies
    ``last - before - days < d <= last - before``. For two assets with a close every day
    that is exactly ``days`` columns; for a pair mixing calendars (crypto x equity) it is the
    common closes inside the span, fewer than ``days``. Every row of a panel shares its
    columns (see :attr:`PairPanel.day_offsets`).
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
    compute it once.
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
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # (pairs, days) float64: what a swap costs on each day on top of the strategy's fee
    # (slippage and impact, as a fraction of the amount swapped); None when nothing is set.
    slippage: np.ndarray | None = None
    # (pairs,) int per leg (A, B): rows whose legs carry the same id hold the same asset's
    # closes and volumes, column for column (a screen's panel: the asset's row of its
    # calendar matrix); None when nothing says so. Lets :meth:`each_leg` compute per asset.
    leg_ids: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    @property
    def n_pairs(self) -> int:
        return int(self.close_a.shape[0])

    @property
    def n_days(self) -> int:
        return int(self.close_a.shape[1])

    @cached_property
    def log_ratio(self) -> np.ndarray:
        """``ln(close_A / close_B)``, shape (pairs, days)."""
        recent = self.__dict__.get("_recent_log_ratio")
        if recent is None:
            # numpy types ufuncs on untyped-dtype arrays as Any
            return cast(np.ndarray, np.log(self.close_a / self.close_b))
        # The windows' log-ratios are taken already: only the older days are added, and the
        # windows become views of the whole array, so the panel holds one copy, not two.
        start, tail = recent
        whole = np.empty(self.close_a.shape)
        whole[:, start:] = tail
        whole[:, :start] = np.log(self.close_a[:, :start] / self.close_b[:, :start])
        self.__dict__["_recent_log_ratio"] = (start, whole[:, start:])
        return whole

    @cached_property
    def _recent_log_ratio(self) -> tuple[int, np.ndarray]:
        """The log-ratios from ``H``'s first column on, and that column: all the window metrics
        read. A screen's panel also holds its backtest's older days, which only the survivors
        need, so every pair's metrics take the logarithm of ~540 of its ~900 days only (the
        same floats: a logarithm is taken value by value)."""
        start = min(self.band_window.start, self.metric_window.start)
        if "log_ratio" in self.__dict__:  # already taken whole: a view of it
            return start, self.log_ratio[:, start:]
        recent = np.log(self.close_a[:, start:] / self.close_b[:, start:])
        return start, cast(np.ndarray, recent)

    def _log_ratio_of(self, span: CalendarWindow) -> np.ndarray:
        start, recent = self._recent_log_ratio
        return recent[:, span.start - start : span.stop - start]

    @cached_property
    def day_offsets(self) -> np.ndarray:
        """Calendar days from each column to the row's last close, shape (days,), int64,
        decreasing to 0; the same for every row.

        Raises ``ValueError`` for a panel whose rows sit on different calendars (the engine
        splits such a panel before any metric or strategy sees it).
        """
        dates = np.asarray(self.dates, dtype="datetime64[D]")
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

    def calendar_window(self, days: int, *, before: int = 0) -> CalendarWindow:
        """The columns of the ``days`` calendar days ending ``before`` days before the last
        close (``before=0``: ending at it, today included)."""
        rising = -self.day_offsets  # increasing: -(days back)
        start = int(np.searchsorted(rising, -(before + days), side="right"))
        stop = int(np.searchsorted(rising, -before, side="right"))
        return CalendarWindow(days, before, start, max(start, stop))

    def spacing(self, span: CalendarWindow) -> float:
        """Mean calendar days between consecutive observations of ``span`` (1.0 for a pair
        with a close every day); NaN with fewer than two observations."""
        if span.observations < 2:
            return float("nan")
        offsets = self.day_offsets
        return float(offsets[span.start] - offsets[span.stop - 1]) / (span.observations - 1)

    @cached_property
    def metric_window(self) -> CalendarWindow:
        """``W``'s span: the ``window_days`` calendar days ending at the last close."""
        return self.calendar_window(self.window_days)

    @cached_property
    def band_window(self) -> CalendarWindow:
        """``H``'s span: the ``window_days`` calendar days before the last close."""
        return self.calendar_window(self.window_days, before=1)

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
        full = self.n_days > 0 and int(self.day_offsets[0]) >= self.window_days
        return np.full(self.n_pairs, full)

    def cached(self, key: str, compute: Callable[[], _T]) -> _T:
        """Return ``cache[key]``, computing it once with ``compute()``; shared by metrics."""
        if key not in self.cache:
            self.cache[key] = compute()
        return cast(_T, self.cache[key])  # what compute() returned for this key

    def each_leg(
        self, compute: Callable[[np.ndarray], tuple[np.ndarray, ...]], columns: slice
    ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """``compute(close_a[:, columns])`` and ``compute(close_b[:, columns])``, each a tuple
        of arrays with one row per pair, computed once per distinct asset of the panel.

        ``compute`` must work row by row (a row's results depend on that row alone), so each
        distinct asset's closes give every row naming it the very same floats. A screen's
        panel is a few assets against many (pairs ``(i, j)`` in order), so about half its
        legs repeat; where :attr:`leg_ids` is unknown every row is computed. Results may be
        read-only views shared between rows (a leg common to every row is broadcast).
        """
        close_a, close_b = self.close_a[:, columns], self.close_b[:, columns]
        if self.leg_ids is None:
            return compute(close_a), compute(close_b)
        ids = np.concatenate(self.leg_ids)
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        n = self.n_pairs
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
                return tuple(
                    np.broadcast_to(r[rows[0]], (rows.size, *r.shape[1:])) for r in results
                )
            return tuple(r[rows] for r in results)

        return expand(inverse[:n]), expand(inverse[n:])

    def flipped(self) -> PairPanel:
        """The same pairs in the other orientation (B/A), for the mirror backtest leg."""
        return replace(
            self,
            a=self.b,
            b=self.a,
            close_a=self.close_b,
            close_b=self.close_a,
            volume_a=self.volume_b,
            volume_b=self.volume_a,
            leg_ids=None if self.leg_ids is None else self.leg_ids[::-1],
            cache={},
        )

    def rows(self, index: np.ndarray | Sequence[int] | slice) -> PairPanel:
        """A panel of the selected rows (a chunk of the screen), with a cache of its own; a
        ``slice`` selects them as views, without a copy."""
        idx = index if isinstance(index, slice) else np.asarray(index, dtype=np.intp)
        return replace(
            self,
            a=self.a[idx] if isinstance(idx, slice) else tuple(self.a[i] for i in idx),
            b=self.b[idx] if isinstance(idx, slice) else tuple(self.b[i] for i in idx),
            dates=self.dates[idx],
            close_a=self.close_a[idx],
            close_b=self.close_b[idx],
            volume_a=self.volume_a[idx],
            volume_b=self.volume_b[idx],
            slippage=None if self.slippage is None else self.slippage[idx],
            leg_ids=None if self.leg_ids is None else (self.leg_ids[0][idx], self.leg_ids[1][idx]),
            cache={},
        )

    def last_days(self, days: int) -> PairPanel:
        """The panel cut to its last ``days`` columns."""
        days = min(days, self.n_days)
        return replace(
            self,
            dates=self.dates[:, -days:],
            close_a=self.close_a[:, -days:],
            close_b=self.close_b[:, -days:],
            volume_a=self.volume_a[:, -days:],
            volume_b=self.volume_b[:, -days:],
            slippage=None if self.slippage is None else self.slippage[:, -days:],
            cache={},
        )


# ---------------------------------------------------------------------------
# Metrics, strategies, score
# ---------------------------------------------------------------------------

FieldType = Literal["number", "integer", "string"]


@dataclass(frozen=True)
class MetricField:
    """One field a metric adds to ``metrics`` in the screen and the snapshot.

    ``nullable`` fields may come back as NaN (number) and are served as ``null``.
    ``needs_full_window`` fields mean something only over a whole band window: the engine
    serves them as ``null`` for a pair with less than ``window_days + 1`` days of history,
    whatever the metric returned, so the metric need not check the history length itself.
    """

    name: str
    type: FieldType = "number"
    description: str = ""
    nullable: bool = False
    needs_full_window: bool = False


OptionValue = (
    bool | int | float | str | tuple[str, ...] | Mapping[str, Any] | tuple[Mapping[str, Any], ...]
)


@dataclass(frozen=True)
class PluginOption:
    """One setting a plugin takes from its own ``[plugins.<name>]`` table of the universe file.

    ``default`` gives the type too: a boolean, integer, number or string; a list of strings
    (a tuple or list default); a table (a dict default); a list of tables (a list default
    with ``fields``). A value of another type is refused at start-up (a whole number is
    accepted where the default is a float). ``fields`` declare a table's keys, checked and
    completed with their defaults like the plugin's own (a table without ``fields`` is
    passed as written). ``secret`` hides the value wherever options are shown; ``env`` names
    the environment variable that overrides the table (a scalar or a list of strings,
    comma-separated). The plugin's register hooks get the values, defaults filled in, as
    ``options``.
    """

    name: str
    default: OptionValue
    description: str = ""
    secret: bool = False
    env: str | None = None
    fields: tuple[PluginOption, ...] | None = None

    @property
    def type_name(self) -> str:
        if isinstance(self.default, Mapping):
            return "table"
        if isinstance(self.default, (list, tuple)):
            return "list of tables" if self.fields is not None else "list of strings"
        return {bool: "boolean", int: "integer", float: "number", str: "string"}[type(self.default)]


@runtime_checkable
class Metric(Protocol):
    """A statistic of the log-ratio computed for every pair of a panel at once."""

    @property
    def name(self) -> str: ...

    @property
    def fields(self) -> tuple[MetricField, ...]: ...

    def compute(self, panel: PairPanel) -> Mapping[str, np.ndarray]:
        """Return one array of shape ``(panel.n_pairs,)`` per field in ``fields``."""
        ...


@dataclass(frozen=True)
class Trade:
    """One swap of a backtest: the row index in the panel's days and the coin bought."""

    day_index: int
    day: date
    bought: Leg  # "A" when the strategy swapped into A, "B" when into B
    log_ratio: float  # the decision value r_{t-1} (r_t for a strategy deciding at the close)


@dataclass(frozen=True)
class BacktestBatch:
    """One backtest leg for every pair of a panel.

    ``buy_hold_growth_pct`` is NaN where buy-and-hold is not reported (short histories).
    ``trades`` is filled only when asked for (charts); the screen does not need it.
    ``history_days`` counts calendar days; ``observations`` the closes inside them (equal for
    two assets with a close every day, fewer for a pair mixing calendars).
    """

    start_leg: Leg
    history_days: np.ndarray  # int, calendar days actually simulated
    growth_pct: np.ndarray
    n_trades: np.ndarray  # int
    max_drawdown_pct: np.ndarray
    buy_hold_growth_pct: np.ndarray
    trades: tuple[tuple[Trade, ...], ...] | None = None
    # int, the closes simulated (the panel's last ones); None from a strategy that does not
    # say, which then is read as one close per simulated day
    observations: np.ndarray | None = None
    # The fee per swap (a fraction) at which the closed swaps (up to the last swap back into
    # the start coin) end where the leg started; NaN with fewer than 3 closed swaps, None
    # when the strategy does not compute it.
    breakeven_fee: np.ndarray | None = None
    # int, the closed swaps breakeven_fee counts; None when the strategy does not say
    breakeven_swaps: np.ndarray | None = None
    # The open position's move in the start coin at the last close, percent before fees;
    # NaN when the leg ends in its start coin, None when the strategy does not say
    open_position_pct: np.ndarray | None = None

    def simulated_closes(self) -> np.ndarray:
        """The number of closes simulated per pair (``observations``, else ``history_days``)."""
        return self.history_days if self.observations is None else self.observations


@runtime_checkable
class Strategy(Protocol):
    """A backtest strategy run walk-forward on every pair of a panel."""

    @property
    def name(self) -> str: ...

    def run(
        self, panel: PairPanel, *, bt_days: int, start_leg: Leg, with_trades: bool = False
    ) -> BacktestBatch:
        """Simulate the last ``bt_days`` days starting fully in ``start_leg``."""
        ...


@runtime_checkable
class Scorer(Protocol):
    """Ranks surviving pairs: higher is better, 0-100."""

    @property
    def name(self) -> str: ...

    def score(self, metrics: Mapping[str, np.ndarray]) -> np.ndarray:
        """Score every pair from its metric arrays (all the panel's fields, by name)."""
        ...


# ---------------------------------------------------------------------------
# Filters: what decides a survivor
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DepeggedLeg:
    """A leg in an active depeg event, so a reason can name the asset and the event's start.

    ``since`` is the event's first unhealthy peg sample (None when the caller does not know it).
    """

    ticker: str
    since: datetime | None = None


@dataclass(frozen=True)
class FilterContext:
    """What a filter rule sees besides the metrics, one entry per pair of the batch.

    ``thresholds`` are the filter's own :attr:`Filter.thresholds` with the universe file's
    ``[screen]`` values applied, so a rule reads its limits here and never from a constant.
    ``depegged_legs`` names, per pair, the legs behind ``depegged`` so that a rejection can
    say which asset depegged and since when; it is empty when the caller does not know them
    (a rule then falls back to ``depegged`` alone). Plain data, so a chunk job carrying it
    pickles to a worker.
    """

    history_days: np.ndarray  # (pairs,) int: every day of common history of the pair
    depegged: np.ndarray  # (pairs,) bool: a leg is in an active depeg event
    thresholds: Mapping[str, float]
    depegged_legs: tuple[tuple[DepeggedLeg, ...], ...] = ()  # (pairs,) or () when unknown


@runtime_checkable
class FilterRule(Protocol):
    """One check of a filter, vectorised over the pairs of a batch.

    The engine runs a filter's rules in order on the pairs no earlier rule rejected. A rule
    whose ``inputs`` are not all available (their metric failed on this batch) rejects those
    pairs itself, with a reason that names the missing fields and the failed metric, so
    ``check`` and ``explain`` always find every input they declare.

    A rule that is off at some thresholds may also define ``inputs_for(thresholds)``: the
    fields it reads with those thresholds (none while off). The screen computes on every pair
    only the fields the core or some rule reads; the other metrics run on the survivors.
    """

    @property
    def code(self) -> str:
        """The reason code, the part of a reason before ``": "`` (``hurst``, ``adf`` ...)."""
        ...

    @property
    def inputs(self) -> tuple[str, ...]:
        """The metric fields the rule reads (empty for a rule on the context only)."""
        ...

    def check(self, metrics: Mapping[str, np.ndarray], context: FilterContext) -> np.ndarray:
        """True for every pair that passes, shape ``(pairs,)``."""
        ...

    def explain(self, metrics: Mapping[str, np.ndarray], context: FilterContext, i: int) -> str:
        """Why pair ``i`` failed, with its values: the text after ``"<code>: "``."""
        ...


@runtime_checkable
class Filter(Protocol):
    """Decides which pairs of the screen survive: an ordered list of rules and their limits.

    A pair's ``filter_reason`` is ``""`` when every rule passes, else ``"<code>: <text>"`` of
    the first rule that fails. ``thresholds`` are the defaults of every limit the rules read
    from :attr:`FilterContext.thresholds`; the universe file's ``[screen]`` table may set any
    of them (and only them), and ``/screen/latest`` shows the values used.
    """

    @property
    def name(self) -> str: ...

    @property
    def thresholds(self) -> Mapping[str, float]: ...

    @property
    def rules(self) -> Sequence[FilterRule]: ...


# ---------------------------------------------------------------------------
# Market data
# ---------------------------------------------------------------------------


@runtime_checkable
class MarketSource(Protocol):
    """Where daily candles come from (the demo generator, CSV files, an exchange)."""

    @property
    def name(self) -> str: ...

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        """Yield candles per asset for the days after ``since[ticker]`` up to ``until``.

        ``options`` are the keys given in the source plugin's ``[plugins.<name>]`` table when
        the plugin declares its options, else the universe's ``[market]`` table (paths
        relative to the universe file are already resolved). An asset the source does not
        know is skipped with a logged warning, never an exception that stops the other assets.
        """
        ...


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChartData:
    """Everything a renderer needs to draw one pair, computed by the engine."""

    a: str
    b: str
    bt_days: int
    dates: np.ndarray  # datetime64[D], the drawn days (band window + backtest window)
    log_ratio: np.ndarray
    bands: Mapping[str, np.ndarray]  # "p5", "p15", "p85", "p95": rolling bands, NaN before
    current: float
    position: float
    zone: str
    backtest_start_index: int  # index into dates of the first simulated day
    trades: Mapping[str, tuple[Trade, ...]]  # "A" and "B" legs; day_index into dates
    data_time: datetime  # the close of the last candle drawn
    note: str = ""  # shown when set, one line per "\n": a depegged leg, synthetic data
    # "low", "high": the backtest's swap levels in log-ratio, NaN before the backtest window
    triggers: Mapping[str, np.ndarray] = field(default_factory=dict)
    # "entry", "exit": today's optimal OU levels (Bertram) in log-ratio, when the metrics give
    # them (the ``ou_entry`` / ``ou_exit`` fields); absent when the pair has no OU fit
    ou_levels: Mapping[str, float] = field(default_factory=dict)
    # "spread", "upper", "lower", "exit": a strategy's own decision line and its levels per
    # drawn day, for a panel under the ratio (the ``kalman_band`` strategy's Kalman spread and
    # its ±entry·√Q levels), NaN where undefined; empty for a strategy that draws none
    spread_lines: Mapping[str, np.ndarray] = field(default_factory=dict)


@runtime_checkable
class ChartRenderer(Protocol):
    """Draws a pair chart as PNG bytes. Must be thread-safe (no global plotting state)."""

    @property
    def name(self) -> str: ...

    def render(self, chart: ChartData, *, width_px: int, height_px: int) -> bytes: ...


# ---------------------------------------------------------------------------
# Peg reference sources
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceQuote:
    """A reference price and the time the source says it is from."""

    source: str
    reference: str
    price: float
    as_of: datetime


@runtime_checkable
class PegSource(Protocol):
    """An independent price for what a tokenized asset claims to track (XAU, AAPL, a NAV)."""

    @property
    def name(self) -> str: ...

    @property
    def max_age(self) -> timedelta:
        """An answer older than this (at the sampling time) does not count."""
        ...

    def reference_price(
        self, reference: str, at: datetime, options: Mapping[str, Any]
    ) -> ReferenceQuote | None:
        """Return the latest quote at or before ``at``, or None when the source has none."""
        ...


@runtime_checkable
class IntradayMarketPrice(Protocol):
    """An optional capability of a peg source: the token's own market price at any time.

    A market whose candles are daily knows a token's price only at each day's close; a peg
    check at a given hour needs the price at that hour. The peg source named like the
    universe's market source may offer it (the demo's does); the sampler uses it when the
    source satisfies this Protocol and falls back to the last daily close otherwise.
    """

    def market_price(self, asset: Asset, at: datetime, options: Mapping[str, Any]) -> float | None:
        """The token's price at ``at``, or None when the source has none."""
        ...


# ---------------------------------------------------------------------------
# Notifications
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Notification:
    """One message to deliver, as stored in the outbox.

    ``idempotency_key`` is stable across retries so a receiver can drop duplicates.
    """

    id: int
    idempotency_key: str
    channel: str  # "email", "telegram", "webhook"
    address: str  # e-mail address, chat id, or URL
    subject: str
    text: str
    html: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)


class DeliveryError(Exception):
    """A delivery failed; ``retry_after`` (seconds) when the receiver said when to retry."""

    def __init__(self, message: str, *, retry_after: float | None = None, permanent: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.permanent = permanent


@runtime_checkable
class Notifier(Protocol):
    """Delivers outbox notifications of one channel kind."""

    @property
    def name(self) -> str:
        """The channel kind it delivers: ``email``, ``telegram``, ``webhook``."""
        ...

    def deliver(self, notification: Notification) -> None:
        """Send it, or raise :class:`DeliveryError`."""
        ...


SecretPart = Literal["none", "url_path", "all"]
SECRET_PARTS: tuple[str, ...] = get_args(SecretPart)


@dataclass(frozen=True)
class ChannelSpec:
    """What a user sees of a channel kind, declared by the notifier that delivers it.

    The framework offers the kind wherever users choose channels (``PUT /me/channels/{kind}``,
    ``GET /me/channels/kinds``, ``pairscreen channels set --kind``, the website) and hides the
    address's ``secret`` part itself, so no plugin can leak one by mistake: ``none`` shows the
    address whole, ``url_path`` shows a URL by its scheme and host (``https://ntfy.sh/…``),
    ``all`` shows nothing of it but its last four characters. ``self_service`` false keeps the
    address the operator's (``pairscreen channels set``): a user may only turn it on or off.
    """

    label: str  # how people call it: "Telegram", "Slack"
    address_hint: str  # what an address looks like, for forms and errors
    secret: SecretPart = "none"
    self_service: bool = True


class AddressError(ValueError):
    """An address a channel kind refuses; the message says what a valid one looks like and
    never repeats a secret part whole (see :func:`masked_address`)."""


def masked_address(address: str, secret: str) -> str:
    """``address`` as shown outside the operator's CLI, its ``secret`` part hidden."""
    if secret == "none":
        return address
    if secret == "url_path":
        parts = urlsplit(address)
        return f"{parts.scheme}://{parts.hostname or ''}/…"
    return f"…{address[-4:]}" if len(address) >= 16 else "…"


@runtime_checkable
class ChannelNotifier(Notifier, Protocol):
    """A notifier users can choose: its ``name`` is a channel kind with an address per user.

    A notifier without these two members still delivers what the outbox hands it (a kind the
    operator or a plugin queues itself), but is not offered to users.
    """

    @property
    def channel(self) -> ChannelSpec:
        """How the kind is shown and who may set its address."""
        ...

    def check_address(self, address: str) -> str:
        """The address cleaned up (surrounding blanks are already gone), or
        :class:`AddressError` saying what a valid one looks like."""
        ...


# ---------------------------------------------------------------------------
# Command-line commands
# ---------------------------------------------------------------------------


@runtime_checkable
class Command(Protocol):
    """A command a plugin adds to ``pairscreen``, in a group of its own: ``pairscreen <group>
    <name>``, listed by ``pairscreen --help`` and ``pairscreen <group> --help``.

    ``add_arguments`` adds the command's arguments to its parser (the global options are
    added for it); ``run`` gets the parsed arguments and the settings and returns the exit
    status (None: 0). Anything it raises ends the command with one line naming the plugin and
    a non-zero status. :class:`CommandSpec` builds one from two functions.
    """

    @property
    def group(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def help(self) -> str: ...

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, settings: Settings) -> int | None: ...


@dataclass(frozen=True)
class CommandSpec:
    """A :class:`Command` made of functions: ``action`` runs it, ``arguments`` (optional)
    adds its arguments."""

    group: str
    name: str
    help: str
    action: Callable[[argparse.Namespace, Settings], int | None]
    arguments: Callable[[argparse.ArgumentParser], None] | None = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        if self.arguments is not None:
            self.arguments(parser)

    def run(self, args: argparse.Namespace, settings: Settings) -> int | None:
        return self.action(args, settings)


@dataclass(frozen=True)
class PegEventChange:
    """A depeg event that opened or closed, passed to ``pairscreen_peg_event_changed``."""

    ticker: str
    asset_class: str
    change: Literal["opened", "closed"]
    first_unhealthy: datetime
    last_unhealthy: datetime
    median_drift_pct: float
    sample_count: int
    reference_source: str
    # Why a closed event ended: "recovered" (a healthy sample) or "stale" (its token or
    # reference price was no longer observed within the asset class's staleness limit:
    # nobody knows whether it recovered); "" for an opened event.
    ended: Literal["", "recovered", "stale"] = ""
    end_reason: str = ""  # the stale end's sentence ("PAXG: reference XAU last observed ...")
