"""An evaluation for people (a terminal table) and for programs (one JSON object)."""

from __future__ import annotations

from pairscreen.evaluation.run import Evaluation, HorizonResult
from pairscreen.evaluation.statistics import Difference, GroupSummary


def as_json(evaluation: Evaluation) -> dict[str, object]:
    """The ``--json`` object: settings, warnings, and per rule set its days and horizons."""
    return {
        "from": evaluation.dates[0].isoformat() if evaluation.dates else None,
        "to": evaluation.dates[-1].isoformat() if evaluation.dates else None,
        "every_days": evaluation.every_days,
        "horizons": list(evaluation.horizons),
        "fee": evaluation.fee,
        "pairs_screened": evaluation.n_pairs,
        "warnings": list(evaluation.warnings),
        "rule_sets": [
            {
                "name": result.rule_set.name,
                "description": result.rule_set.description,
                "thresholds": dict(result.rule_set.thresholds),
                "stability": result.stability,
                "per_date": list(result.per_date),
                "horizons": [_horizon_json(h) for h in result.horizons],
            }
            for result in evaluation.results
        ],
    }


def _horizon_json(result: HorizonResult) -> dict[str, object]:
    return {
        "horizon_days": result.horizon,
        "reversion": {
            "survivors": result.survivors.as_json(),
            "rest": result.rest.as_json(),
            "difference": result.difference.as_json(),
        },
        "hold_value": {
            "survivors": result.survivors_hold.as_json(),
            "rest": result.rest_hold.as_json(),
            "difference": result.hold_difference.as_json(),
        },
        "per_date_difference": list(result.per_date),
    }


def table(evaluation: Evaluation) -> str:
    """One line per rule set and horizon: survivors and rest (n, mean, median, hit rate of
    the move back toward the range) and their difference with its 95 % interval."""
    dates = evaluation.dates
    lines = [
        f"{len(dates)} as-of days from {dates[0]} to {dates[-1]} every {evaluation.every_days} "
        f"days, {evaluation.n_pairs} pairs; outcome: move of the log-ratio back toward the "
        f"range (pp), zones bottom and top only; fee {evaluation.fee:.2%} per swap",
        "",
        f"{'rule set':<30}{'h':>4} {'survivors n/mean/med/hit':>27} {'rest n/mean/med/hit':>27}"
        f" {'difference [95% CI]':>25} {'surv/day':>8} {'stable':>6}",
    ]
    for result in evaluation.results:
        per_day = [int(d["survivors"]) for d in result.per_date]  # type: ignore[call-overload]
        mean_survivors = sum(per_day) / len(per_day) if per_day else 0.0
        stable = "-" if result.stability is None else f"{result.stability:.0%}"
        for h in result.horizons:
            lines.append(
                f"{result.rule_set.name[:29]:<30}{h.horizon:>4} "
                f"{_group(h.survivors):>27} {_group(h.rest):>27} "
                f"{_difference(h.difference):>25} {mean_survivors:>8.1f} {stable:>6}"
            )
    if evaluation.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in evaluation.warnings)
    return "\n".join(lines)


def _pp(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f}"


def _group(group: GroupSummary) -> str:
    hit = "-" if group.hit_rate is None else f"{group.hit_rate:.0%}"
    return f"{group.n} / {_pp(group.mean)} / {_pp(group.median)} / {hit}"


def _difference(diff: Difference) -> str:
    if diff.estimate is None:
        return "-"
    if diff.low is None:
        return f"{_pp(diff.estimate)} [-]"
    return f"{_pp(diff.estimate)} [{_pp(diff.low)}, {_pp(diff.high)}]"
