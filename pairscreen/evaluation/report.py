"""An evaluation for people (a terminal table) and for programs (one JSON object)."""

from __future__ import annotations

from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.evaluation.dates import day_of_point, in_days, in_hours, iso, spell
from pairscreen.evaluation.portfolio import horizon_units
from pairscreen.evaluation.run import Evaluation, HorizonResult, RuleSetResult
from pairscreen.evaluation.statistics import (
    EVIDENCE,
    NO_EVIDENCE,
    TOO_FEW,
    Difference,
    GroupSummary,
)
from pairscreen.wording import plural

READINGS = {EVIDENCE: "evidence", NO_EVIDENCE: "no evidence", TOO_FEW: "too few obs."}


def as_json(evaluation: Evaluation) -> dict[str, object]:
    """The ``--json`` object: settings, warnings, and per rule set its days and horizons.
    On an intraday universe the day fields hold days (fractional for spans; ``from``, ``to``
    and ``data_through`` the days their bars belong to) and :func:`bar_fields` adds the bar,
    the closes and the spans in bars and hours."""
    sampled = evaluation.n_pairs < evaluation.pairs_in_universe
    through, calibration = evaluation.data_through, evaluation.calibration
    bar = evaluation.bar
    return {
        "from": day_of_point(evaluation.dates[0]).isoformat() if evaluation.dates else None,
        "to": day_of_point(evaluation.dates[-1]).isoformat() if evaluation.dates else None,
        "every_days": in_days_or_count(evaluation.every_days, bar),
        "horizons": [in_days_or_count(h, bar) for h in evaluation.horizons],
        **bar_fields(evaluation),
        "fee": evaluation.fee,
        "pairs_screened": evaluation.n_pairs,
        "pairs_in_universe": evaluation.pairs_in_universe,
        "sampled": sampled,
        "persistence_screens": evaluation.persistence_screens,
        "comparisons": comparisons(evaluation),
        "families": families(evaluation),
        "warnings": list(evaluation.warnings),
        "data_through": None if through is None else day_of_point(through).isoformat(),
        "calibration": None if calibration is None else calibration.as_json(),
        **_traded(evaluation),
        "rule_sets": [
            {
                "name": result.rule_set.name,
                "description": result.rule_set.description,
                "thresholds": dict(result.rule_set.thresholds),
                "screen_rules": dict(result.rule_set.screen_wide),
                "never_binds": result.never_binds,
                "stability": result.stability,
                "per_date": list(result.per_date),
                "horizons": [horizon_json(h, bar=bar) for h in result.horizons],
            }
            for result in evaluation.results
        ],
    }


def in_days_or_count(bars: int, bar: BarSize) -> int | float:
    """A count of bars in days: the count itself on a daily universe (as it always was)."""
    return in_days(bars, bar) if bar.intraday else bars


def bar_fields(evaluation: Evaluation) -> dict[str, object]:
    """On an intraday universe only: the bar, the first and last as-of close and the newest
    close read, the step and the horizons in bars and hours."""
    bar, dates, through = evaluation.bar, evaluation.dates, evaluation.data_through
    if not bar.intraday:
        return {}
    return {
        "bar": bar.name,
        "from_close": iso(dates[0]) if dates else None,
        "to_close": iso(dates[-1]) if dates else None,
        "data_through_close": None if through is None else iso(through),
        "every_bars": evaluation.every_days,
        "every_hours": in_hours(evaluation.every_days, bar),
        "horizons_bars": list(evaluation.horizons),
        "horizons_hours": [in_hours(h, bar) for h in evaluation.horizons],
    }


def _traded(evaluation: Evaluation) -> dict[str, object]:
    """What ``--outcome strategy`` and ``--portfolio`` add (nothing for the default run, whose
    object stays as it was): the outcome, the strategy traded, whether ``[costs]`` priced the
    outcomes, and the portfolio per horizon."""
    out: dict[str, object] = {}
    if evaluation.outcome != "reversion" or evaluation.portfolio:
        out["outcome"] = evaluation.outcome
        out["strategy"] = evaluation.strategy
        out["costs_set"] = evaluation.costs_set
    if evaluation.portfolio:
        out["portfolio"] = [p.as_json() for p in evaluation.portfolio]
    return out


def comparisons(evaluation: Evaluation) -> int:
    """How many rule set x horizon differences have a p-value (both families, and the
    rows the observation rules refuse)."""
    return sum(
        1
        for result in evaluation.results
        for h in result.horizons
        if h.difference.p_value is not None
    )


def families(evaluation: Evaluation) -> dict[str, int]:
    """The sizes of the two families: the screen's own rules over their horizons
    (``primary``, a fixed sequence, the shortest horizon first) and every other rule set
    and horizon (``exploratory``, Holm), each adjusted on its own over the rows the
    observation rules let be tested."""
    sizes = [
        sum(1 for h in result.horizons if h.difference.p_holm is not None)
        for result in evaluation.results
    ]
    return {"primary": sum(sizes[:1]), "exploratory": sum(sizes[1:])}


def horizon_json(
    result: HorizonResult, *, per_date: bool = True, bar: BarSize = DAILY
) -> dict[str, object]:
    """One horizon's measures as JSON; ``per_date`` adds the difference of every as-of day
    (the CLI's report has it, the published track record leaves it out); on an intraday
    ``bar`` the horizon in days is fractional, with its bars and hours beside it."""
    out: dict[str, object] = {
        "horizon_days": in_days_or_count(result.horizon, bar),
        **horizon_units(result.horizon, bar),
    }
    for name, comparison in result.measures.items():
        out[name] = {
            "survivors": comparison.survivors.as_json(),
            "rest": comparison.rest.as_json(),
            "difference": comparison.difference.as_json(),
        }
    if per_date:
        out["per_date_difference"] = list(result.per_date)
    out["warnings"] = list(result.warnings)
    return out


def table(evaluation: Evaluation) -> str:
    """One line per rule set and horizon: survivors and rest (n, mean, median, hit rate of
    the move back toward the range), their difference with its 95 % interval, its p-value,
    adjusted p-value and reading; then the holding values of the screen's rules."""
    dates = evaluation.dates
    sample = (
        f" (a sample of {evaluation.n_pairs} of {plural(evaluation.pairs_in_universe, 'pair')})"
        if evaluation.n_pairs < evaluation.pairs_in_universe
        else ""
    )
    outcome = (
        f"outcome: the {evaluation.strategy} strategy's log return over holding both legs "
        "50/50 (pp)"
        if evaluation.outcome == "strategy"
        else "outcome: move of the log-ratio back toward the range (pp)"
    )
    costs = " plus the universe's [costs]" if evaluation.costs_set else ""
    bar = evaluation.bar
    points = (
        f"{plural(len(dates), 'as-of close')} of {bar.name} bars from {iso(dates[0])} to "
        f"{iso(dates[-1])} every {spell(evaluation.every_days, bar)} "
        f"({plural(evaluation.every_days, 'bar')})"
        if bar.intraday
        else f"{plural(len(dates), 'as-of day')} from {dates[0]} to {dates[-1]} every "
        f"{plural(evaluation.every_days, 'day')}"
    )
    lines = [
        f"{points}, {plural(evaluation.n_pairs, 'pair')}{sample}; "
        f"{outcome}, zones bottom and top only; fee {evaluation.fee:.2%} per swap{costs}",
        "",
        f"{'rule set':<30}{'h':>{_w(bar)}} {'survivors n/mean/med/hit':>27} "
        f"{'rest n/mean/med/hit':>27}"
        f" {'difference [95% CI]':>25} {'p':>6} {'p_holm':>6} {'reading':>14}"
        f" {'surv/day':>8} {'stable':>6}",
    ]
    notes: list[str] = []
    for result in evaluation.results:
        name = result.rule_set.name
        if result.never_binds:
            lines.append(f"{name[:29]:<30}   never binds: the screen's survivors on every day")
            continue
        per_day = [int(d["survivors"]) for d in result.per_date]  # type: ignore[call-overload]
        mean_survivors = sum(per_day) / len(per_day) if per_day else 0.0
        stable = "-" if result.stability is None else f"{result.stability:.0%}"
        for h in result.horizons:
            diff = h.difference
            lines.append(
                f"{name[:29]:<30}{_h(h.horizon, bar):>{_w(bar)}} "
                f"{_group(h.measures[h.primary].survivors):>27} "
                f"{_group(h.measures[h.primary].rest):>27} "
                f"{_difference(diff):>25} {_p(diff.p_value):>6} {_p(diff.p_holm):>6} "
                f"{READINGS[diff.reading]:>14} {mean_survivors:>8.1f} {stable:>6}"
            )
            notes.extend(f"{name}, {spell(h.horizon, bar)}: {w}" for w in h.warnings)
    family = families(evaluation)
    horizons = len(evaluation.results[0].horizons) if evaluation.results else 0
    lines += [
        "",
        f"evidence: adjusted one-sided p below 5 % (the screen's rules over the "
        f"{family['primary']} of their {horizons} horizons with enough observations, the "
        "primary family, in a fixed sequence: the "
        "shortest horizon at 5 %, each longer one at 5 % while the shorter ones are "
        f"evidence; the other {family['exploratory']} rows, exploratory, Holm-adjusted "
        "among themselves) and enough observations (at least 30 survivor observations, 8 "
        "independent periods, no pair above 25 % of the survivors); difference: survivors "
        "minus the other pairs of the same zones, within each as-of day; surv/day: survivors "
        "per as-of day; stable: the mean share of an as-of day's survivors that survive the "
        "next one",
    ]
    if evaluation.results and evaluation.results[0].horizons:
        lines += ["", _holding(evaluation.results[0], bar)]
        if evaluation.outcome == "strategy":
            lines += ["", _strategy(evaluation.results[0], bar)]
    if evaluation.portfolio:
        lines += ["", _portfolio(evaluation)]
    if notes:
        lines.append("")
        lines.extend(f"too few observations: {n}" for n in notes)
    if evaluation.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in evaluation.warnings)
    return "\n".join(lines)


def _h(bars: int, bar: BarSize) -> str:
    """A horizon in a table's ``h`` column: days as a number (as always), ``24 h`` on bars."""
    return spell(bars, bar) if bar.intraday else str(bars)


def _w(bar: BarSize) -> int:
    """The width of the ``h`` column: 4 for days (as always), 7 for ``168 h``."""
    return 7 if bar.intraday else 4


def _holding(screen: RuleSetResult, bar: BarSize = DAILY) -> str:
    """The screen's holding values: the cheap leg against the other one, in log points."""
    return _two_measures(
        screen,
        "holding for the horizon, rule set {name} (log points, fees included; mean / median):",
        ("hold_value", "cheap leg"),
        ("hold_other_leg", "other leg"),
        bar,
    )


def _strategy(screen: RuleSetResult, bar: BarSize = DAILY) -> str:
    """The screen's strategy outcomes: its log return and holding both legs, per group."""
    return _two_measures(
        screen,
        "trading the strategy for the horizon, rule set {name} (log points, fees and costs "
        "included; mean / median):",
        ("strategy_return", "strategy"),
        ("hold_both", "both legs"),
        bar,
    )


def _two_measures(
    screen: RuleSetResult,
    title: str,
    first: tuple[str, str],
    second: tuple[str, str],
    bar: BarSize = DAILY,
) -> str:
    """Two measures side by side per horizon, survivors then the rest: (measure, label)."""
    lines = [
        title.format(name=repr(screen.rule_set.name)),
        f"{'h':>{_w(bar)}} {'survivors: ' + first[1]:>22} {second[1]:>16} {'rest: ' + first[1]:>18}"
        f" {second[1]:>16}",
    ]
    for h in screen.horizons:
        one, two = h.measures[first[0]], h.measures[second[0]]
        lines.append(
            f"{_h(h.horizon, bar):>{_w(bar)}} {_mean_median(one.survivors):>22} "
            f"{_mean_median(two.survivors):>16} {_mean_median(one.rest):>18} "
            f"{_mean_median(two.rest):>16}"
        )
    return "\n".join(lines)


def _portfolio(evaluation: Evaluation) -> str:
    """The portfolio of picks per horizon beside random in-zone pairs and the universe."""
    first = evaluation.portfolio[0]
    limit = (
        "no limit per asset"
        if first.max_per_asset is None
        else (f"at most {plural(first.max_per_asset, 'pair')} per asset")
    )
    lines = [
        f"portfolio: the top {first.size} survivors in the zones by score, {limit}, traded "
        f"with the {evaluation.strategy} strategy, equal weight (log points per horizon; "
        "Sharpe annualised over 365 days; drawdown of the compounded path of as-of days one "
        "horizon apart, the worst chain; costs: fees and [costs] a pick paid, pp):",
        f"{'h':>{_w(evaluation.bar)}} {'mean [95% CI]':>24}"
        f" {'Sharpe':>7} {'max DD':>7} {'picks':>6}"
        f" {'turnover':>8} {'costs':>6} {'random mean [95% range]':>26} {'p':>6}"
        f" {'universe mean':>13} {'Sharpe':>7}",
    ]
    width = _w(evaluation.bar)
    for p in evaluation.portfolio:
        band = (
            f"{_pp(p.null_mean)} [{_pp(p.null_ci95[0])}, {_pp(p.null_ci95[1])}]"
            if p.null_ci95 is not None
            else "-"
        )
        lines.append(
            f"{_h(p.horizon, evaluation.bar):>{width}} "
            f"{_interval(p.picks.mean, p.picks.low, p.picks.high):>24} "
            f"{_ratio(p.picks.sharpe):>7} {_share(p.picks.max_drawdown):>7} "
            f"{_ratio(p.mean_picks):>6} {_share(p.turnover):>8} {_cost(p.costs_paid):>6} "
            f"{band:>26} {_p(p.p_vs_null):>6} {_pp(p.universe.mean):>13} "
            f"{_ratio(p.universe.sharpe):>7}"
        )
    lines.append(
        f"random: {first.null_draws} draws of as many in-zone pairs each day under the same "
        "per-asset limit; p: share of draws whose mean reaches the portfolio's"
    )
    return "\n".join(lines)


def _interval(mean: float | None, low: float | None, high: float | None) -> str:
    if mean is None:
        return "-"
    return f"{_pp(mean)} [-]" if low is None else f"{_pp(mean)} [{_pp(low)}, {_pp(high)}]"


def _cost(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.2f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _mean_median(group: GroupSummary) -> str:
    return f"{_pp(group.mean)} / {_pp(group.median)}"


def _pp(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _group(group: GroupSummary) -> str:
    hit = "-" if group.hit_rate is None else f"{group.hit_rate:.0%}"
    return f"{group.n} / {_pp(group.mean)} / {_pp(group.median)} / {hit}"


def _difference(diff: Difference) -> str:
    if diff.estimate is None:
        return "-"
    if diff.reading == TOO_FEW:
        return "too few observations"
    if diff.low is None:
        return f"{_pp(diff.estimate)} [-]"
    return f"{_pp(diff.estimate)} [{_pp(diff.low)}, {_pp(diff.high)}]"
