"""Every screened pair's verdict, recorded while the screen runs, for ``/screen/latest/pairs``.

The screen keeps only its survivors; a rejected pair's reason would cost a live ``/pair``
(one quota unit) although the screen computed it. This module records, per pair, what it
takes to say the verdict again later in the same words, in compact arrays rather than text:

* a *kind* (uint8, an index into :func:`kinds`): a survivor, a reason the core gives
  (stale, no candles, too short a history), one rule of the screen filter, a screen-wide
  rule, or a reason kept as text (a depegged leg, a metric that failed);
* the pair's days of common history (uint16: a filter rule may read it from its context) and
  its last common close (int32 days since 1970-01-01, ``NO_DAY`` when the screen did not align
  the pair; on intraday bars int32 bars of the head's ``last_close_unit``), what its
  ``data_time`` and ``data_behind_days`` are said from;
* a few float64 values: a filter rule's own inputs (``hurst`` for the ``hurst`` rule), which
  the rule's ``explain`` turns into the same text the screen wrote; a survivor's score,
  position, zone and rank.

A rule's text is rendered again from its inputs, so a rule's ``explain`` must read only the
inputs it declares and its context (the :class:`~pairscreen.contracts.FilterRule` contract). Chunk
workers record matrix rows; :func:`finish` maps them onto the universe and orders them by
slot (:mod:`pairscreen.screen_store.verdict_store` stores them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pairscreen.contracts import Filter
from pairscreen.engine.filtering import rule_inputs
from pairscreen.engine.guarantees import CORE_CODES
from pairscreen.engine.screen_rules import SCREEN_RULES
from pairscreen.market.freshness import AssetFreshness

ZONES = ("bottom", "mid", "top")
SURVIVOR_VALUES = ("score", "position", "zone", "rank")  # a survivor's values, in order
MAX_HISTORY = np.iinfo(np.uint16).max
NO_DAY = np.iinfo(np.int32).min  # a pair the screen did not align: no last common close

# The kinds every screen has, by index (the filter's rules and the screen-wide rules follow).
NOT_SCREENED, SURVIVOR, STALE_PAIR, NO_CANDLES, SHORT, AS_TEXT = range(6)


@dataclass(frozen=True)
class Kind:
    """How a pair's verdict is stored and said again.

    ``how`` is ``survivor``, ``stale``, ``no_candles``, ``short``, ``text``, ``rule`` (the
    filter's rule number ``rule`` with ``fields`` as its values) or ``wide`` (screen-wide
    rule number ``rule``: the survivor's values and the rule's own value).
    """

    how: str
    code: str = ""
    rule: int = -1
    fields: tuple[str, ...] = ()

    @property
    def arity(self) -> int:
        """Values stored per pair of this kind."""
        if self.how in ("survivor", "wide"):
            return len(SURVIVOR_VALUES)
        return len(self.fields) if self.how == "rule" else 0

    def as_json(self) -> list[object]:
        return [self.how, self.code, self.rule, list(self.fields)]

    @classmethod
    def of_json(cls, item: Sequence[Any]) -> Kind:
        how, code, rule, fields = item
        return cls(str(how), str(code), int(rule), tuple(str(f) for f in fields))


def kinds(screen_filter: Filter, thresholds: Mapping[str, float]) -> tuple[Kind, ...]:
    """The kinds of a screen with this filter: fixed ones, then one per filter rule whose
    code no other rule (nor the core) shares, then one per screen-wide rule."""
    fixed = (
        Kind("none"),
        Kind("survivor"),
        Kind("stale", "stale"),
        Kind("no_candles", "insufficient_history"),
        Kind("short", "insufficient_history"),
        Kind("text"),
    )
    codes = [rule.code for rule in screen_filter.rules]
    own = tuple(
        Kind("rule", rule.code, k, rule_inputs(rule, thresholds))
        for k, rule in enumerate(screen_filter.rules)
        if codes.count(rule.code) == 1 and rule.code not in CORE_CODES
    )
    wide = tuple(Kind("wide", rule.code, k) for k, rule in enumerate(SCREEN_RULES))
    # a uint8 names a kind: the rules past that say their reasons as text
    return fixed + own[: 256 - len(fixed) - len(wide)] + wide


def arities(table: Sequence[Kind]) -> np.ndarray:
    return np.array([k.arity for k in table], dtype=np.int64)


@dataclass
class Part:
    """Pairs recorded together: legs as matrix rows (``matrix``) or universe indices."""

    matrix: bool
    a: np.ndarray
    b: np.ndarray
    kind: np.ndarray  # uint8
    history: np.ndarray  # uint16
    values: np.ndarray  # float64, each pair's arity in pair order
    texts: dict[int, str] = field(default_factory=dict)  # pair index in the part -> reason
    last_day: np.ndarray | None = None  # int32 days since 1970-01-01; None: not aligned

    def last_days(self) -> np.ndarray:
        """Each pair's last common close (int32 days since 1970-01-01, ``NO_DAY``: none)."""
        if self.last_day is None:
            return np.full(self.kind.size, NO_DAY, dtype=np.int32)
        return self.last_day


@dataclass
class VerdictLog:
    """What a chunk (or, merged, the whole screen) records; plain data, so it pickles."""

    parts: list[Part] = field(default_factory=list)
    # What the core's reasons name, known before any chunk: each stale leg's last close, age
    # and limit in days (on an intraday screen also its last bar's close time, epoch seconds,
    # and the bars closed since), and the tickers without candles.
    stale: dict[str, tuple[str | None, int | None, int, *tuple[int, ...]]] = field(
        default_factory=dict
    )
    no_candles: list[str] = field(default_factory=list)

    def merge(self, other: VerdictLog) -> None:
        self.parts.extend(other.parts)
        self.stale.update(other.stale)
        self.no_candles.extend(other.no_candles)

    def add_core(
        self,
        a: np.ndarray,
        b: np.ndarray,
        stale: np.ndarray,
        missing: np.ndarray,
        fresh: Iterable[AssetFreshness],
        with_candles: Sequence[int],
    ) -> None:
        """The pairs the core rejects before any chunk (universe indices): a stale leg, a leg
        without candles; with what their reasons name."""
        self.add_plain(a[stale], b[stale], STALE_PAIR, None, matrix=False)
        self.add_plain(a[missing], b[missing], NO_CANDLES, None, matrix=False)
        legs = list(fresh)
        self.stale = {
            f.ticker: (
                f.last_day.isoformat() if f.last_day else None,
                f.age_days,
                f.limit_days,
                *_bar_lag(f),
            )
            for f in legs
            if f.stale
        }
        kept = set(with_candles)
        self.no_candles = [f.ticker for k, f in enumerate(legs) if k not in kept]

    def add_plain(
        self,
        a: np.ndarray,
        b: np.ndarray,
        kind: int,
        history: np.ndarray | None,
        matrix: bool,
        last_day: np.ndarray | None = None,
    ) -> None:
        """Pairs of one value-less kind (stale, no candles, too short); ``last_day`` their
        last common close (datetime64[D]) when the screen aligned them."""
        if a.size == 0:
            return
        days = np.zeros(a.size) if history is None else history
        self.parts.append(
            Part(
                matrix,
                np.asarray(a, dtype=np.int32),
                np.asarray(b, dtype=np.int32),
                np.full(a.size, kind, dtype=np.uint8),
                _history(days),
                np.empty(0),
                last_day=None if last_day is None else _days(last_day),
            )
        )

    def add_judged(
        self,
        table: Sequence[Kind],
        a: np.ndarray,
        b: np.ndarray,
        history: np.ndarray,
        reasons: Sequence[str],
        values: Mapping[str, np.ndarray],
        survivors: np.ndarray,
        scores: np.ndarray,
        reason_codes: Sequence[str],
        last_day: np.ndarray,
    ) -> None:
        """A group the filter judged (matrix rows): each pair's reason as its kind and the
        values that say it again; a reason no rule can say again is kept as text.
        ``reason_codes`` are the reasons' codes (``filter_code``), computed once by the
        caller, which counts them too; ``last_day`` each pair's last common close
        (datetime64[D])."""
        n = len(reasons)
        by_code = {k.code: i for i, k in enumerate(table) if k.how == "rule"}
        kind = np.full(n, AS_TEXT, dtype=np.uint8)
        texts: dict[int, str] = {}
        codes = np.array(reason_codes, dtype=object)
        kind[codes == ""] = SURVIVOR
        for code in set(codes.tolist()) - {""}:
            rows = np.flatnonzero(codes == code)
            index = by_code.get(code)
            # A rule with every input at hand said the reason with ``explain``; one whose
            # input failed said "unavailable" itself: that text is kept as is.
            if index is not None and all(_numeric(values.get(f)) for f in table[index].fields):
                kind[rows] = index
            else:
                texts.update({int(r): reasons[int(r)] for r in rows})
        arity = arities(table)[kind]
        stream = np.full(int(arity.sum()), np.nan)
        start = np.concatenate([[0], np.cumsum(arity)[:-1]])
        for index in np.unique(kind):
            rows = np.flatnonzero(kind == index)
            if index == SURVIVOR:
                rows = np.asarray(survivors, dtype=np.int64)  # the order ``scores`` follows
                position = np.asarray(values["position"], dtype=float)[rows]
                zone = np.array([ZONES.index(str(z)) for z in np.asarray(values["zone"])[rows]])
                for k, column in enumerate((np.asarray(scores, dtype=float), position, zone)):
                    stream[start[rows] + k] = column
            elif table[index].how == "rule":
                for k, name in enumerate(table[index].fields):
                    stream[start[rows] + k] = np.asarray(values[name], dtype=float)[rows]
        self.parts.append(
            Part(
                True,
                np.asarray(a, dtype=np.int32),
                np.asarray(b, dtype=np.int32),
                kind,
                _history(history),
                stream,
                texts,
                _days(last_day),
            )
        )


def _days(closes: np.ndarray) -> np.ndarray:
    """Last closes as int32 counts of their own unit since 1970-01-01: days for daily closes
    (datetime64[D]), bars for intraday ones (datetime64[h] hours, [4h], [15m]), so an hourly
    pair's verdict keeps its last bar's close time (the head names the unit)."""
    closes = np.asarray(closes)
    if closes.dtype.kind != "M":
        closes = closes.astype("datetime64[D]")
    return closes.astype(np.int64).astype(np.int32)


def _history(days: np.ndarray) -> np.ndarray:
    clipped: np.ndarray = np.clip(np.asarray(days), 0, MAX_HISTORY).astype(np.uint16)
    return clipped


def _numeric(array: np.ndarray | None) -> bool:
    return array is not None and np.issubdtype(np.asarray(array).dtype, np.number)


@dataclass(frozen=True)
class Finished:
    """Every screened pair in universe order: legs, kind, history, last common close and
    values (stream)."""

    a: np.ndarray  # int64 universe indices, leg A as screened
    b: np.ndarray
    kind: np.ndarray
    history: np.ndarray
    last_day: np.ndarray  # int32 days since 1970-01-01, ``NO_DAY`` for a pair not aligned
    start: np.ndarray  # each pair's first value in ``values``
    values: np.ndarray
    texts: dict[int, str]  # pair index -> reason kept as text


def finish(
    log: VerdictLog,
    table: Sequence[Kind],
    matrix_rows: np.ndarray,
    survivors: Sequence[tuple[str, str]],
    wide: Sequence[tuple[str, str, str, float | None]],
    index: Mapping[str, int],
) -> Finished:
    """The whole screen's verdicts, survivors ranked and the screen-wide rejections marked.

    ``matrix_rows`` maps a matrix row to its universe index; ``survivors`` are the published
    survivors in rank order and ``wide`` the pairs a screen-wide rule rejected (legs, code,
    the rule's value), legs by ticker (``index`` maps a ticker to its universe index).
    """
    a, b, kind, history, last_day, values, start_parts = [], [], [], [], [], [], []
    texts: dict[int, str] = {}
    count, offset = 0, 0
    arity = arities(table)
    for part in log.parts:
        to_universe = matrix_rows if part.matrix else None
        a.append(part.a if to_universe is None else to_universe[part.a])
        b.append(part.b if to_universe is None else to_universe[part.b])
        kind.append(part.kind)
        history.append(part.history)
        last_day.append(part.last_days())
        values.append(part.values)
        sizes = arity[part.kind]
        start_parts.append(offset + np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64))
        texts.update({count + i: text for i, text in part.texts.items()})
        count += part.kind.size
        offset += part.values.size
    done = Finished(
        _join(a, np.int64),
        _join(b, np.int64),
        _join(kind, np.uint8),
        _join(history, np.uint16),
        _join(last_day, np.int32),
        _join(start_parts, np.int64),
        _join(values, np.float64),
        texts,
    )
    passed = np.flatnonzero(done.kind == SURVIVOR)
    where = {(int(done.a[p]), int(done.b[p])): int(p) for p in passed}
    last = len(SURVIVOR_VALUES) - 1
    for rank, (ta, tb) in enumerate(survivors, start=1):
        done.values[done.start[where[index[ta], index[tb]]] + last] = rank
    wide_kind = {k.code: i for i, k in enumerate(table) if k.how == "wide"}
    for ta, tb, code, value in wide:
        p = where[index[ta], index[tb]]
        done.kind[p] = wide_kind[code]
        done.values[done.start[p] + last] = np.nan if value is None else value
    return done


def _join(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype)


def _bar_lag(f: AssetFreshness) -> tuple[int, ...]:
    """An intraday stale leg's last bar's close time and bars behind; nothing for a day's."""
    if f.bar is None or f.last_close is None or f.bars_behind is None:
        return ()
    return (f.last_close, f.bars_behind)
