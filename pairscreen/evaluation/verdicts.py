"""Every pair's filter verdict and zone at a past day under each rule set, from one metric
pass.

This replays the screen's own first stage (``pairscreen.screening.screen.compute_screen``) on
the candles known at the close of the day: a stale leg, a missing leg or too short a history
first, then the metrics once per panel and each rule set's filter over the same metric
arrays. As in the screen (``engine.screen_chunks``), only the metrics that decide some rule
set's verdict (a field its filter reads, the core's fields, the p-values behind q-values) run
on every tested pair; the ones that only describe a pair run on the pairs that pass some
rule set's filter, which is all that the evaluation reads of them. The pairs that reach the
metrics are the day's tested pairs, and their p-values are kept: the screen-wide rules
(``evaluation.screen_wide``) decide on them afterwards, as the screen does once every chunk
is in. Pairs are aligned once over all candles; a day's view is a prefix of each aligned pair
(the common days of two cut histories are the cut common days).

On an intraday universe the as-of point is a bar's close (an aware UTC datetime) and the
replay is ``screen run --as-of`` at that close: the bars closed by then, each asset's
freshness from the bars closed since its last one (as the live screen judges it), the
windows and the screen's backtest as the universe's spans of time (``screening.spans``) in
bars.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

from pairscreen.contracts import Asset, Candles, DepeggedLeg, FilterContext
from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.engine.batch_panel import select_rows
from pairscreen.engine.evaluate import compute_metrics
from pairscreen.engine.filtering import filter_reasons
from pairscreen.engine.guarantees import reaches_metrics
from pairscreen.engine.panels import AlignedPair, align, group_by_history, history_days
from pairscreen.engine.required_fields import ZONE
from pairscreen.engine.screen_chunks import split_metrics_for
from pairscreen.engine.screen_rules import QVALUE_FIELDS
from pairscreen.evaluation.dates import close_at, stamp
from pairscreen.evaluation.rule_sets import RuleSet
from pairscreen.market.cutoff import candles_until, closes_until
from pairscreen.market.freshness import candle_freshness
from pairscreen.market.pair_verdicts import pair_verdicts
from pairscreen.pegs.status import depegged_legs
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screening.screen import SCREEN_BT_DAYS
from pairscreen.universe import Universe

SAMPLE_SEED = 20260102
# The model figure the calibration table groups by; kept per surviving pair at every as-of
# day (survivors of any rule set: the table reads the screen's survivors only).
MODEL_RETURN = "ou_expected_return_per_year"
DepegsAt = Callable[[datetime], Mapping[str, DepeggedLeg]]


@dataclass(frozen=True)
class Market:
    """What an evaluation reads: the universe's pairs, aligned once, and the screen's
    settings (band window, minimum history)."""

    universe: Universe
    candles: Mapping[str, Candles]
    pairs: tuple[tuple[Asset, Asset], ...]
    aligned: tuple[AlignedPair | None, ...]  # None: a leg has no candles
    window_days: int
    min_history_days: int
    pairs_in_universe: int = 0  # every screened pair, when ``pairs`` is a sample of them
    scorer: str | None = None  # the scorer plugin that ranks each day's pairs (portfolios)
    bar: BarSize = DAILY  # intraday: ``candles`` are bars, as-of points bar closes
    bt_days: int = SCREEN_BT_DAYS  # the screen's own backtest, days

    @classmethod
    def of(
        cls,
        universe: Universe,
        candles: Mapping[str, Candles],
        *,
        window_days: int,
        min_history_days: int,
        sample: int | None = None,
        seed: int = SAMPLE_SEED,
        scorer: str | None = None,
        bar: BarSize = DAILY,
        bt_days: int = SCREEN_BT_DAYS,
    ) -> Market:
        """The universe's screened pairs, or a random ``sample`` of them (drawn with a fixed
        seed, so a refresh on the same universe evaluates the same pairs); ``candles`` at
        ``bar``, the screen's own backtest ``bt_days`` long."""
        ia, ib = universe.screened_pair_indices()
        total = int(ia.size)
        if sample is not None and sample < total:
            chosen = np.sort(np.random.default_rng(seed).choice(total, sample, replace=False))
            ia, ib = ia[chosen], ib[chosen]
        assets = universe.assets
        pairs = tuple((assets[i], assets[j]) for i, j in zip(ia.tolist(), ib.tolist(), strict=True))
        aligned = tuple(
            align(candles[a.ticker], candles[b.ticker], bar)
            if a.ticker in candles and b.ticker in candles
            else None
            for a, b in pairs
        )
        return cls(
            universe,
            candles,
            pairs,
            aligned,
            window_days,
            min_history_days,
            total,
            scorer,
            bar,
            bt_days,
        )


@dataclass(frozen=True)
class DateVerdicts:
    """One as-of day: per pair (in ``Market.pairs`` order) its zone, log-ratio, whether it was
    tested, its p-values and, per rule set, whether it passes the filter (the screen-wide
    rules are not applied here). Pairs the screen cannot evaluate (stale, missing, too short)
    and pairs left out of ``rows`` have zone ``""``, a NaN log-ratio and p-values, and pass
    nowhere. ``complete`` says whether every pair was considered, so that the tested pairs
    are the day's whole Benjamini-Hochberg family."""

    as_of: date  # a day, or on an intraday universe a bar's close (aware UTC datetime)
    zone: np.ndarray  # (pairs,) str
    log_ratio: np.ndarray  # (pairs,) float, ln(A/B) at the day's close
    survives: Mapping[str, np.ndarray]  # rule set name -> (pairs,) bool: passes the filter
    tested: np.ndarray  # (pairs,) bool: reached the metrics
    pvalues: Mapping[str, np.ndarray]  # QVALUE_FIELDS name -> (pairs,) float, NaN if none
    complete: bool = True
    # (pairs,) uint8: the core's verdict (``engine.guarantees``), PASSES outside ``rows``
    core: np.ndarray | None = None
    # (pairs,) float: MODEL_RETURN at the day's close for the pairs that pass some rule
    # set's filter, NaN elsewhere; None when no loaded metric provides it
    model_return: np.ndarray | None = None
    # (pairs,) float: the scorer's score of the pairs that pass some rule set's filter (the
    # screen scores its survivors), NaN elsewhere; with Market.scorer only
    score: np.ndarray | None = None


def verdicts_at(
    plugins: Plugins,
    market: Market,
    sets: Sequence[RuleSet],
    day: date,
    depegs_at: DepegsAt,
    rows: np.ndarray | None = None,
) -> DateVerdicts:
    """The filter verdicts of every rule set at the close of ``day``, metrics computed once;
    only for the pairs of the boolean mask ``rows`` when given (a pair's numbers depend on
    that pair alone, so a subset gives those pairs the verdicts of the whole day)."""
    n = len(market.pairs)
    generated_at = close_at(day)
    bar = market.bar
    last = stamp(day, bar)
    # freshness as the live screen judges it: days, or lags in bars up to the as-of close
    closed = (
        closes_until(market.candles, last) if bar.intraday else candles_until(market.candles, day)
    )
    fresh = candle_freshness(market.universe, closed, bar, generated_at)
    depegs = depegs_at(generated_at)
    considered: list[int] = []
    ends: list[int] = []  # per considered pair: its common closes up to the day
    history_of: list[int | None] = []
    for i, pair in enumerate(market.aligned):
        if rows is not None and not rows[i]:
            continue
        considered.append(i)
        k = 0 if pair is None else int(np.searchsorted(pair.dates, last, side="right"))
        ends.append(k)
        history_of.append(None if pair is None else history_days(pair.dates[:k], bar))
    core = np.zeros(n, dtype=np.uint8)  # the core's verdict, as the screen decides it
    core[considered] = pair_verdicts(
        fresh,
        [(market.pairs[i][0].ticker, market.pairs[i][1].ticker) for i in considered],
        history_of,
        market.min_history_days,
        depegs,
    )
    measured = reaches_metrics(core)
    tested_rows: list[int] = []
    cut: list[AlignedPair] = []
    for i, k in zip(considered, ends, strict=True):
        pair = market.aligned[i]
        if measured[i] and pair is not None and k > 0:
            tested_rows.append(i)
            cut.append(prefix(pair, k))
    zone = np.full(n, "", dtype=object)
    log_ratio = np.full(n, np.nan)
    survives = {s.name: np.zeros(n, dtype=bool) for s in sets}
    pvalues = {name: np.full(n, np.nan) for name in QVALUE_FIELDS}
    score = None if market.scorer is None else np.full(n, np.nan)
    model_return = np.full(n, np.nan)
    deciding, describing = split_metrics_for(
        plugins, [(s.screen_filter, s.thresholds) for s in sets]
    )
    order = [f.name for metric in plugins.metrics for f in metric.fields]
    span_days = market.window_days + market.bt_days
    for idx, panel in group_by_history(cut, span_days, market.window_days):
        at = np.asarray([tested_rows[j] for j in idx])
        # Strict: a failing metric stops the evaluation as it stops ``screen run``.
        metrics = compute_metrics(plugins, panel, deciding, strict=True)
        if ZONE.name in metrics.values:
            zone[at] = np.asarray(metrics.values[ZONE.name], dtype=object)
        log_ratio[at] = np.log(panel.close_a[:, -1] / panel.close_b[:, -1])
        for name, column in pvalues.items():
            if name in metrics.values:  # absent when its metric failed: no test
                column[at] = np.asarray(metrics.values[name], dtype=float)
        history = np.array([cut[j].calendar_days for j in idx])
        legs = tuple(depegged_legs(depegs, a, b) for a, b in zip(panel.a, panel.b, strict=True))
        depegged = np.array([bool(pair_legs) for pair_legs in legs])
        passed = np.zeros(len(idx), dtype=bool)
        for rule_set in sets:
            context = FilterContext(history, depegged, rule_set.thresholds, legs)
            reasons = filter_reasons(rule_set.screen_filter, metrics, context)
            kept = np.array([not r for r in reasons], dtype=bool)
            survives[rule_set.name][at] = kept
            passed |= kept
        keep = np.flatnonzero(passed)
        if describing and keep.size:
            # As the screen does: what only describes a pair runs on the survivors (a metric
            # gives a pair the same numbers in any panel), so the break-even backtests and
            # the other descriptions do not run on every tested pair of every day.
            later = compute_metrics(plugins, select_rows(panel, keep), describing, strict=True)
            metrics = metrics.with_rows(panel.n_pairs, keep, later, order)
        if MODEL_RETURN in metrics.values:
            model_return[at] = np.asarray(metrics.values[MODEL_RETURN], dtype=float)
        if score is not None and market.scorer is not None and keep.size:
            # The screen scores its survivors with every metric; so are these pairs scored.
            scorer = plugins.scorers.get(market.scorer)
            values = {name: column[keep] for name, column in metrics.values.items()}
            score[at[keep]] = np.asarray(scorer.score(values), dtype=float)
    modelled = any(f.name == MODEL_RETURN for metric in plugins.metrics for f in metric.fields)
    tested = np.zeros(n, dtype=bool)
    tested[tested_rows] = True
    return DateVerdicts(
        day,
        zone,
        log_ratio,
        survives,
        tested,
        pvalues,
        rows is None,
        core,
        model_return if modelled else None,
        score,
    )


def prefix(pair: AlignedPair, k: int) -> AlignedPair:
    """The pair's first ``k`` common closes (the pair itself when that is all of them)."""
    if k == pair.n_days:
        return pair
    return AlignedPair(
        pair.a,
        pair.b,
        pair.dates[:k],
        pair.close_a[:k],
        pair.close_b[:k],
        pair.volume_a[:k],
        pair.volume_b[:k],
        pair.bar,
    )
