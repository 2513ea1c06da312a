"""The live ``/pair/{a}/{b}`` snapshot: one pair as a panel of one, through the same engine
as the screen (metrics, filter, both backtest legs) plus each leg's peg status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, BacktestBatch, DepeggedLeg, FilterContext, PairPanel
from pairscreen.engine.costs import leg_slippage, with_costs
from pairscreen.engine.evaluate import compute_metrics, leg_breakeven, run_legs
from pairscreen.engine.filtering import filter_reasons
from pairscreen.engine.guarantees import PASSES, core_text, core_verdicts
from pairscreen.engine.panels import AlignedPair, align, span_panel
from pairscreen.engine.windows import windows_of
from pairscreen.errors import NotFound
from pairscreen.market.freshness import candle_freshness, day_start, stale_reason
from pairscreen.pegs.status import active_depegs, depegged_legs, peg_status
from pairscreen.runtime import Runtime
from pairscreen.screen_store.persistence import recent_verdicts
from pairscreen.screening import in_sample
from pairscreen.screening.pair_chunks import day_iso
from pairscreen.screening.screen_candles import pair_candles
from pairscreen.screening.spans import screen_spans
from pairscreen.universe import pair_sector


def aligned_pair(rt: Runtime, asset_a: Asset, asset_b: Asset) -> AlignedPair:
    """The two assets' aligned history (assets from :meth:`Universe.pair
    <pairscreen.universe.Universe.pair>`); 404 with a clear message when there is too little.

    Whether the pair has enough common history is known only once its candles are aligned,
    which is the computation's own work, after admission.
    """
    spans = screen_spans(rt.universe, rt.settings)
    candles = pair_candles(rt, spans.bar, (asset_a.ticker, asset_b.ticker))
    for asset in (asset_a, asset_b):
        if asset.ticker not in candles:
            raise NotFound(f"No data yet for {asset.ticker}: its candles have not been synced.")
    pair = align(candles[asset_a.ticker], candles[asset_b.ticker], spans.bar)
    minimum = spans.min_history_days
    # the core's history guarantee; a stale leg is not a refusal here but the pair's reason
    verdict = int(core_verdicts([False], [False], [pair.calendar_days], minimum)[0])
    if verdict != PASSES:
        text = core_text(verdict, history_days=pair.calendar_days, min_history_days=minimum)
        raise NotFound(f"No data yet for {asset_a.ticker}/{asset_b.ticker}: {text}.")
    return pair


def snapshot_panel(rt: Runtime, pair: AlignedPair, bt: int) -> PairPanel:
    """The pair as a panel of one: the common closes of the band window plus the ``bt``
    backtest days, in calendar days ending at the last common close, with the universe's
    swap costs."""
    window = screen_spans(rt.universe, rt.settings).window_days
    panel = span_panel(pair, window + bt, window)
    costs = rt.universe.costs
    legs = leg_slippage(costs, [rt.universe.asset(pair.a), rt.universe.asset(pair.b)])
    return with_costs(panel, costs, legs[:1], legs[1:])


@dataclass(frozen=True)
class PairEvaluation:
    """The engine's verdict on one pair: JSON-ready metrics, filter reason, both legs."""

    metrics: dict[str, object]
    filter_reason: str
    legs: dict[str, BacktestBatch]
    windows: dict[str, Any]


def evaluate_pair(
    rt: Runtime, pair: AlignedPair, *, depegged: tuple[DepeggedLeg, ...], bt: int
) -> PairEvaluation:
    """Metrics, filter and both backtest legs of one pair, as the screen computes them.

    ``depegged`` holds the pair's legs in an active depeg event (empty when none is), so a
    rejection names them.
    """
    settings = rt.settings
    panel = snapshot_panel(rt, pair, bt)
    metrics = compute_metrics(rt.plugins, panel)
    choice = rt.screen_filter
    context = FilterContext(
        np.array([pair.calendar_days]),
        np.array([bool(depegged)]),
        choice.thresholds,
        (depegged,),
    )
    reason = filter_reasons(rt.plugins.filters.get(choice.name), metrics, context)[0]
    legs = run_legs(rt.plugins.strategies.get(settings.strategy), panel, bt)
    return PairEvaluation(metrics.row(0), reason, legs, windows_of(panel, 0, legs["A"], 0))


def pair_stale_reason(rt: Runtime, asset_a: Asset, asset_b: Asset) -> str:
    """The pair's stale reason now (every stale leg with its age), ``""`` when both are fresh."""
    bar = screen_spans(rt.universe, rt.settings).bar
    candles = pair_candles(rt, bar, (asset_a.ticker, asset_b.ticker))
    legs = {t: c for t, c in candles.items() if t in (asset_a.ticker, asset_b.ticker)}
    return stale_reason(candle_freshness(rt.universe, legs, bar), asset_a, asset_b)


def compute_snapshot(rt: Runtime, asset_a: Asset, asset_b: Asset, bt: int) -> dict[str, Any]:
    """The ``/pair/{a}/{b}`` body of the resolved pair (:meth:`Universe.pair
    <pairscreen.universe.Universe.pair>`)."""
    pair = aligned_pair(rt, asset_a, asset_b)
    depegged = depegged_legs(active_depegs(), asset_a.ticker, asset_b.ticker)
    evaluation = evaluate_pair(rt, pair, depegged=depegged, bt=bt)
    legs = evaluation.legs
    # A stale leg fails the pair before any rule, as in the screen; the numbers stay a live look.
    reason = pair_stale_reason(rt, asset_a, asset_b) or evaluation.filter_reason
    return {
        "pair": f"{asset_a.ticker}/{asset_b.ticker}",
        "base_a": asset_a.ticker,
        "base_b": asset_b.ticker,
        "asset_class_a": asset_a.asset_class,
        "asset_class_b": asset_b.asset_class,
        "sector": pair_sector(asset_a, asset_b),
        "data_time": _data_time(pair),
        "generated_at": clock.iso(clock.now()),
        "passes_filter": reason == "",
        "filter_reason": reason,
        "metrics": evaluation.metrics,
        "windows": evaluation.windows,
        "backtest": {
            "history_days": int(legs["A"].history_days[0]),
            "observations": int(legs["A"].simulated_closes()[0]),
            "A": snapshot_leg(legs["A"], asset_a.ticker),
            "B": snapshot_leg(legs["B"], asset_b.ticker),
        },
        "peg": {"A": peg_status(asset_a, rt.universe), "B": peg_status(asset_b, rt.universe)},
        "recent_verdicts": recent_verdicts(
            asset_a.ticker,
            asset_b.ticker,
            rt.settings.persistence_screens,
            screen_spans(rt.universe, rt.settings).bar,
        ),
        "in_sample": {"fields": in_sample.snapshot_paths(), "note": in_sample.NOTE},
        **_bar_of(pair),
    }


def _bar_of(pair: AlignedPair) -> dict[str, Any]:
    """An intraday pair's bar and its length, so a reader knows ``data_time`` is a bar's
    close; nothing for daily closes (their body stays what it was)."""
    if not pair.bar.intraday:
        return {}
    return {"bar": pair.bar.name, "bar_seconds": pair.bar.seconds}


def _data_time(pair: AlignedPair) -> str:
    """00:00 UTC of the last common day; the last common bar's close time for bars."""
    if pair.bar.intraday:
        return day_iso(pair.dates[-1])
    return clock.iso(day_start(pair.dates[-1]))


def snapshot_leg(batch: BacktestBatch, base: str) -> dict[str, Any]:
    buy_hold = float(batch.buy_hold_growth_pct[0])
    return {
        "base_leg": base,
        "growth_pct": float(batch.growth_pct[0]),
        "n_trades": int(batch.n_trades[0]),
        "max_drawdown_pct": float(batch.max_drawdown_pct[0]),
        "buy_hold": None if np.isnan(buy_hold) else {"growth_pct": buy_hold},
        **leg_breakeven(batch, 0),
    }
