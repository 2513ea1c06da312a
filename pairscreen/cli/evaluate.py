"""``evaluate``: how survivors of past screens behaved afterwards, against the rest."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pairscreen import clock
from pairscreen.cli.common import CommandError, open_runtime
from pairscreen.cli.progress import ProgressDisplay
from pairscreen.contracts.bars import require_daily

if TYPE_CHECKING:
    from pairscreen.evaluation.run import Evaluation
    from pairscreen.runtime import Runtime

DEFAULT_EVERY = 30
DEFAULT_HORIZONS = "30,90"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "evaluate",
        help="test screen rules out of sample: survivors' later moves against the rest",
        description="Screen the stored candles as of every --every days from --from to --to "
        "(each day sees only candles up to it) under the screen's rules, the rules without "
        "each single rule, and each --rules file; compare what survivors and the other pairs "
        "in the bottom and top zones did over each horizon.",
    )
    run.add_argument(
        "--from",
        dest="start",
        metavar="DATE",
        help="first as-of day (YYYY-MM-DD; default: the first day with a full window)",
    )
    run.add_argument(
        "--to",
        dest="end",
        metavar="DATE",
        help="last as-of day (YYYY-MM-DD; default: the last day the shortest horizon can "
        "follow, also when only --from is given; a longer horizon leaves out the days it "
        "cannot follow)",
    )
    run.add_argument(
        "--every",
        metavar="DAYS",
        default=str(DEFAULT_EVERY),
        help=f"days between as-of days (default {DEFAULT_EVERY})",
    )
    run.add_argument(
        "--horizon",
        metavar="DAYS[,DAYS...]",
        default=DEFAULT_HORIZONS,
        help=f"forward horizons in days (default {DEFAULT_HORIZONS})",
    )
    run.add_argument(
        "--rules",
        metavar="FILE",
        action="append",
        default=[],
        type=Path,
        help="a TOML file with a [screen] table (filter and thresholds) to evaluate too; "
        "repeatable (default: none)",
    )
    run.add_argument(
        "--sample",
        metavar="N",
        help="evaluate a random N of the universe's pairs (fixed seed; default: every pair)",
    )
    run.add_argument(
        "--outcome",
        choices=("reversion", "strategy"),
        default="reversion",
        help="what is compared: 'reversion', the log-ratio's move back toward the range, or "
        "'strategy', the configured strategy traded from each as-of day for the horizon "
        "(net of its fee and the universe's [costs]) against holding both legs 50/50 "
        "(default reversion)",
    )
    run.add_argument(
        "--portfolio",
        metavar="N",
        help="also trade, at each as-of day, the top N survivors in the zones by score with "
        "the strategy, equal weight, beside N random in-zone pairs and the universe held "
        "equally (default: no portfolio)",
    )
    run.add_argument(
        "--max-per-asset",
        metavar="K",
        help="with --portfolio: no asset in more than K of the N pairs (default: no limit)",
    )
    run.add_argument(
        "--publish",
        action="store_true",
        help="evaluate the screen's current rules only and publish the result as the "
        "track record served by GET /evidence, with the portfolio line when --portfolio is "
        "given (default: print only)",
    )
    run.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")
    run.add_argument(
        "--plot", metavar="FILE.png", type=Path, help="draw the differences (default: no plot)"
    )
    run.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> None:
    from pairscreen.evaluation.dates import as_of_dates
    from pairscreen.evaluation.plot import plot_differences
    from pairscreen.evaluation.portfolio import PortfolioSpec
    from pairscreen.evaluation.report import as_json, table
    from pairscreen.evaluation.track_record import evaluate_current_rules
    from pairscreen.screen_store.evidence import publish

    every = _whole(args.every, "--every")
    horizons = [_whole(h, "--horizon") for h in str(args.horizon).split(",") if h.strip()]
    if not horizons:
        raise CommandError("--horizon needs at least one number of days, e.g. 30,90")
    sample = _whole(args.sample, "--sample", "pair") if args.sample is not None else None
    size = _whole(args.portfolio, "--portfolio", "pair") if args.portfolio is not None else None
    limit = (
        _whole(args.max_per_asset, "--max-per-asset", "pair")
        if args.max_per_asset is not None
        else None
    )
    if limit is not None and size is None:
        raise CommandError("--max-per-asset limits a portfolio: give --portfolio N too")
    if args.publish and args.outcome != "reversion":
        raise CommandError(
            "--publish stores the reversion track record (with --portfolio, its portfolio "
            "line): run --outcome strategy without --publish"
        )
    if args.publish and args.rules:
        raise CommandError(
            "--publish stores the evaluation of the screen's current rules: run --rules "
            "without --publish"
        )
    rt = open_runtime(args)
    require_daily(rt.universe.bar, "evaluate")
    settings = rt.settings
    candles = rt.candles.get()
    if not candles:
        raise CommandError("no candles stored: run 'pairscreen data sync' first")
    oldest = min(c.dates[0] for c in candles.values()).astype("datetime64[D]").item()
    newest = max(c.dates[-1] for c in candles.values()).astype("datetime64[D]").item()
    start, end = _span(args, oldest, newest, settings.window_days, min(horizons))
    dates = as_of_dates(start, end, every)
    if args.publish:
        with ProgressDisplay(quiet=args.quiet) as display:
            record = evaluate_current_rules(
                rt,
                sample=sample,
                every_days=every,
                horizons=horizons,
                start=start,
                end=end,
                on_progress=display.step("as-of days"),
                portfolio=None if size is None else PortfolioSpec(size, limit),
            )
        evidence_id = publish(record.body, record.first_day, record.last_day, clock.now())
        result = record.evaluation
        print(f"published {record.summary(evidence_id)}", file=sys.stderr)
    else:
        result = _run(rt, args, dates, horizons, every, sample, size, limit)
    if args.plot:
        plot_differences(result, args.plot)
    if args.json:
        print(json.dumps(as_json(result), allow_nan=False))
    else:
        print(table(result))


def _run(
    rt: Runtime,
    args: argparse.Namespace,
    dates: list[date],
    horizons: list[int],
    every: int,
    sample: int | None,
    size: int | None,
    limit: int | None,
) -> Evaluation:
    from pairscreen.evaluation.portfolio import PortfolioSpec
    from pairscreen.evaluation.rule_sets import rule_sets
    from pairscreen.evaluation.run import evaluate
    from pairscreen.evaluation.verdicts import Market
    from pairscreen.pegs.status import active_depegs

    settings = rt.settings
    market = Market.of(
        rt.universe,
        rt.candles.get(),
        window_days=settings.window_days,
        min_history_days=settings.min_history_days,
        sample=sample,
        scorer=settings.scorer if size is not None else None,
    )
    sets = rule_sets(rt.plugins, rt.universe, args.rules)
    strategy = rt.plugins.strategies.get(settings.strategy)
    fee = float(getattr(strategy, "fee", 0.0))
    if not hasattr(strategy, "fee"):
        print(
            f"pairscreen: warning: strategy {strategy.name!r} declares no fee; holding values "
            "are computed without fees",
            file=sys.stderr,
        )
    with ProgressDisplay(quiet=args.quiet) as display:
        return evaluate(
            rt.plugins,
            market,
            sets,
            dates,
            horizons,
            every_days=every,
            fee=fee,
            depegs_at=active_depegs,
            persistence_screens=settings.persistence_screens,
            on_progress=display.step("as-of days"),
            costs=rt.universe.costs,
            outcome=args.outcome,
            strategy=strategy,
            portfolio=None if size is None else PortfolioSpec(size, limit),
            processes=settings.screen_processes,
        )


def _span(
    args: argparse.Namespace, oldest: date, newest: date, window_days: int, horizon: int
) -> tuple[date, date]:
    """The first and last as-of day: as given, else the first day with a full window and the
    last day the shortest horizon (``horizon``) can follow: each horizon uses every day it
    can follow, a longer one leaves out the last days. One given alone is checked against
    the other's default, with a sentence saying which days would work."""
    first_full = oldest + timedelta(days=window_days)
    last_followed = newest - timedelta(days=horizon)
    start = _day(args.start, "--from") if args.start else first_full
    end = _day(args.end, "--to") if args.end else last_followed
    if start >= clock.today():
        raise CommandError(f"--from {start} has not closed yet; give a day before today")
    if end >= clock.today():
        raise CommandError(f"--to {end} has not closed yet; give a day before today")
    if args.start and not args.end and start > end:
        raise CommandError(
            f"--from {start} leaves no as-of day: the shortest horizon ({horizon} days) can "
            f"follow days up to {last_followed} only (newest close {newest}); give --from "
            f"{last_followed} or earlier, or a shorter --horizon"
        )
    if args.end and not args.start and end < start:
        raise CommandError(
            f"--to {end} leaves no as-of day: the first day with a full {window_days}-day "
            f"window is {first_full} (oldest close {oldest}); give --to {first_full} or later, "
            "or an earlier --from"
        )
    return start, end


def _whole(text: str, flag: str, unit: str = "day") -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise CommandError(f"{flag} {text!r} is not a whole number of {unit}s") from None
    if value < 1:
        raise CommandError(f"{flag} must be at least 1 {unit}, got {value}")
    return value


def _day(text: str, flag: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{flag} {text!r} is not a date (YYYY-MM-DD)") from None
