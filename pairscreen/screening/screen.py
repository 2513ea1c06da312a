"""The screen: every pair of the universe through metrics, filter, score and both backtests,
then published (:mod:`pairscreen.screen_store.publish`) in one transaction so that a crash
mid-screen leaves the previous screen served."""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Candles
from pairscreen.contracts.bars import BarSize
from pairscreen.db.models import survivor_keys
from pairscreen.engine.calendar import CandleMatrix
from pairscreen.engine.executors import stream_local
from pairscreen.engine.fdr import QValues
from pairscreen.engine.filtering import FilterChoice, filter_codes
from pairscreen.engine.guarantees import CORE_CODES, NO_CANDLES, STALE_LEG, core_verdicts
from pairscreen.engine.screen_chunks import DECIDE_ROWS
from pairscreen.engine.screen_rules import (
    PERSISTENCE,
    QVALUE_FIELDS,
    SCREEN_RULES,
    screen_rule_reason,
)
from pairscreen.market.cutoff import bars_until, candles_until
from pairscreen.market.freshness import STALE, candle_freshness, day_of
from pairscreen.pegs.status import active_depegs
from pairscreen.progress import Progress
from pairscreen.runtime import Runtime
from pairscreen.screen_store.data_lag import bar_lag, data_lag
from pairscreen.screen_store.payload_parts import PayloadParts, survivor_entry
from pairscreen.screen_store.persistence import (
    PastScreen,
    candidate_sets,
    spaced_screens,
    survived_count,
)
from pairscreen.screen_store.publish import ComputedScreen, ScreenSummary
from pairscreen.screen_store.verdict_store import VerdictSetup, encode_screen
from pairscreen.screen_views.staleness import ScreenFacts, judge_at
from pairscreen.screening.pair_chunks import (
    TOO_SHORT,
    PairsOutcome,
    PairTask,
    ScreenSpec,
    Survivor,
    day_iso,
    evaluate_pairs,
    pair_tasks,
)
from pairscreen.screening.screen_candles import bar_day, screen_candles
from pairscreen.screening.spans import ScreenSpans, screen_spans

log = logging.getLogger(__name__)

SCREEN_BT_DAYS = 360  # a daily universe's own backtest (``spans.DAILY_BACKTEST_DAYS``' longest)
EXECUTORS = ("local", "dask")
CHUNK_PAIRS = 4000  # pairs a worker takes at a time at most: bounds each worker's memory
TASKS_PER_WORKER = 4  # a small screen is cut finer, so that every worker has work to the end


def run_screen(
    rt: Runtime,
    *,
    at: datetime | None = None,
    processes: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress | None = None,
) -> ScreenSummary:
    """Compute the whole screen and publish it atomically
    (:meth:`~pairscreen.screen_store.store.ScreenStore.publish`).

    ``on_progress(done, total)`` is called as chunks of pairs finish (a command line draws
    it); old screens beyond the ``screens_kept`` setting go in the same transaction.
    """
    computed = screen_text(
        rt,
        at or clock.now(),
        processes=processes,
        executor=executor,
        scheduler=scheduler,
        on_progress=on_progress,
    )
    return rt.screens.publish(rt.settings, computed)


def data_source_label(rt: Runtime) -> str:
    label = rt.universe.label or "market data"
    return f"{label} (source: {rt.universe.market_source})"


def compute_screen(
    rt: Runtime,
    generated_at: datetime,
    *,
    processes: int | None = None,
    chunk_rows: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress | None = None,
    as_of: date | datetime | None = None,
) -> dict[str, Any]:
    """The screen payload (the ``/screen/latest`` body) without publishing it.

    ``executor`` is ``local`` (``processes`` forked workers) or ``dask`` (the cluster at
    ``scheduler``); both give the same payload, whatever ``chunk_rows`` (pairs per chunk).
    ``as_of`` screens only the candles dated that day or earlier, with the depeg events
    active at ``generated_at`` (a point-in-time screen).
    """
    computed = screen_text(
        rt,
        generated_at,
        processes=processes,
        chunk_rows=chunk_rows,
        executor=executor,
        scheduler=scheduler,
        on_progress=on_progress,
        as_of=as_of,
    )
    payload: dict[str, Any] = json.loads(computed.text)
    return payload


def screen_text(
    rt: Runtime,
    generated_at: datetime,
    *,
    processes: int | None = None,
    chunk_rows: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    on_progress: Progress | None = None,
    as_of: date | datetime | None = None,
) -> ComputedScreen:
    """Stream every screened pair through the engine, chunk by chunk, keeping only the
    counts and the survivors (serialised), and write the payload's JSON text.

    In four steps: the pairs left to evaluate (:func:`_plan`), their chunks run and merged
    (:func:`_run_chunks`), the screen-wide rules with the q-values of every tested pair
    (:func:`_screen_wide`), then the payload and the verdicts to store with it."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if chunk_rows is not None and chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    outcome = PairsOutcome()
    plan = _plan(rt, generated_at, as_of, outcome)
    progress = _Progress(plan.total - int(plan.ra.shape[0]), plan.total, on_progress)
    progress.report()
    if chunk_rows is None:
        workers = processes or rt.settings.screen_processes or os.cpu_count() or 1
        chunk_rows = chunk_size(int(plan.ra.shape[0]), workers)
    tasks = pair_tasks(plan.ra, plan.rb, chunk_rows)
    chunks = _run_chunks(rt, plan.spec, tasks, processes, executor, scheduler)
    for part in chunks:
        outcome.merge(part)
        progress.advance(part.pairs)
    qvalues = _qvalues(outcome)
    previous = spaced_screens(generated_at, rt.settings.persistence_screens, bar=plan.spans.bar)
    lag = _Lag.of(outcome.newest, plan.spans.bar)
    decided = _screen_wide(rt.screen_filter, outcome, qvalues, candidate_sets(previous), lag)
    head, tail = _fields(
        rt, plan.spans, generated_at, plan.total, outcome, qvalues, previous, len(decided.kept)
    )
    payload = PayloadParts.write(head, decided.kept, tail)
    # encoded only for a screen that is published (not a point-in-time one, not a replay)
    verdicts = functools.partial(
        encode_screen,
        _verdict_setup(rt),
        outcome.verdicts,
        plan.spec.matrix.tickers,
        decided.keys,
        decided.wide,
        {**head, **tail},
    )
    del outcome
    return ComputedScreen(
        generated_at,
        payload,
        plan.total,
        len(decided.kept),
        tail["rejected"],
        tail["data_source"],
        survivor_keys(decided.keys),
        survivor_keys(decided.candidates),
        verdicts,
        plan.spans.bar,
    )


@dataclass(frozen=True)
class _Plan:
    """The pairs a screen evaluates: what every chunk shares, and their legs as matrix rows."""

    spec: ScreenSpec
    ra: np.ndarray
    rb: np.ndarray
    total: int  # every screened pair, those decided before any chunk (stale, no candles) too
    spans: ScreenSpans


def _plan(
    rt: Runtime, generated_at: datetime, as_of: date | datetime | None, outcome: PairsOutcome
) -> _Plan:
    """The candles (up to ``as_of`` for a point-in-time screen: a day, or for an intraday
    universe a bar's close time), the pairs decided before any
    chunk counted into ``outcome``, and the spec the chunks share, with the depeg events
    active at ``generated_at``."""
    settings = rt.settings
    spans = screen_spans(rt.universe, settings)
    candles = screen_candles(rt, spans.bar)
    if isinstance(as_of, datetime):  # an intraday universe as of a bar's close
        candles = bars_until(candles, as_of)
    elif as_of is not None:
        candles = candles_until(candles, as_of)
    matrix, assets, ra, rb, total = _screened_rows(rt, spans, candles, generated_at, outcome)
    active = active_depegs(generated_at if as_of is not None else None)
    spec = ScreenSpec(
        matrix=matrix,
        assets=assets,
        depegs=tuple((active[t],) if t in active else () for t in matrix.tickers),
        screen_filter=rt.screen_filter,
        strategy=settings.strategy,
        scorer=settings.scorer,
        bt_days=spans.screen_bt_days,
        window_days=spans.window_days,
        min_history_days=spans.min_history_days,
        costs=rt.universe.costs,
    )
    return _Plan(spec, ra, rb, total, spans)


@dataclass
class _Progress:
    """Pairs done out of the screen's, told to ``on_progress`` (a command line draws it)."""

    done: int
    total: int
    on_progress: Progress | None

    def report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.done, self.total)

    def advance(self, pairs: int) -> None:
        self.done += pairs
        self.report()


def _run_chunks(
    rt: Runtime,
    spec: ScreenSpec,
    tasks: Iterator[PairTask],
    processes: int | None,
    executor: str = "local",
    scheduler: str | None = None,
) -> Iterator[PairsOutcome]:
    """Each chunk's outcome as it finishes, on the chosen executor."""
    if executor == "dask":
        return _on_dask(rt, spec, tasks, scheduler or "")
    work = functools.partial(evaluate_pairs, rt.plugins, spec)
    preload_compute_modules()
    return stream_local(work, tasks, processes or rt.settings.screen_processes)


def _qvalues(outcome: PairsOutcome) -> dict[str, QValues]:
    """Per p-value field, the Benjamini-Hochberg q-values over every tested pair's p-value;
    the p-values themselves are dropped (a big screen's are tens of MB)."""
    qvalues = {
        name: QValues.of(np.concatenate(parts) if parts else np.empty(0))
        for name, parts in outcome.pvalues.items()
    }
    outcome.pvalues.clear()
    return qvalues


@dataclass
class _Decided:
    """The survivors after the screen-wide rules, in the published order."""

    kept: list[tuple[bytes, str]] = field(default_factory=list)  # each still compressed
    keys: list[tuple[str, str]] = field(default_factory=list)
    wide: list[tuple[str, str, str, float | None]] = field(default_factory=list)  # rejections
    candidates: list[tuple[str, str]] = field(default_factory=list)  # persistence counts these


@dataclass(frozen=True)
class _Lag:
    """The screen's newest close, which each survivor's data lag is counted to: its UTC day
    (calendar days, any bar) and, on an intraday screen, its close time and the bar."""

    newest: date | None
    newest_close: int | None = None
    bar_seconds: int | None = None

    @classmethod
    def of(cls, newest: np.datetime64 | None, bar: BarSize) -> _Lag:
        if newest is None:
            return cls(None)
        day = day_of(newest)
        if not bar.intraday:
            return cls(day)
        return cls(day, int(newest.astype("datetime64[s]").astype(np.int64)), bar.seconds)

    def of_survivor(self, survivor: Survivor) -> dict[str, bool | int | None]:
        last = day_of(np.datetime64(survivor.last_day, "D"))
        if self.bar_seconds is None:
            return data_lag(last, self.newest)
        return bar_lag(last, self.newest, survivor.last_close, self.newest_close, self.bar_seconds)


def _screen_wide(
    choice: FilterChoice,
    outcome: PairsOutcome,
    qvalues: Mapping[str, QValues],
    counted: list[frozenset[str]],
    lag: _Lag,
) -> _Decided:
    """The screen-wide rules, decided here with the whole screen known: each survivor's
    q-values, persistence and data lag, its rejection counted into ``outcome``. Survivors
    stay compressed until publishing writes them (:mod:`pairscreen.screen_store.payload_parts`)."""
    survivors = outcome.survivors
    survivors.sort(reverse=True)  # worst first: popping from the end gives the published order
    coint_q, adf_q = (
        qvalues[name].lookup(np.array([s.pvalue(name) for s in survivors], dtype=float))
        for name in QVALUE_FIELDS
    )
    decided = _Decided()
    while survivors:
        k = len(survivors) - 1
        survivor = survivors.pop()
        a, b = survivor.a, survivor.b
        extra = {
            "coint_qvalue": _number_or_none(coint_q[k]),
            "adf_qvalue": _number_or_none(adf_q[k]),
            "survived_last": survived_count(a, b, counted),
            **lag.of_survivor(survivor),
        }
        if not screen_rule_reason(choice.screen_wide, extra, skip=PERSISTENCE):
            decided.candidates.append((a, b))
        reason = screen_rule_reason(choice.screen_wide, extra)
        if reason:
            outcome.rejected[reason] += 1
            decided.wide.append((a, b, reason, extra[_rule_field(reason)]))
            continue
        decided.kept.append(survivor_entry(survivor.packed, extra))
        decided.keys.append((a, b))
    return decided


def _fields(
    rt: Runtime,
    spans: ScreenSpans,
    generated_at: datetime,
    total: int,
    outcome: PairsOutcome,
    qvalues: Mapping[str, QValues],
    previous: Sequence[PastScreen],
    n_survivors: int,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The payload's fields before its survivors and after them, once the screen-wide rules
    have counted their rejections."""
    choice = rt.screen_filter
    newest = bar_day(outcome.newest, spans.bar) if outcome.newest is not None else None
    intraday = spans.bar.intraday and outcome.newest is not None
    facts = ScreenFacts(  # stale pairs are all counted by now: no later rule rejects as stale
        total,
        outcome.rejected.get(STALE, 0),
        newest,
        stored=None,
        last_close=_close_time(outcome.newest) if intraday else None,
        bar=spans.bar.name if intraday else None,
        bar_seconds=spans.bar.seconds if intraday else None,
    )
    codes = dict.fromkeys(
        (
            STALE,
            TOO_SHORT,
            *CORE_CODES,
            *filter_codes(rt.plugins.filters.get(choice.name)),
            *(rule.code for rule in SCREEN_RULES),
        )
    )
    head = {
        **judge_at(rt.universe, facts, generated_at).fields(),
        "generated_at": clock.iso(generated_at),
        "n_pairs_screened": total,
        "pairs_tested": outcome.tested,
        "n_survivors": n_survivors,
    }
    tail = {
        "data_source": data_source_label(rt),
        "rejected": {code: outcome.rejected.get(code, 0) for code in codes},
        "data_time": data_time_range(outcome),
        "filter": choice.as_json(),
        "screen_rules": dict(choice.screen_wide),
        "backtest_days": spans.screen_bt_days,
        "qvalue_tests": {name: qvalues[name].tests for name in QVALUE_FIELDS},
        "persistence_screens": [clock.iso(p.generated_at) for p in previous],
    }
    if spans.bar.intraday:  # a daily screen's payload stays what it was, byte for byte
        tail.update(bar_fields(spans))
    return head, tail


def _close_time(close: np.datetime64 | None) -> datetime | None:
    """A bar's close time (datetime64 at the bar's unit) as an aware UTC datetime."""
    if close is None:
        return None
    return datetime.fromisoformat(str(close.astype("datetime64[s]"))).replace(tzinfo=UTC)


def bar_fields(spans: ScreenSpans) -> dict[str, Any]:
    """What an intraday screen states beside its daily fields: its bar, its window and
    the backtest windows the universe declares (all spans in days)."""
    return {
        "bar": spans.bar.name,
        "bar_seconds": spans.bar.seconds,
        "window_days": spans.window_days,
        "min_history_days": spans.min_history_days,
        "backtest_windows": list(spans.backtest_days),
    }


def _verdict_setup(rt: Runtime) -> VerdictSetup:
    choice = rt.screen_filter
    return VerdictSetup(
        choice,
        rt.plugins.filters.get(choice.name),
        tuple(a.ticker for a in rt.universe.assets),
        rt.settings.min_history_days,
    )


def _rule_field(code: str) -> str:
    return next(rule.field for rule in SCREEN_RULES if rule.code == code)


def preload_compute_modules() -> None:
    """Import, once in this process, what every screen worker's first metrics import (the
    normal CDF of the ADF and variance-ratio p-values): forked workers inherit it instead of
    each paying about 0.25 s for it. Only a screen about to compute calls this, so start-up
    stays light."""
    import scipy.special  # noqa: F401  (imported for its side effect: loaded once, shared)


def chunk_size(pairs: int, workers: int) -> int:
    """Pairs per task: :data:`CHUNK_PAIRS`, or fewer when that would leave a worker idle
    (about :data:`TASKS_PER_WORKER` tasks each), never under ``DECIDE_ROWS``. Any size gives
    the same screen; bigger tasks give the survivors' backtests more rows at once."""
    return max(DECIDE_ROWS, min(CHUNK_PAIRS, -(-pairs // (workers * TASKS_PER_WORKER))))


def _number_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _screened_rows(
    rt: Runtime,
    spans: ScreenSpans,
    candles: Mapping[str, Candles],
    generated_at: datetime,
    outcome: PairsOutcome,
) -> tuple[CandleMatrix, tuple[Asset, ...], np.ndarray, np.ndarray, int]:
    """The calendar matrix of the assets with candles, those assets (its rows), and the legs
    of every pair left to evaluate as matrix rows; the number of screened pairs.

    Pairs with a stale leg (decided first, before any filter: an old price is never
    evaluated) and pairs with a leg without candles are counted into ``outcome`` here, over
    index arrays, and never reach a worker.
    """
    universe = rt.universe
    ia, ib = universe.screened_pair_indices()
    fresh = candle_freshness(universe, candles, spans.bar, generated_at)
    stale = np.array([fresh[a.ticker].stale for a in universe.assets], dtype=bool)
    with_candles = [
        i
        for i, a in enumerate(universe.assets)
        if a.ticker in candles and candles[a.ticker].dates.size
    ]
    row_of = np.full(len(universe.assets), -1, dtype=np.intp)
    row_of[with_candles] = np.arange(len(with_candles))
    assets = tuple(universe.assets[i] for i in with_candles)
    matrix = CandleMatrix.of(candles, [a.ticker for a in assets], spans.bar)
    last_day = np.array([candles[a.ticker].dates[-1] for a in assets], dtype=spans.bar.dtype)
    ra, rb = row_of[ia], row_of[ib]
    # the core's first two guarantees; the history one is decided once a chunk aligns
    verdict = core_verdicts(stale[ia] | stale[ib], (ra < 0) | (rb < 0), None, 0)
    stale_pair = verdict == STALE_LEG
    outcome.rejected[STALE] += int(stale_pair.sum())
    both = stale_pair & (ra >= 0) & (rb >= 0)
    outcome.saw_days(np.minimum(last_day[ra[both]], last_day[rb[both]]))
    missing = verdict == NO_CANDLES
    outcome.verdicts.add_core(ia, ib, stale_pair, missing, fresh.values(), with_candles)
    outcome.rejected[TOO_SHORT] += int(missing.sum())
    screened = ~stale_pair & ~missing
    return matrix, assets, ra[screened], rb[screened], int(ia.shape[0])


def _on_dask(
    rt: Runtime,
    spec: ScreenSpec,
    tasks: Iterable[PairTask],
    scheduler: str,
) -> Iterator[PairsOutcome]:
    """The chunks on a Dask cluster: the spec (with the candles) sent once to each worker,
    then each chunk as its two index arrays, the same work as a local worker's."""
    from pairscreen.engine.dask_executor import stream_dask

    return stream_dask(evaluate_pairs, spec, tasks, scheduler, plugins=rt.plugins)


def data_time_range(outcome: PairsOutcome) -> dict[str, str] | None:
    """The newest and oldest last common close of the screened pairs with data (00:00 UTC
    of the day for daily candles, the bar's close time for intraday bars)."""
    if outcome.newest is None or outcome.oldest is None:
        return None
    return {"newest": day_iso(outcome.newest), "oldest": day_iso(outcome.oldest)}


def latest_screen_json(rt: Runtime) -> str:
    """The latest published screen as stored (JSON text); NotFound before the first one."""
    return rt.screens.latest().payload
