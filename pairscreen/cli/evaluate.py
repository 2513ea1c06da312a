"""``evaluate``: how survivors of past screens behaved afterwards, against the rest."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pairscreen import clock
from pairscreen.cli.common import CommandError, open_runtime
from pairscreen.cli.durations import bars_of, has_unit
from pairscreen.cli.progress import ProgressDisplay
from pairscreen.contracts.bars import BarSize, bar_size

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pairscreen.contracts import Candles
    from pairscreen.evaluation.run import Evaluation
    from pairscreen.runtime import Runtime

DEFAULT_EVERY = 30
DEFAULT_HORIZONS = "30,90"
INTRADAY_EVERY = "6h"
INTRADAY_HORIZONS = "24h,72h"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "evaluate",
        help="test screen rules out of sample: survivors' later moves against the rest",
        description="Screen the stored candles as of every --every days from --from to --to "
        "(each day sees only candles up to it) under the screen's rules, the rules without "
        "each single rule, and each --rules file; compare what survivors and the other pairs "
        "in the bottom and top zones did over each horizon. On an intraday universe "
        "([market] bar 4h, 1h, 15m) the as-of points are bar closes, each seeing only the bars "
        "closed by then, and durations may be given in hours (24h) or days (3d).",
    )
    run.add_argument(
        "--from",
        dest="start",
        metavar="DATE",
        help="first as-of day (YYYY-MM-DD; on an intraday universe also a UTC time "
        "YYYY-MM-DDTHH:MM, the last bar closed by then, a date meaning its end; default: the "
        "first day with a full window)",
    )
    run.add_argument(
        "--to",
        dest="end",
        metavar="DATE",
        help="last as-of day (YYYY-MM-DD, or a UTC time on an intraday universe; default: the "
        "last day the shortest horizon can follow, also when only --from is given; a longer "
        "horizon leaves out the days it cannot follow)",
    )
    run.add_argument(
        "--every",
        metavar="N|DURATION",
        help=f"the step between as-of points: days on a daily universe (default "
        f"{DEFAULT_EVERY}); on an intraday universe a bare number counts its bars (6 on a 1h "
        f"universe: 6 hours) and a duration (6h, 1d) must be whole bars (default "
        f"{INTRADAY_EVERY}, one bar on a 4h universe)",
    )
    run.add_argument(
        "--horizon",
        metavar="H[,H...]",
        help=f"forward horizons: days (30), or durations (24h, 3d) that are whole bars of the "
        f"universe (default {DEFAULT_HORIZONS} on a daily universe, {INTRADAY_HORIZONS} on an "
        "intraday one)",
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
    from pairscreen.evaluation.dates import as_of_points
    from pairscreen.evaluation.plot import plot_differences
    from pairscreen.evaluation.portfolio import PortfolioSpec
    from pairscreen.evaluation.report import as_json, table
    from pairscreen.evaluation.scale import oldest_newest, runtime_candles, window_days
    from pairscreen.evaluation.track_record import evaluate_current_rules
    from pairscreen.screen_store.evidence import publish

    sample = _whole(args.sample, "--sample", "pair") if args.sample is not None else None
    size = _whole(args.portfolio, "--portfolio", "pair") if args.portfolio is not None else None
    limit = (
        _whole(args.max_per_asset, "--max-per-asset", "pair")
        if args.max_per_asset is not None
        else None
    )
    if args.plot:
        _check_writable(args.plot)
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
    bar = bar_size(rt.universe.bar)
    every, horizons = _steps(args, bar)
    candles = runtime_candles(rt)
    if not candles:
        raise CommandError("no candles stored: run 'pairscreen data sync' first")
    start: date
    end: date
    if bar.intraday:
        if args.outcome == "strategy" or size is not None:
            _whole_days(horizons, bar)
        start, end = _bar_span(args, candles, window_days(rt), min(horizons), bar)
    else:
        oldest, newest = oldest_newest(candles, bar)
        start, end = _span(args, oldest, newest, window_days(rt), min(horizons))
    try:
        dates = as_of_points(start, end, every, bar)
    except ValueError as error:
        raise CommandError(str(error)) from None
    if args.publish:
        with ProgressDisplay(quiet=args.quiet) as display:
            record = evaluate_current_rules(
                rt,
                sample=sample,
                every_days=every,
                horizons=horizons,
                start=start,
                end=end,
                on_progress=display.step(_points(rt)),
                portfolio=None if size is None else PortfolioSpec(size, limit),
                candles=candles,
            )
        evidence_id = publish(record.body, record.first_day, record.last_day, clock.now())
        result = record.evaluation
        print(f"published {record.summary(evidence_id)}", file=sys.stderr)
    else:
        result = _run(rt, args, candles, dates, horizons, every, sample, size, limit)
        # --publish splits them off as /evidence's periods (the website's in-sample row)
        result = _in_sample_warning(result, rt.settings.defaults_chosen_through)
    if args.plot:
        plot_differences(result, args.plot)
    if args.json:
        print(json.dumps(as_json(result), allow_nan=False))
    else:
        print(table(result))


def _run(
    rt: Runtime,
    args: argparse.Namespace,
    candles: Mapping[str, Candles],
    dates: Sequence[date],
    horizons: list[int],
    every: int,
    sample: int | None,
    size: int | None,
    limit: int | None,
) -> Evaluation:
    from pairscreen.evaluation.portfolio import PortfolioSpec
    from pairscreen.evaluation.rule_sets import rule_sets
    from pairscreen.evaluation.run import evaluate
    from pairscreen.evaluation.scale import runtime_market
    from pairscreen.pegs.status import active_depegs

    settings = rt.settings
    market = runtime_market(
        rt,
        candles,
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
            screen_every_bars=settings.screen_every_bars,
            on_progress=display.step(_points(rt)),
            costs=rt.universe.costs,
            outcome=args.outcome,
            strategy=strategy,
            portfolio=None if size is None else PortfolioSpec(size, limit),
            processes=settings.screen_processes,
        )


def _in_sample_warning(result: Evaluation, chosen_through: date) -> Evaluation:
    """The as-of days up to the last close the default rules were chosen on are in-sample
    for them: a warning says how many (/evidence splits them off as its ``chosen_on``)."""
    from dataclasses import replace

    from pairscreen.evaluation.dates import day_of_point

    inside = sum(day_of_point(point) <= chosen_through for point in result.dates)
    if not inside:
        return result
    points = "as-of closes" if result.bar.intraday else "as-of days"
    line = (
        f"{inside} of the {len(result.dates)} {points} are up to {chosen_through}, the last "
        "close the default rules were chosen on: in-sample for them "
        "(PAIRSCREEN_DEFAULTS_CHOSEN_THROUGH)"
    )
    return replace(result, warnings=(*result.warnings, line))


def _check_writable(plot: Path) -> None:
    """Refuse a ``--plot`` file that cannot be written before the run, not after it: its
    folder must exist and take the file (tried by opening it, which also answers for root
    on a read-only folder; a file that was not there is removed again)."""
    if not plot.parent.is_dir():
        raise CommandError(f"--plot {plot}: no folder {plot.parent} to write it in")
    existed = plot.exists()
    try:
        with plot.open("ab"):
            pass
    except OSError as exc:
        raise CommandError(f"--plot {plot}: cannot write it ({exc.strerror})") from None
    if not existed:
        plot.unlink()


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
    if not args.start and not args.end and start > end:
        raise CommandError(
            f"no as-of day: the shortest horizon ({horizon} days) can follow days up to "
            f"{last_followed} only, before the first day with a full {window_days}-day window, "
            f"{first_full} (first close {oldest}, newest close {newest}); give a shorter "
            "--horizon"
        )
    if args.start and start > last_followed and not (args.end and end < start):
        raise CommandError(
            f"--from {start} leaves no as-of day: the shortest horizon ({horizon} days) can "
            f"follow days up to {last_followed} only (newest close {newest}); give --from "
            f"{last_followed} or earlier, or a shorter --horizon"
        )
    if args.end and end < first_full and not (args.start and end < start):
        raise CommandError(
            f"--to {end} leaves no as-of day: the first day with a full {window_days}-day "
            f"window is {first_full} (first close {oldest}); give --to {first_full} or later"
            + ("" if args.start else ", or an earlier --from")
        )
    return start, end


def _points(rt: Runtime) -> str:
    """What the progress line counts: as-of days, or as-of closes on an intraday universe."""
    return "as-of closes" if bar_size(rt.universe.bar).intraday else "as-of days"


def _steps(args: argparse.Namespace, bar: BarSize) -> tuple[int, list[int]]:
    """``--every`` and ``--horizon`` in the universe's bars (days on a daily universe, where
    a bare number reads as it always did)."""
    default_every = INTRADAY_EVERY if bar.intraday else str(DEFAULT_EVERY)
    every_text = args.every if args.every is not None else default_every
    default_horizons = INTRADAY_HORIZONS if bar.intraday else DEFAULT_HORIZONS
    horizon_text = args.horizon if args.horizon is not None else default_horizons
    if args.every is None and bar.intraday:
        from pairscreen.evaluation.scale import track_record_steps

        every = track_record_steps(bar)[0]  # the worker's: 6h, one bar on 4h bars
    else:
        every = _count(every_text, "--every", bar, "bars")
    items = [h for h in str(horizon_text).split(",") if h.strip()]
    if not items:
        raise CommandError("--horizon needs at least one number of days, e.g. 30,90")
    return every, [_count(h, "--horizon", bar, "days") for h in items]


def _count(text: str, flag: str, bar: BarSize, bare: str) -> int:
    """One duration in bars; a bare number on a daily universe is days, read and refused
    as before bars existed."""
    if not bar.intraday and not has_unit(text):
        return _whole(text, flag)
    return bars_of(text, bar, flag, bare=bare if bar.intraday else "days")


def _whole_days(horizons: list[int], bar: BarSize) -> None:
    """The strategy simulates whole days: refuse, in one line, a horizon that is not."""
    from pairscreen.evaluation.dates import spell

    odd = [h for h in horizons if h % bar.per_day]
    if odd:
        named = ", ".join(spell(h, bar) for h in odd)
        raise CommandError(
            f"--outcome strategy and --portfolio trade whole days (a strategy's backtest is "
            f"a span of days); --horizon {named} is not: give 24h, 48h, 3d, …"
        )


def _bar_span(
    args: argparse.Namespace,
    candles: Mapping[str, Candles],
    window: int,
    horizon: int,
    bar: BarSize,
) -> tuple[datetime, datetime]:
    """The first and last as-of close on an intraday universe: as given (a UTC time or a
    date, read as ``screen run --as-of`` reads it: the last bar closed by then), else the
    first close with a full window and the last the shortest horizon can follow."""
    from pairscreen.cli.screen import past_close
    from pairscreen.evaluation.dates import iso, spell
    from pairscreen.evaluation.scale import default_points

    first, last = default_points(candles, window, horizon, bar)
    assert isinstance(first, datetime) and isinstance(last, datetime)
    start = past_close(args.start, bar, "--from") if args.start else first
    end = past_close(args.end, bar, "--to") if args.end else last
    if not args.start and not args.end and start > end:
        raise CommandError(
            f"no as-of close: the shortest horizon ({spell(horizon, bar)}) can follow closes "
            f"up to {iso(last)} only, before the first close with a full {window}-day window, "
            f"{iso(first)}; give a shorter --horizon"
        )
    if args.start and start > last and not (args.end and end < start):
        raise CommandError(
            f"--from {iso(start)} leaves no as-of close: the shortest horizon "
            f"({spell(horizon, bar)}) can follow closes up to {iso(last)} only; "
            f"give --from {iso(last)} or earlier, or a shorter --horizon"
        )
    if args.end and end < first and not (args.start and end < start):
        raise CommandError(
            f"--to {iso(end)} leaves no as-of close: the first close with a full {window}-day "
            f"window is {iso(first)}; give --to {iso(first)} or later"
            + ("" if args.start else ", or an earlier --from")
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
