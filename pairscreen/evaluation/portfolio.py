"""A portfolio of the screen's picks, out of sample: at each as-of day the top ``N`` survivors
in the zones by score, no asset in more than ``K`` of them, each traded with the strategy for
the horizon (``evaluation.strategy_outcomes``), equal weight.

A day's portfolio return is ``ln(mean_i exp(r_i))`` of its picks' strategy log returns (equal
amounts in, held to the horizon). Reported per horizon: the mean over as-of days with its
95 % interval (the overlap-aware error of ``statistics.series_mean``), a Sharpe ratio
annualised from the per-horizon returns (``mean / sd x sqrt(365 / h)``), the worst drawdown
of the compounded path, turnover and the costs the picks paid. Consecutive as-of days closer
than the horizon overlap, so the compounded path only chains days one horizon apart (every
``ceil(h / every)``-th day); each of the ``ceil(h / every)`` such chains is compounded and the
worst drawdown of them is reported, and turnover compares each portfolio with the one a
horizon earlier on its chain.

Beside it, the null: the same number of pairs drawn at random (seeded) from that day's
in-zone pairs with an outcome, under the same per-asset limit, traded alike, many draws; and
holding every asset of the evaluated pairs equally weighted over the same horizon.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.evaluation.dates import after, in_days, in_hours, stamp
from pairscreen.evaluation.statistics import series_mean
from pairscreen.evaluation.strategy_outcomes import StrategyOutcomes
from pairscreen.evaluation.verdicts import DateVerdicts, Market

NULL_DRAWS = 200
NULL_SEED = 20261129
DAYS_PER_YEAR = 365.0  # crypto trades every day; the annualisation is stated with the horizon


@dataclass(frozen=True)
class PortfolioSpec:
    """``--portfolio N [--max-per-asset K]``: ``K`` None puts no limit on an asset."""

    size: int
    max_per_asset: int | None = None
    draws: int = NULL_DRAWS
    seed: int = NULL_SEED

    @property
    def limit(self) -> int:
        return self.size if self.max_per_asset is None else self.max_per_asset


@dataclass(frozen=True)
class PathFigures:
    """A per-day return series summarised: its mean with the interval, annualised Sharpe and
    the worst drawdown of its compounded, non-overlapping chains."""

    days: int
    mean: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    degrees_of_freedom: int | None
    sharpe: float | None
    max_drawdown: float | None

    def as_json(self) -> dict[str, object]:
        return {
            "as_of_days": self.days,
            "mean": self.mean,
            "ci95": [self.low, self.high] if self.low is not None else None,
            "standard_error": self.standard_error,
            "degrees_of_freedom": self.degrees_of_freedom,
            "sharpe_annualised": self.sharpe,
            "max_drawdown": self.max_drawdown,
        }


@dataclass(frozen=True)
class PortfolioResult:
    horizon: int
    size: int
    max_per_asset: int | None
    block_days: int
    picks: PathFigures
    mean_picks: float | None  # pairs held on average (fewer than N on a thin day)
    turnover: float | None  # share of picks not in the portfolio one horizon earlier
    swaps_per_pick: float | None
    costs_paid: float | None  # mean log points a pick paid in fees and [costs]
    null_draws: int
    null_mean: float | None  # mean over the draws of their mean return
    null_ci95: tuple[float, float] | None  # 2.5 and 97.5 % of the draws' mean returns
    null_sharpe: float | None  # mean over the draws of their Sharpe
    p_vs_null: float | None  # share of draws (plus one) whose mean reaches the picks'
    universe: PathFigures
    per_date: tuple[tuple[str, ...], ...]  # each as-of day's picks, "A/B"
    bar: BarSize = DAILY  # intraday: ``horizon`` and ``block_days`` count bars

    def as_json(self, *, per_date: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "horizon_days": in_days(self.horizon, self.bar) if self.bar.intraday else self.horizon,
            **horizon_units(self.horizon, self.bar),
            "size": self.size,
            "max_per_asset": self.max_per_asset,
            "block_days": self.block_days,
            "annualised_with_days_per_year": DAYS_PER_YEAR,
            "portfolio": self.picks.as_json(),
            "mean_picks": self.mean_picks,
            "turnover": self.turnover,
            "swaps_per_pick": self.swaps_per_pick,
            "costs_paid": self.costs_paid,
            "random": {
                "draws": self.null_draws,
                "mean": self.null_mean,
                "range95": list(self.null_ci95) if self.null_ci95 is not None else None,
                "sharpe_annualised": self.null_sharpe,
                "p_value": self.p_vs_null,
            },
            "universe": self.universe.as_json(),
        }
        if per_date:
            out["per_date_picks"] = [list(p) for p in self.per_date]
        return out


def horizon_units(bars: int, bar: BarSize) -> dict[str, object]:
    """What an intraday horizon adds beside its days: its bars and hours (nothing on a
    daily universe, whose objects stay as they were)."""
    if not bar.intraday:
        return {}
    return {"horizon_bars": bars, "horizon_hours": in_hours(bars, bar)}


def pick(
    order: np.ndarray, legs: tuple[np.ndarray, np.ndarray], size: int, limit: int
) -> list[int]:
    """The first ``size`` pairs of ``order`` (pair indices, best first) such that no asset
    is in more than ``limit`` of them."""
    held: dict[int, int] = {}
    out: list[int] = []
    for i in order.tolist():
        a, b = int(legs[0][i]), int(legs[1][i])
        if held.get(a, 0) >= limit or held.get(b, 0) >= limit:
            continue
        out.append(i)
        held[a] = held.get(a, 0) + 1
        held[b] = held.get(b, 0) + 1
        if len(out) == size:
            break
    return out


def null_draws(
    rng: np.random.Generator,
    pool: np.ndarray,
    legs: tuple[np.ndarray, np.ndarray],
    size: int,
    spec: PortfolioSpec,
) -> list[list[int]]:
    """``spec.draws`` random portfolios of ``size`` pairs from ``pool`` (the day's in-zone
    pairs with an outcome), each under the per-asset limit: a random order, then the same
    greedy pass as the picks."""
    return [pick(rng.permutation(pool), legs, size, spec.limit) for _ in range(spec.draws)]


def asset_legs(market: Market) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's legs as asset numbers (for the per-asset limit)."""
    tickers = sorted({a.ticker for pair in market.pairs for a in pair})
    index = {t: i for i, t in enumerate(tickers)}
    return (
        np.array([index[a.ticker] for a, _ in market.pairs], dtype=int),
        np.array([index[b.ticker] for _, b in market.pairs], dtype=int),
    )


def portfolios(
    market: Market,
    verdicts: Sequence[DateVerdicts],
    survive: Sequence[np.ndarray],
    outcomes: Mapping[int, Sequence[StrategyOutcomes]],
    spec: PortfolioSpec,
    every_days: int,
) -> tuple[PortfolioResult, ...]:
    """One result per horizon of ``outcomes``; ``survive`` is the screen's survivors per day."""
    tickers = sorted({a.ticker for pair in market.pairs for a in pair})
    legs = asset_legs(market)
    names = [f"{a.ticker}/{b.ticker}" for a, b in market.pairs]
    return tuple(
        _horizon(market, verdicts, survive, outcomes[h], spec, every_days, h, legs, names, tickers)
        for h in sorted(outcomes)
    )


def _horizon(
    market: Market,
    verdicts: Sequence[DateVerdicts],
    survive: Sequence[np.ndarray],
    outcomes: Sequence[StrategyOutcomes],
    spec: PortfolioSpec,
    every_days: int,
    horizon: int,
    legs: tuple[np.ndarray, np.ndarray],
    names: list[str],
    tickers: list[str],
) -> PortfolioResult:
    block = math.ceil(horizon / every_days)
    rng = np.random.default_rng(spec.seed + horizon)
    days = len(outcomes)
    returns = np.full(days, np.nan)
    null = np.full((spec.draws, days), np.nan)
    held: list[list[int]] = []
    swaps: list[float] = []
    costs: list[float] = []
    for d, (v, s, o) in enumerate(zip(verdicts, survive, outcomes, strict=True)):
        usable = np.isfinite(o.strategy_return)
        candidates = np.flatnonzero(s & usable)
        score = v.score if v.score is not None else np.zeros(len(s))
        ranked = candidates[
            np.argsort(-np.nan_to_num(score[candidates], nan=-np.inf), kind="stable")
        ]
        chosen = pick(ranked, legs, spec.size, spec.limit)
        held.append(chosen)
        if not chosen:
            continue
        returns[d] = _equal_weight(o.strategy_return[chosen])
        swaps.append(float(o.swaps[chosen].mean()))
        costs.append(float(o.costs_paid[chosen].mean()))
        pool = np.flatnonzero(usable)  # the day's in-zone pairs with an outcome
        for k, drawn in enumerate(null_draws(rng, pool, legs, len(chosen), spec)):
            null[k, d] = _equal_weight(o.strategy_return[drawn])
    length = in_days(horizon, market.bar)  # the Sharpe's horizon in (fractional) days
    picks = _figures(returns, block, length)
    draw_means = np.array([np.nanmean(row) if np.isfinite(row).any() else np.nan for row in null])
    finite = draw_means[np.isfinite(draw_means)]
    draw_sharpes = [_sharpe(row[np.isfinite(row)], length) for row in null]
    known_sharpes = [x for x in draw_sharpes if x is not None]
    universe = _figures(_universe_returns(market, verdicts, tickers, horizon), block, length)
    return PortfolioResult(
        horizon=horizon,
        size=spec.size,
        max_per_asset=spec.max_per_asset,
        block_days=block,
        picks=picks,
        mean_picks=float(np.mean([len(h) for h in held if h])) if any(held) else None,
        turnover=_turnover(held, block),
        swaps_per_pick=float(np.mean(swaps)) if swaps else None,
        costs_paid=float(np.mean(costs)) if costs else None,
        null_draws=spec.draws,
        null_mean=float(finite.mean()) if finite.size else None,
        null_ci95=(
            (float(np.percentile(finite, 2.5)), float(np.percentile(finite, 97.5)))
            if finite.size
            else None
        ),
        null_sharpe=float(np.mean(known_sharpes)) if known_sharpes else None,
        p_vs_null=(
            float((1 + (finite >= picks.mean).sum()) / (finite.size + 1))
            if finite.size and picks.mean is not None
            else None
        ),
        universe=universe,
        per_date=tuple(tuple(names[i] for i in h) for h in held),
        bar=market.bar,
    )


def _equal_weight(log_returns: np.ndarray) -> float:
    """The log return of equal amounts put in each position and held."""
    return float(np.log(np.mean(np.exp(log_returns)))) if log_returns.size else math.nan


def _figures(returns: np.ndarray, block: int, horizon: float) -> PathFigures:
    mean = series_mean(returns, block)
    known = returns[np.isfinite(returns)]
    return PathFigures(
        int(known.size),
        mean.estimate,
        mean.low,
        mean.high,
        mean.standard_error,
        mean.degrees_of_freedom,
        _sharpe(known, horizon),
        _worst_drawdown(returns, block),
    )


def _sharpe(returns: np.ndarray, horizon: float) -> float | None:
    """``mean / sd`` of per-horizon log returns times ``sqrt(365 / horizon)``, ``horizon``
    in days (a fraction of one for a horizon of a few hourly bars)."""
    if returns.size < 2:
        return None
    sd = float(returns.std(ddof=1))
    if not sd > 0:
        return None
    return float(returns.mean() / sd * math.sqrt(DAYS_PER_YEAR / horizon))


def _worst_drawdown(returns: np.ndarray, block: int) -> float | None:
    """The largest fall from a peak of the compounded value, over the chains of as-of days
    one horizon apart (a day without a return holds the value); None without any return."""
    worst: float | None = None
    if not np.isfinite(returns).any():
        return worst
    for offset in range(min(block, returns.size)):
        chain = np.nan_to_num(returns[offset::block], nan=0.0)
        path = np.concatenate([[0.0], np.cumsum(chain)])
        fall = float(-np.expm1((path - np.maximum.accumulate(path)).min())) + 0.0  # not -0.0
        worst = fall if worst is None else max(worst, fall)
    return worst


def _turnover(held: list[list[int]], block: int) -> float | None:
    """Mean share of a portfolio's picks not held one horizon earlier (both non-empty)."""
    shares = [
        1.0 - len(set(now) & set(held[d - block])) / len(now)
        for d, now in enumerate(held)
        if d >= block and now and held[d - block]
    ]
    return float(np.mean(shares)) if shares else None


def _universe_returns(
    market: Market, verdicts: Sequence[DateVerdicts], tickers: list[str], horizon: int
) -> np.ndarray:
    """Per as-of day, the log return of every asset held equally weighted over the horizon
    (the assets with a close at or before the day and data reaching ``t + h``)."""
    out = np.full(len(verdicts), np.nan)
    for d, v in enumerate(verdicts):
        day = stamp(v.as_of, market.bar)
        end = after(v.as_of, horizon, market.bar)
        growth = []
        for ticker in tickers:
            candles = market.candles.get(ticker)
            if candles is None or candles.dates[-1] < end or candles.dates[0] > day:
                continue
            dates = candles.dates.astype(market.bar.dtype)
            t = int(np.searchsorted(dates, day, side="right")) - 1
            k = int(np.searchsorted(dates, end, side="right")) - 1
            growth.append(float(candles.close[k] / candles.close[t]))
        if growth:
            out[d] = math.log(float(np.mean(growth)))
    return out
