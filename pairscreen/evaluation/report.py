"""An evaluation for people (a terminal table) and for programs (one JSON object)."""

from __future__ import annotations

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
    """The ``--json`` object: settings, warnings, and per rule set its days and horizons."""
    sampled = evaluation.n_pairs < evaluation.pairs_in_universe
    through, calibration = evaluation.data_through, evaluation.calibration
    return {
        "from": evaluation.dates[0].isoformat() if evaluation.dates else None,
        "to": evaluation.dates[-1].isoformat() if evaluation.dates else None,
        "every_days": evaluation.every_days,
        "horizons": list(evaluation.horizons),
        "fee": evaluation.fee,
        "pairs_screened": evaluation.n_pairs,
        "pairs_in_universe": evaluation.pairs_in_universe,
        "sampled": sampled,
        "persistence_screens": evaluation.persistence_screens,
        "comparisons": comparisons(evaluation),
        "families": families(evaluation),
        "warnings": list(evaluation.warnings),
        "data_through": None if through is None else through.isoformat(),
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
                "horizons": [horizon_json(h) for h in result.horizons],
            }
            for result in evaluation.results
        ],
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


def horizon_json(result: HorizonResult, *, per_date: bool = True) -> dict[str, object]:
    """One horizon's measures as JSON; ``per_date`` adds the difference of every as-of day
    (the CLI's report has it, the published track record leaves it out)."""
    out: dict[str, object] = {"horizon_days": result.horizon}
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
    lines = [
        f"{plural(len(dates), 'as-of day')} from {dates[0]} to {dates[-1]} every "
        f"{plural(evaluation.every_days, 'day')}, {plural(evaluation.n_pairs, 'pair')}{sample}; "
        f"{outcome}, zones bottom and top only; fee {evaluation.fee:.2%} per swap{costs}",
        "",
        f"{'rule set':<30}{'h':>4} {'survivors n/mean/med/hit':>27} {'rest n/mean/med/hit':>27}"
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
                f"{name[:29]:<30}{h.horizon:>4} "
                f"{_group(h.measures[h.primary].survivors):>27} "
                f"{_group(h.measures[h.primary].rest):>27} "
                f"{_difference(diff):>25} {_p(diff.p_value):>6} {_p(diff.p_holm):>6} "
                f"{READINGS[diff.reading]:>14} {mean_survivors:>8.1f} {stable:>6}"
            )
            notes.extend(f"{name}, {h.horizon} days: {w}" for w in h.warnings)
    family = families(evaluation)
    lines += [
        "",
        f"evidence: adjusted one-sided p below 5 % (the screen's rules over their "
        f"{family['primary']} horizons, the primary family, in a fixed sequence: the "
        "shortest horizon at 5 %, each longer one at 5 % while the shorter ones are "
        f"evidence; the other {family['exploratory']} rows, exploratory, Holm-adjusted "
        "among themselves) and enough observations (at least 30 survivor observations, 8 "
        "independent periods, no pair above 25 % of the survivors); difference: survivors "
        "minus the other pairs of the same zones, within each as-of day",
    ]
    if evaluation.results and evaluation.results[0].horizons:
        lines += ["", _holding(evaluation.results[0])]
        if evaluation.outcome == "strategy":
            lines += ["", _strategy(evaluation.results[0])]
    if evaluation.portfolio:
        lines += ["", _portfolio(evaluation)]
    if notes:
        lines.append("")
        lines.extend(f"too few observations: {n}" for n in notes)
    if evaluation.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in evaluation.warnings)
    return "\n".join(lines)


def _holding(screen: RuleSetResult) -> str:
    """The screen's holding values: the cheap leg against the other one, in log points."""
    return _two_measures(
        screen,
        "holding for the horizon, rule set {name} (log points, fees included; mean / median):",
        ("hold_value", "cheap leg"),
        ("hold_other_leg", "other leg"),
    )


def _strategy(screen: RuleSetResult) -> str:
    """The screen's strategy outcomes: its log return and holding both legs, per group."""
    return _two_measures(
        screen,
        "trading the strategy for the horizon, rule set {name} (log points, fees and costs "
        "included; mean / median):",
        ("strategy_return", "strategy"),
        ("hold_both", "both legs"),
    )


def _two_measures(
    screen: RuleSetResult, title: str, first: tuple[str, str], second: tuple[str, str]
) -> str:
    """Two measures side by side per horizon, survivors then the rest: (measure, label)."""
    lines = [
        title.format(name=repr(screen.rule_set.name)),
        f"{'h':>4} {'survivors: ' + first[1]:>22} {second[1]:>16} {'rest: ' + first[1]:>18}"
        f" {second[1]:>16}",
    ]
    for h in screen.horizons:
        one, two = h.measures[first[0]], h.measures[second[0]]
        lines.append(
            f"{h.horizon:>4} {_mean_median(one.survivors):>22} "
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
        f"{'h':>4} {'mean [95% CI]':>24} {'Sharpe':>7} {'max DD':>7} {'picks':>6}"
        f" {'turnover':>8} {'costs':>6} {'random mean [95% range]':>26} {'p':>6}"
        f" {'universe mean':>13} {'Sharpe':>7}",
    ]
    for p in evaluation.portfolio:
        band = (
            f"{_pp(p.null_mean)} [{_pp(p.null_ci95[0])}, {_pp(p.null_ci95[1])}]"
            if p.null_ci95 is not None
            else "-"
        )
        lines.append(
            f"{p.horizon:>4} {_interval(p.picks.mean, p.picks.low, p.picks.high):>24} "
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
