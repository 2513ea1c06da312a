"""The track record: the screen's current rules evaluated on the stored candles, as the
``/evidence`` body (``pairscreen evaluate --publish`` and the worker store it with
:mod:`pairscreen.screen_store.evidence`; nothing here writes).

Only the screen's own rules are evaluated (the track record is theirs), over the default
range: from the first day with a full band window to the last day the shortest horizon can
follow (each longer horizon leaves out the last days it cannot follow). ``sample`` bounds
the work on a large universe: that many pairs, drawn with a fixed seed, stated in the
result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from pairscreen import clock
from pairscreen.contracts import Candles
from pairscreen.evaluation.portfolio import PortfolioSpec
from pairscreen.evaluation.report import horizon_json
from pairscreen.evaluation.run import Evaluation, Period, Progress
from pairscreen.wording import plural

if TYPE_CHECKING:
    from pairscreen.runtime import Runtime

EVERY_DAYS = 30
HORIZONS = (30, 90)


@dataclass(frozen=True)
class TrackRecord:
    evaluation: Evaluation
    body: dict[str, object]  # the /evidence body, without published_at

    @property
    def first_day(self) -> date:
        return self.evaluation.dates[0]

    @property
    def last_day(self) -> date:
        return self.evaluation.dates[-1]

    def summary(self, evidence_id: int) -> str:
        e = self.evaluation
        sample = f" (sample of {e.pairs_in_universe})" if e.n_pairs < e.pairs_in_universe else ""
        parts = [
            f"{h.horizon} d {h.difference.reading.replace('_', ' ')}" for h in e.results[0].horizons
        ]
        return (
            f"evidence #{evidence_id}: {plural(len(e.dates), 'as-of day')}, "
            f"{plural(e.n_pairs, 'pair')}"
            f"{sample}; {', '.join(parts)}"
        )


def default_range(
    candles: Mapping[str, Candles], window_days: int, horizons: Sequence[int]
) -> tuple[date, date]:
    """From the first day with a full band window after the oldest close, to the newest close
    less the shortest horizon: each horizon uses every as-of day it can follow (a longer one
    has no outcome on the last days, which its comparison leaves out). Stopping every
    horizon where the longest can follow left the 30-day comparison 60 days short of its
    data (a ninth of its as-of days over 1,100 days)."""
    oldest = min(c.dates[0] for c in candles.values()).astype("datetime64[D]").item()
    newest = max(c.dates[-1] for c in candles.values()).astype("datetime64[D]").item()
    return oldest + timedelta(days=window_days), newest - timedelta(days=min(horizons))


AFTER, CHOSEN_ON = "after", "chosen_on"


def split_periods(chosen_through: date, first: date, last: date) -> list[tuple[str, date, date]]:
    """The run's as-of days ``first`` … ``last`` in two named parts, the later first: those
    after ``chosen_through`` (the defaults had not seen them) and those up to it."""
    after_from = chosen_through + timedelta(days=1)
    return [(AFTER, max(first, after_from), last), (CHOSEN_ON, first, min(last, chosen_through))]


def period_json(period: Period) -> dict[str, object]:
    """One named part of the track record: its days and the screen's rows over them."""
    result = period.result
    return {
        "name": period.name,
        "from": period.dates[0].isoformat() if period.dates else None,
        "to": period.dates[-1].isoformat() if period.dates else None,
        "as_of_days": len(period.dates),
        "horizons": []
        if result is None
        else [horizon_json(h, per_date=False) for h in result.horizons],
    }


def track_record(evaluation: Evaluation, chosen_through: date | None = None) -> dict[str, object]:
    """The ``/evidence`` body (without ``published_at``): the screen's rules only; with
    ``chosen_through``, its periods (the evaluation must have been run with them)."""
    from pairscreen.evaluation.report import comparisons

    screen = evaluation.results[0]
    through = evaluation.data_through
    body: dict[str, object] = {
        "from": evaluation.dates[0].isoformat(),
        "to": evaluation.dates[-1].isoformat(),
        "data_through": None if through is None else through.isoformat(),
        "as_of_days": len(evaluation.dates),
        "every_days": evaluation.every_days,
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
        "horizons": [horizon_json(h, per_date=False) for h in screen.horizons],
        "warnings": list(evaluation.warnings),
        "calibration": None if evaluation.calibration is None else evaluation.calibration.as_json(),
        **portfolio_line(evaluation),
    }
    if chosen_through is not None:
        body["defaults_chosen_through"] = chosen_through.isoformat()
        body["periods"] = [period_json(p) for p in evaluation.periods]
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
    every_days: int = EVERY_DAYS,
    horizons: Sequence[int] = HORIZONS,
    start: date | None = None,
    end: date | None = None,
    on_progress: Progress | None = None,
    portfolio: PortfolioSpec | None = None,
) -> TrackRecord:
    """Evaluate the screen's current rules over the default range (or ``start`` … ``end``),
    with the portfolio of picks traded with the screen's strategy when ``portfolio`` is given.

    Raises ``ValueError`` with a sentence when there is nothing to evaluate.
    """
    from pairscreen.evaluation.dates import as_of_dates
    from pairscreen.evaluation.rule_sets import rule_sets
    from pairscreen.evaluation.run import evaluate
    from pairscreen.evaluation.verdicts import Market
    from pairscreen.pegs.status import active_depegs

    candles = rt.candles.get()
    if not candles:
        raise ValueError("no candles stored: run 'pairscreen data sync' first")
    first, last = default_range(candles, rt.settings.window_days, horizons)
    start, end = start or first, end or min(last, clock.today() - timedelta(days=1))
    dates = as_of_dates(start, end, every_days)
    market = Market.of(
        rt.universe,
        candles,
        window_days=rt.settings.window_days,
        min_history_days=rt.settings.min_history_days,
        sample=sample,
        scorer=rt.settings.scorer if portfolio is not None else None,
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
        horizons,
        every_days=every_days,
        fee=fee,
        depegs_at=active_depegs,
        persistence_screens=rt.settings.persistence_screens,
        on_progress=on_progress,
        periods=split_periods(chosen_through, dates[0], dates[-1]),
        costs=rt.universe.costs,
        strategy=strategy,
        portfolio=portfolio,
        processes=rt.settings.screen_processes,
    )
    return TrackRecord(result, track_record(result, chosen_through))
