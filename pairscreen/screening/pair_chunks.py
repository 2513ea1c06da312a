"""One chunk of the screen: a batch of pairs, as two index arrays, to what the screen keeps.

A worker aligns the chunk's pairs on the universe's calendar matrix, groups them by usable
history, runs each group's panel through the engine (metrics, filter, score, both legs) and
returns only what the screen publishes: the rejection counts, the newest and oldest data day,
and each survivor already serialised with its sort key. Nothing proportional to the number
of pairs outlives the chunk, so the whole screen runs in memory bounded by the chunk size.

Every pair's numbers depend on that pair alone (tests/test_chunk_independence.py), so any
chunking gives the same screen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np
import orjson

from pairscreen import clock
from pairscreen.contracts import Asset, BacktestBatch, DepeggedLeg, Filter
from pairscreen.engine.calendar import CandleMatrix
from pairscreen.engine.costs import leg_slippage
from pairscreen.engine.evaluate import leg_breakeven
from pairscreen.engine.filtering import FilterChoice, filter_code
from pairscreen.engine.guarantees import PASSES, SHORT_HISTORY, core_verdicts
from pairscreen.engine.panel_rows import PanelRows
from pairscreen.engine.screen_chunks import ChunkJob, ChunkResult, evaluate_chunk
from pairscreen.engine.screen_rules import QVALUE_FIELDS
from pairscreen.engine.windows import windows_of_rows
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screen_store.survivor_blobs import SurvivorCodec
from pairscreen.screen_store.verdicts import SHORT, VerdictLog, kinds
from pairscreen.universe import SwapCosts, pair_sector

# The code of the pairs the engine cannot evaluate at all (fewer common days than the
# settings' ``min_history_days``, or no candles); counted before the filter's own codes.
TOO_SHORT = SHORT_HISTORY

PairTask = tuple[np.ndarray, np.ndarray]  # (pairs,) row indices into the matrix: legs A and B


@dataclass(frozen=True, eq=False)
class ScreenSpec:
    """Everything a worker needs besides its plugins: plain data, inherited by a fork."""

    matrix: CandleMatrix
    assets: tuple[Asset, ...]  # per matrix row
    depegs: tuple[tuple[DepeggedLeg, ...], ...]  # per matrix row: its active depeg, if any
    screen_filter: FilterChoice
    strategy: str
    scorer: str
    bt_days: int
    window_days: int
    min_history_days: int
    costs: SwapCosts = field(default_factory=SwapCosts)  # the universe's ``[costs]``

    @property
    def max_days(self) -> int:
        """The calendar span a pair's panel covers: the band window before the backtest's."""
        return self.window_days + self.bt_days

    @property
    def any_depeg(self) -> bool:
        """Whether any asset is in an active depeg event."""
        return any(self.depegs)


class Survivor(NamedTuple):
    """A survivor of a chunk, as the screen keeps it until the screen-wide rules decide.

    Compressed, a survivor holds about a third of its 1.2 KB of JSON while the screen runs
    (200,000 survivors: 80 MB instead of 240). A named tuple, not a dataclass: survivors
    sort as tuples, by the fields in this order (worst score last, then the pair; ties in
    the first three never reach the others, since a pair appears once), at no cost per
    comparison, and a chunk's survivors pickle back from a worker as compactly as before.
    """

    neg_score: float  # -score: sorted ascending, the best survivor comes first
    a: str
    b: str
    packed: bytes  # the survivor's JSON object, packed by ``survivor_blobs``
    coint_pvalue: float  # the p-values the screen-wide q-values are computed from
    adf_pvalue: float
    last_day: int  # its last common close, in days since 1970-01-01
    last_close: int  # its last common close's time, epoch seconds (a bar's lag counts bars)

    def pvalue(self, name: str) -> float:
        """Its p-value of the q-value field ``name`` (one of ``QVALUE_FIELDS``)."""
        value: float = getattr(self, name)  # the fields are named as QVALUE_FIELDS
        return value


@dataclass
class PairsOutcome:
    """What the screen keeps of a chunk (or of the whole screen, once merged)."""

    pairs: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    # Sorted, the survivors give the published order (:class:`Survivor`).
    survivors: list[Survivor] = field(default_factory=list)
    # Pairs that reached the metrics, and per p-value field its value for each of them, one
    # float array per group: what the q-values are computed from once every chunk is in.
    tested: int = 0
    pvalues: dict[str, list[np.ndarray]] = field(
        default_factory=lambda: {name: [] for name in QVALUE_FIELDS}
    )
    newest: np.datetime64 | None = None
    oldest: np.datetime64 | None = None
    verdicts: VerdictLog = field(default_factory=VerdictLog)  # every pair's, compact

    def saw_days(self, days: np.ndarray) -> None:
        """Widen the data-time range by ``days`` (datetime64[D])."""
        if days.size == 0:
            return
        low, high = days.min(), days.max()
        self.newest = high if self.newest is None else max(self.newest, high)
        self.oldest = low if self.oldest is None else min(self.oldest, low)

    def merge(self, other: PairsOutcome) -> None:
        self.pairs += other.pairs
        self.rejected.update(other.rejected)
        self.survivors.extend(other.survivors)
        self.tested += other.tested
        for name, parts in other.pvalues.items():
            self.pvalues.setdefault(name, []).extend(parts)
        for day in (other.newest, other.oldest):
            if day is not None:
                self.saw_days(np.array([day]))
        self.verdicts.merge(other.verdicts)


@dataclass(frozen=True, eq=False)
class GroupJob:
    """One equal-history group of a chunk: its engine job and which pairs it holds."""

    job: ChunkJob
    ia: np.ndarray
    ib: np.ndarray
    last_day: np.ndarray  # (pairs,) datetime64[D]


def chunk_jobs(spec: ScreenSpec, task: PairTask) -> tuple[PairsOutcome, list[GroupJob]]:
    """Align a chunk's pairs; the too-short ones counted, the rest as one job per calendar
    (pairs whose windows are the same columns, see :meth:`CandleMatrix.spans`)."""
    ia, ib = task
    outcome = PairsOutcome(pairs=int(ia.shape[0]))
    common = spec.matrix.common(ia, ib)
    some = common.any(axis=1)
    outcome.verdicts.add_plain(ia[~some], ib[~some], SHORT, None, matrix=True)
    ia, ib, common = ia[some], ib[some], common[some]
    spans = spec.matrix.spans(common, spec.max_days)
    # the core's history guarantee (its stale and no-candles ones were decided before)
    unknown = np.zeros(ia.shape[0], dtype=bool)
    usable = core_verdicts(unknown, unknown, spans.history_days, spec.min_history_days) == PASSES
    outcome.verdicts.add_plain(
        ia[~usable],
        ib[~usable],
        SHORT,
        spans.history_days[~usable],
        matrix=True,
        last_day=spans.last_day[~usable],
    )
    short = int(outcome.pairs - usable.sum())
    if short:
        outcome.rejected[TOO_SHORT] += short
    if not usable.any():
        return outcome, []
    ia, ib = ia[usable], ib[usable]
    history, last_day = spans.history_days[usable], spans.last_day[usable]
    group, closes, keep = spans.group[usable], spans.closes[usable], spans.keep[usable]
    outcome.saw_days(last_day)
    groups: list[GroupJob] = []
    slippage = (  # each asset's, once for every group of the chunk
        np.zeros(len(spec.assets)) if spec.costs.is_zero else leg_slippage(spec.costs, spec.assets)
    )
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        ga, gb = ia[rows], ib[rows]
        days = int(closes[rows[0]])
        panel = PanelRows(
            spec.matrix,
            ga,
            gb,
            keep[rows],
            days,
            spec.window_days,
            spec.costs,
            slippage[ga],
            slippage[gb],
        )
        if spec.any_depeg:
            legs = tuple(spec.depegs[a] + spec.depegs[b] for a, b in zip(ga, gb, strict=True))
        else:  # the usual case, without a loop over the pairs
            legs = ((),) * rows.shape[0]
        job = ChunkJob(
            panel=panel,
            history_days=history[rows],
            depegged=np.array([bool(pair_legs) for pair_legs in legs], dtype=bool)
            if spec.any_depeg
            else np.zeros(rows.shape[0], dtype=bool),
            screen_filter=spec.screen_filter,
            strategy=spec.strategy,
            scorer=spec.scorer,
            bt_days=spec.bt_days,
            depegged_legs=legs,
        )
        groups.append(GroupJob(job, ga, gb, last_day[rows]))
    return outcome, groups


def add_result(
    spec: ScreenSpec,
    outcome: PairsOutcome,
    group: GroupJob,
    result: ChunkResult,
    screen_filter: Filter,
) -> None:
    """Count a group's rejections, record every pair's verdict and serialise its survivors
    into ``outcome``."""
    codes = [filter_code(r) for r in result.reasons]  # once, for the counts and the log
    outcome.rejected.update(code for code in codes if code)
    outcome.verdicts.add_judged(
        kinds(screen_filter, spec.screen_filter.thresholds),
        group.ia,
        group.ib,
        group.job.history_days,
        result.reasons,
        result.metrics.values,
        result.survivors,
        result.scores,
        codes,
        group.last_day,
    )
    n_pairs = len(result.reasons)
    outcome.tested += n_pairs
    pvalues = {}
    for name in QVALUE_FIELDS:
        values = result.metrics.values.get(name)  # absent when its metric failed
        column = np.full(n_pairs, np.nan) if values is None else np.asarray(values, dtype=float)
        outcome.pvalues.setdefault(name, []).append(column)
        pvalues[name] = column
    coint, adf = (pvalues[name] for name in QVALUE_FIELDS)
    kept = result.survivors
    if kept.size == 0:
        return
    # Column by column, then one dict per survivor: the same JSON as a survivor at a time.
    entries = np.arange(kept.size)
    metrics = result.metrics.rows(kept)
    if result.survivor_panel is None:
        raise ValueError("a chunk with survivors came back without their panel")
    windows = windows_of_rows(result.survivor_panel, entries, result.legs["A"], entries)
    leg_a, leg_b = result.legs["A"], result.legs["B"]
    history = np.asarray(leg_a.history_days).tolist()
    observations = np.asarray(leg_a.simulated_closes()).tolist()
    score_column = np.asarray(result.scores, dtype=float)
    refuse_non_finite(
        score=score_column,
        growth_pct=np.concatenate([leg_a.growth_pct, leg_b.growth_pct]),
        max_drawdown_pct=np.concatenate([leg_a.max_drawdown_pct, leg_b.max_drawdown_pct]),
    )
    scores = score_column.tolist()
    days = {day: day_iso(day) for day in np.unique(group.last_day[kept])}
    codec = SurvivorCodec()
    for j, i in enumerate(kept.tolist()):
        a = spec.assets[group.ia[i]]
        b = spec.assets[group.ib[i]]
        score = scores[j]
        survivor = {
            "sector": pair_sector(a, b),
            "pair": [a.ticker, b.ticker],
            "data_time": days[group.last_day[i]],
            "score": score,
            "metrics": metrics[j],
            "windows": windows[j],
            "backtest": {
                "history_days": int(history[j]),
                "observations": int(observations[j]),
                "A": screen_leg(leg_a, j, a.ticker),
                "B": screen_leg(leg_b, j, b.ticker),
            },
        }
        # orjson: the numbers json.dumps writes (each float's shortest round-trip digits),
        # about 25 times faster on a survivor's ~45 floats; only the spelling of floats
        # under 1e-4 (0.00001 for 1e-05) and of non-ASCII text (raw UTF-8) differs.
        packed = codec.pack(orjson.dumps(survivor))
        last = int(group.last_day[i].astype("datetime64[D]").astype(np.int64))
        close = int(group.last_day[i].astype("datetime64[s]").astype(np.int64))
        outcome.survivors.append(
            Survivor(
                -score, a.ticker, b.ticker, packed, float(coint[i]), float(adf[i]), last, close
            )
        )


def refuse_non_finite(**columns: np.ndarray) -> None:
    """Raise for a NaN or an infinity in a survivor's numeric columns, as ``json.dumps(...,
    allow_nan=False)`` did value by value: orjson would write it as null without a word."""
    for name, column in columns.items():
        if not np.isfinite(column).all():
            raise ValueError(f"a survivor's {name} is not a finite number; JSON has no NaN")


def pair_tasks(ra: np.ndarray, rb: np.ndarray, chunk_rows: int) -> Iterator[PairTask]:
    """The screen's pairs (legs ``ra`` and ``rb``, matrix rows) cut into chunks of
    ``chunk_rows`` pairs, lazily: each chunk is two views, nothing is copied."""
    for start in range(0, ra.shape[0], chunk_rows):
        yield ra[start : start + chunk_rows], rb[start : start + chunk_rows]


def evaluate_pairs(plugins: Plugins, spec: ScreenSpec, task: PairTask) -> PairsOutcome:
    """The work of a screen worker: one chunk of pairs through the engine."""
    outcome, groups = chunk_jobs(spec, task)
    screen_filter = plugins.filters.get(spec.screen_filter.name)
    for group in groups:
        add_result(spec, outcome, group, evaluate_chunk(plugins, group.job), screen_filter)
    return outcome


def day_iso(day: np.datetime64) -> str:
    """00:00 UTC of a ``datetime64`` day, written as every ``data_time`` is; a bar's close
    time (a finer unit than a day) is written whole."""
    if np.datetime_data(day.dtype)[0] == "D":
        moment = datetime.fromisoformat(str(day.astype("datetime64[D]")))
    else:
        moment = datetime.fromisoformat(str(day.astype("datetime64[s]")))
    return clock.iso(moment.replace(tzinfo=UTC))


def screen_leg(batch: BacktestBatch, j: int, base: str) -> dict[str, Any]:
    """Survivor ``j``'s leg, shaped like a snapshot's leg so the two compare field by field."""
    buy_hold = float(batch.buy_hold_growth_pct[j])
    return {
        "base_leg": base,
        "growth_pct": float(batch.growth_pct[j]),
        "n_trades": int(batch.n_trades[j]),
        "max_drawdown_pct": float(batch.max_drawdown_pct[j]),
        "buy_hold": None if np.isnan(buy_hold) else {"growth_pct": buy_hold},
        **leg_breakeven(batch, j),
    }
