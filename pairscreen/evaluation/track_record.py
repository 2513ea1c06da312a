"""The track record: the screen's current rules evaluated on the stored candles, as the
``/evidence`` body (``pairscreen evaluate --publish`` and the worker store it with
:mod:`pairscreen.screen_store.evidence`; nothing here writes).

Only the screen's own rules are evaluated (the track record is theirs), over the default
range: from the first day with a full band window to the last day the shortest horizon can
follow (each longer horizon leaves out the last days it cannot follow). ``sample`` bounds
the work on a large universe: that many pairs, drawn with a fixed seed, stated in the
result. On an intraday universe the as-of points are bar closes, by default 6 hours apart
with horizons of 24 and 72 hours (``evaluation.scale``; the step widens to keep at most
1,000 as-of closes on a long history), and the body adds the bar and its steps in bars and
hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.evaluation.dates import close_at, day_of_point, spell
from pairscreen.evaluation.portfolio import PortfolioSpec
from pairscreen.evaluation.report import bar_fields, horizon_json, in_days_or_count
from pairscreen.evaluation.run import Evaluation, Period, Progress
from pairscreen.wording import plural

if TYPE_CHECKING:
    from pairscreen.contracts import Candles
    from pairscreen.runtime import Runtime


@dataclass(frozen=True)
class TrackRecord:
    evaluation: Evaluation
    body: dict[str, object]  # the /evidence body, without published_at

    @property
    def first_day(self) -> date:
        """The day of the first as-of point (of its bar, on an intraday universe)."""
        return day_of_point(self.evaluation.dates[0])

    @property
    def last_day(self) -> date:
        return day_of_point(self.evaluation.dates[-1])

    def summary(self, evidence_id: int) -> str:
        e = self.evaluation
        sample = f" (sample of {e.pairs_in_universe})" if e.n_pairs < e.pairs_in_universe else ""
        parts = [
            f"{_short(h.horizon, e.bar)} {h.difference.reading.replace('_', ' ')}"
            for h in e.results[0].horizons
        ]
        points = plural(len(e.dates), "as-of close" if e.bar.intraday else "as-of day")
        return (
            f"evidence #{evidence_id}: {points}, "
            f"{plural(e.n_pairs, 'pair')}"
            f"{sample}; {', '.join(parts)}"
        )


def _short(bars: int, bar: BarSize) -> str:
    return spell(bars, bar) if bar.intraday else f"{bars} d"


AFTER, CHOSEN_ON = "after", "chosen_on"


def split_periods(
    chosen_through: date, first: date, last: date, bar: BarSize = DAILY
) -> list[tuple[str, date, date]]:
    """The run's as-of days ``first`` … ``last`` in two named parts, the later first: those
    after ``chosen_through`` (the defaults had not seen them) and those up to it. On an
    intraday universe the parts meet at that day's close: its last bar (closing at 00:00 of
    the next day) is the last of the earlier part."""
    if bar.intraday and isinstance(first, datetime):
        through = close_at(chosen_through)
        after_from: date = through + timedelta(seconds=bar.seconds)
        return [(AFTER, max(first, after_from), last), (CHOSEN_ON, first, min(last, through))]
    after_from = chosen_through + timedelta(days=1)
    return [(AFTER, max(first, after_from), last), (CHOSEN_ON, first, min(last, chosen_through))]


def period_json(period: Period, bar: BarSize = DAILY) -> dict[str, object]:
    """One named part of the track record: its days and the screen's rows over them."""
    result = period.result
    return {
        "name": period.name,
        "from": day_of_point(period.dates[0]).isoformat() if period.dates else None,
        "to": day_of_point(period.dates[-1]).isoformat() if period.dates else None,
        "as_of_days": len(period.dates),
        "horizons": []
        if result is None
        else [horizon_json(h, per_date=False, bar=bar) for h in result.horizons],
    }


def track_record(evaluation: Evaluation, chosen_through: date | None = None) -> dict[str, object]:
    """The ``/evidence`` body (without ``published_at``): the screen's rules only; with
    ``chosen_through``, its periods (the evaluation must have been run with them)."""
    from pairscreen.evaluation.report import comparisons

    screen = evaluation.results[0]
    through = evaluation.data_through
    bar = evaluation.bar
    body: dict[str, object] = {
        "from": day_of_point(evaluation.dates[0]).isoformat(),
        "to": day_of_point(evaluation.dates[-1]).isoformat(),
        "data_through": None if through is None else day_of_point(through).isoformat(),
        "as_of_days": len(evaluation.dates),
        "every_days": in_days_or_count(evaluation.every_days, bar),
        **bar_fields(evaluation),
        "fee": evaluation.fee,
        "rules": {
            "filter": screen.rule_set.description,
            "thresholds": dict(screen.rule_set.thresholds),
            "screen_rules": dict(screen.rule_set.screen_wide),
        },
        "sample": {
            "pairs": evaluation.n_pairs,
            "of_pairs": evaluation.pairs_in_universe,
            "sampled": evaluation.n_pairs < evaluation.pairs_in_universe,
        },
        "comparisons": comparisons(evaluation),
        "horizons": [horizon_json(h, per_date=False, bar=bar) for h in screen.horizons],
        "warnings": list(evaluation.warnings),
        "calibration": None if evaluation.calibration is None else evaluation.calibration.as_json(),
        **portfolio_line(evaluation),
    }
    if chosen_through is not None:
        body["defaults_chosen_through"] = chosen_through.isoformat()
        body["periods"] = [period_json(p, bar) for p in evaluation.periods]
    return body


def portfolio_line(evaluation: Evaluation) -> dict[str, object]:
    """The portfolio of picks for ``/evidence`` (``evaluate --publish --portfolio N``): per
    horizon its figures beside the random in-zone pairs and the universe, without each day's
    picks; nothing when none was asked for, so the body is as before."""
    if not evaluation.portfolio:
        return {}
    return {
        "portfolio_strategy": evaluation.strategy,
        "portfolio": [p.as_json(per_date=False) for p in evaluation.portfolio],
    }


def evaluate_current_rules(
    rt: Runtime,
    *,
    sample: int | None = None,
    every_days: int | None = None,
    horizons: Sequence[int] | None = None,
    start: date | None = None,
    end: date | None = None,
    on_progress: Progress | None = None,
    portfolio: PortfolioSpec | None = None,
    candles: Mapping[str, Candles] | None = None,
) -> TrackRecord:
    """Evaluate the screen's current rules over the default range (or ``start`` … ``end``),
    with the portfolio of picks traded with the screen's strategy when ``portfolio`` is given.
    ``every_days`` and ``horizons`` count the universe's bars (days on a daily universe);
    None takes the track record's (:func:`~pairscreen.evaluation.scale.track_record_steps`).
    ``candles``: what the caller already read of the universe (else they are read here).

    Raises ``ValueError`` with a sentence when there is nothing to evaluate.
    """
    from pairscreen.evaluation.dates import as_of_points
    from pairscreen.evaluation.rule_sets import rule_sets
    from pairscreen.evaluation.run import evaluate
    from pairscreen.evaluation.scale import (
        default_points,
        last_closed,
        runtime_candles,
        runtime_market,
        track_record_every,
        track_record_steps,
        universe_bar,
        window_days,
    )
    from pairscreen.pegs.status import active_depegs

    bar = universe_bar(rt)
    default_every, default_horizons = track_record_steps(bar)
    every = default_every if every_days is None else every_days
    chosen = tuple(default_horizons if horizons is None else horizons)
    if candles is None:
        candles = runtime_candles(rt)
    if not candles:
        raise ValueError("no candles stored: run 'pairscreen data sync' first")
    first, last = default_points(candles, window_days(rt), min(chosen), bar)
    start, end = start or first, end or min(last, last_closed(bar))
    if every_days is None:
        every = track_record_every(bar, start, end, every)
    dates = as_of_points(start, end, every, bar)
    market = runtime_market(
        rt, candles, sample=sample, scorer=rt.settings.scorer if portfolio is not None else None
    )
    screen_rules = rule_sets(rt.plugins, rt.universe, [])[:1]
    strategy = rt.plugins.strategies.get(rt.settings.strategy)
    fee = float(getattr(strategy, "fee", 0.0))
    chosen_through = rt.settings.defaults_chosen_through
    result = evaluate(
        rt.plugins,
        market,
        screen_rules,
        dates,
        chosen,
        every_days=every,
        fee=fee,
        depegs_at=active_depegs,
        persistence_screens=rt.settings.persistence_screens,
        screen_every_bars=rt.settings.screen_every_bars,
        on_progress=on_progress,
        periods=split_periods(chosen_through, dates[0], dates[-1], bar),
        costs=rt.universe.costs,
        strategy=strategy,
        portfolio=portfolio,
        processes=rt.settings.screen_processes,
    )
    return TrackRecord(result, track_record(result, chosen_through))
