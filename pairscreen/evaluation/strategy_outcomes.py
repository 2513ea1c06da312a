"""What trading a pair with the configured strategy earned after an as-of day, against holding
both legs.

For a pair in a band zone at day ``t`` and a horizon ``h`` the strategy runs walk-forward over
``(t, t+h]`` from that day's state: its panel is the pair cut at the last common close at or
before ``t+h``, simulated over the calendar days after ``t``'s close, so the band (or model)
of each simulated day reads only the closes before it, as in the live backtest. It starts
fully in the zone's cheap leg (A in the bottom zone, B in the top one): the coin the signal
says to hold, so that a strategy that agrees with the zone does not pay a first swap into it
(started in the other leg it would swap into the cheap one on the first day). Every swap pays
the strategy's fee plus the universe's ``[costs]`` slippage of its day
(:func:`pairscreen.engine.costs.with_costs`); the position held at ``t`` is taken as given, so
no entry swap is charged (nor is one for the baseline).

The strategy counts its value in the start coin (100 coins at ``t``); in the quote currency
its log return is ``ln(V_{t+h}/100) + ln(S_{t+h}/S_t)`` with ``S`` the start coin's close.
The baseline holds both legs half and half: ``hold_both = ln(A_{t+h}/(2 A_t) +
B_{t+h}/(2 B_t))``; ``excess`` is the difference, in log points. Pairs are simulated together,
one panel per start leg, simulated span and calendar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pairscreen.contracts import Leg, PairPanel, Strategy
from pairscreen.engine.costs import leg_slippage, with_costs
from pairscreen.engine.panels import AlignedPair, group_by_history
from pairscreen.evaluation.dates import after, stamp
from pairscreen.evaluation.outcomes import ZONE_SIGN, in_zones
from pairscreen.evaluation.verdicts import DateVerdicts, Market, prefix
from pairscreen.universe import SwapCosts

STRATEGY_MEASURES = ("strategy_return", "hold_both", "excess")


@dataclass(frozen=True)
class StrategyOutcomes:
    """Per pair at one day and horizon, NaN where a pair is outside the zones or has no data
    at ``t + h``: log returns in the quote currency, fees and costs included, and the swaps
    the strategy made and what they cost in log points."""

    strategy_return: np.ndarray
    hold_both: np.ndarray
    excess: np.ndarray
    swaps: np.ndarray
    costs_paid: np.ndarray


@dataclass(frozen=True)
class _Cut:
    row: int  # the pair's index in the market
    pair: AlignedPair  # cut at the last close at or before t + h
    start: int  # index of t's close in the cut pair


def strategy_outcomes_at(
    strategy: Strategy,
    market: Market,
    verdicts: DateVerdicts,
    horizon: int,
    fee: float,
    costs: SwapCosts,
) -> StrategyOutcomes:
    """The strategy's outcomes of every in-zone pair of one day over ``horizon`` days.
    ``fee`` is the strategy's own fee (to price ``costs_paid``)."""
    n = len(market.pairs)
    out = {name: np.full(n, np.nan) for name in (*STRATEGY_MEASURES, "swaps", "costs_paid")}
    groups: dict[tuple[Leg, int], list[_Cut]] = {}
    end = after(verdicts.as_of, horizon, market.bar)
    day = stamp(verdicts.as_of, market.bar)
    for i in in_zones(verdicts.zone):
        sign, pair = ZONE_SIGN[str(verdicts.zone[i])], market.aligned[i]
        if pair is None or pair.dates[-1] < end:
            continue
        k = int(np.searchsorted(pair.dates, end, side="right")) - 1
        t = int(np.searchsorted(pair.dates, day, side="right")) - 1
        if t < 0 or k <= t:
            continue
        k = _last_whole_day(pair.dates, t, k)
        days = _whole_days(pair.dates[k] - pair.dates[t])
        if days < 1:
            continue
        leg: Leg = "A" if sign > 0 else "B"
        cut = prefix(pair, k + 1)
        groups.setdefault((leg, days), []).append(_Cut(i, cut, t))
    slippage = leg_slippage(costs, [a for pair in market.pairs for a in pair]).reshape(-1, 2)
    for (leg, days), cuts in groups.items():
        pairs = [c.pair for c in cuts]
        for idx, panel in group_by_history(pairs, market.window_days + days, market.window_days):
            rows = np.array([cuts[j].row for j in idx])
            panel = with_costs(panel, costs, slippage[rows, 0], slippage[rows, 1])
            batch = strategy.run(panel, bt_days=days, start_leg=leg)
            first = [cuts[j].start - cuts[j].pair.n_days for j in idx]  # t's column, from the end
            a_t = np.array([pairs[j].close_a[cuts[j].start] for j in idx])
            b_t = np.array([pairs[j].close_b[cuts[j].start] for j in idx])
            a_end, b_end = panel.close_a[:, -1], panel.close_b[:, -1]
            own_t, own_end = (a_t, a_end) if leg == "A" else (b_t, b_end)
            value = np.log1p(batch.growth_pct / 100.0) + np.log(own_end / own_t)
            hold = np.log(0.5 * (a_end / a_t) + 0.5 * (b_end / b_t))
            out["strategy_return"][rows] = value
            out["hold_both"][rows] = hold
            out["excess"][rows] = value - hold
            out["swaps"][rows] = batch.n_trades
            out["costs_paid"][rows] = batch.n_trades * -np.log(
                (1.0 - fee) - _mean_slippage(panel, first)
            )
    return StrategyOutcomes(**out)


def _whole_days(span: np.timedelta64) -> int:
    """The whole days of a span between two closes: the days a strategy simulates (its
    backtest is a span of whole days, ``days x bars per day`` bars on an intraday universe)."""
    return int(span.astype("timedelta64[s]").astype(np.int64) // 86_400)


def _last_whole_day(dates: np.ndarray, t: int, k: int) -> int:
    """The last close in ``(t, k]`` a whole number of days after ``t``'s, else ``k``.

    A strategy simulates whole days ending at the cut's last close, so the cut must end a
    whole number of days after ``t`` for the simulation to start at ``t``'s close. Daily
    closes always do; an intraday pair missing its bar at ``t + h`` (an exchange outage)
    would otherwise end hours early and start hours late, holding the start coin untraded
    for most of a day. It ends instead at its last bar whole days after ``t``, as a daily
    pair without a close at ``t + h`` ends at its last close before it."""
    offsets = (dates[t + 1 : k + 1] - dates[t]).astype("timedelta64[s]").astype(np.int64)
    whole = np.flatnonzero(offsets % 86_400 == 0)
    return t + 1 + int(whole[-1]) if whole.size else k


def _mean_slippage(panel: PairPanel, first: list[int]) -> np.ndarray:
    """Each row's mean per-swap slippage over its simulated days (0 without ``[costs]``):
    exact for a fixed slippage, the horizon's average when an impact varies it by day."""
    slip = panel.slippage
    if slip is None:
        return np.zeros(len(first))
    return np.array([float(slip[r, f + 1 :].mean()) for r, f in enumerate(first)])
