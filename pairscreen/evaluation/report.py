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


def comparisons(evaluation: Evaluation) -> int:
    """How many rule set x horizon differences have a p-value (both Holm families, and the
    rows the observation rules refuse)."""
    return sum(
        1
        for result in evaluation.results
        for h in result.horizons
        if h.difference.p_value is not None
    )


def families(evaluation: Evaluation) -> dict[str, int]:
    """The sizes of the two Holm families: the screen's own rules over their horizons
    (``primary``) and every other rule set and horizon (``exploratory``), each adjusted on
    its own over the rows the observation rules let be tested."""
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
    Holm-adjusted p-value and reading; then the holding values of the screen's rules."""
    dates = evaluation.dates
    sample = (
        f" (a sample of {evaluation.n_pairs} of {plural(evaluation.pairs_in_universe, 'pair')})"
        if evaluation.n_pairs < evaluation.pairs_in_universe
        else ""
    )
    lines = [
        f"{plural(len(dates), 'as-of day')} from {dates[0]} to {dates[-1]} every "
        f"{plural(evaluation.every_days, 'day')}, {plural(evaluation.n_pairs, 'pair')}{sample}; "
        "outcome: move of the log-ratio back toward "
        f"the range (pp), zones bottom and top only; fee {evaluation.fee:.2%} per swap",
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
                f"{_group(h.measures['reversion'].survivors):>27} "
                f"{_group(h.measures['reversion'].rest):>27} "
                f"{_difference(diff):>25} {_p(diff.p_value):>6} {_p(diff.p_holm):>6} "
                f"{READINGS[diff.reading]:>14} {mean_survivors:>8.1f} {stable:>6}"
            )
            notes.extend(f"{name}, {h.horizon} days: {w}" for w in h.warnings)
    family = families(evaluation)
    lines += [
        "",
        f"evidence: Holm-adjusted p below 5 % (the screen's rules over their "
        f"{family['primary']} horizons, the primary family; the other "
        f"{family['exploratory']} rows, exploratory, among themselves), the interval "
        "excluding zero, and enough observations (at least 30 survivor observations, 8 "
        "independent periods, no pair above 25 % of the survivors); difference: survivors "
        "minus the other pairs of the same zones, within each as-of day",
    ]
    if evaluation.results and evaluation.results[0].horizons:
        lines += ["", _holding(evaluation.results[0])]
    if notes:
        lines.append("")
        lines.extend(f"too few observations: {n}" for n in notes)
    if evaluation.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in evaluation.warnings)
    return "\n".join(lines)


def _holding(screen: RuleSetResult) -> str:
    """The screen's holding values: the cheap leg against the other one, in log points."""
    lines = [
        f"holding for the horizon, rule set {screen.rule_set.name!r} (log points, fees "
        "included; mean / median):",
        f"{'h':>4} {'survivors: cheap leg':>22} {'other leg':>16} {'rest: cheap leg':>18}"
        f" {'other leg':>16}",
    ]
    for h in screen.horizons:
        cheap, other = h.measures["hold_value"], h.measures["hold_other_leg"]
        lines.append(
            f"{h.horizon:>4} {_mean_median(cheap.survivors):>22} "
            f"{_mean_median(other.survivors):>16} {_mean_median(cheap.rest):>18} "
            f"{_mean_median(other.rest):>16}"
        )
    return "\n".join(lines)


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
