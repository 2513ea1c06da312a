"""``peg sample``: record the peg of every tokenized asset and update the depeg events."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta

from pairscreen import clock
from pairscreen.cli.common import open_runtime
from pairscreen.cli.progress import ProgressDisplay


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    peg = commands.add_parser("peg", help="peg monitoring of tokenized assets").add_subparsers(
        dest="peg_command", required=True
    )
    sample = peg.add_parser(
        "sample",
        help="sample every tokenized asset's peg now, then open or close depeg events",
    )
    sample.add_argument(
        "--at", help="sample as of this ISO 8601 time (UTC unless it has an offset) (default: now)"
    )
    sample.add_argument(
        "--backfill-hours",
        type=int,
        metavar="N",
        help="first sample each whole hour of the N hours before --at (or now), oldest first "
        "(default: no backfill)",
    )
    sample.add_argument(
        "--no-sync", action="store_true", help="do not pull new candles first (default: pull them)"
    )
    sample.set_defaults(handler=_sample)


def _sample(args: argparse.Namespace) -> None:
    from pairscreen.pegs.sampling import (
        SamplingReport,
        backfill_pegs,
        backfill_summary,
        refuse_beyond_retention,
        sample_pegs,
    )

    at = _moment(args.at) if args.at else None
    if args.backfill_hours is not None and args.backfill_hours < 1:
        raise ValueError("--backfill-hours must be a whole number of hours, at least 1")
    rt = open_runtime(args)
    # Refused before anything is pulled or sampled (the retention would delete it at once).
    if args.backfill_hours:
        refuse_beyond_retention(
            rt,
            (at or clock.now()) - timedelta(hours=args.backfill_hours),
            f"--backfill-hours {args.backfill_hours}",
        )
    elif at is not None:
        refuse_beyond_retention(rt, at, f"--at {args.at}")
    reports: list[SamplingReport] = []
    with ProgressDisplay(quiet=args.quiet) as display:
        if not args.no_sync:
            from pairscreen.market.sync import sync_candles

            synced = sync_candles(rt.universe, rt.plugins, on_progress=display.step("market data"))
            for line in synced.review_lines():
                print(f"pairscreen: warning: sync {line}", file=sys.stderr)
        if args.backfill_hours:
            reports = backfill_pegs(
                rt, args.backfill_hours, at, on_progress=display.step("peg samples")
            )
    if reports:
        for report in reports[:-1]:
            for change in report.changes:
                stale = " (stale)" if change.ended == "stale" else ""
                print(
                    f"{report.sampled_at.isoformat()}: event {change.change}: "
                    f"{change.ticker}{stale}"
                )
        report = reports[-1]
    else:
        report = sample_pegs(rt, at)
    for r in report.readings:
        drift = f"{r.drift_pct:+.2f} %" if r.drift_pct is not None else "-"
        print(
            f"{r.ticker:<10} {r.status:<9} drift {drift:>9} (threshold {r.threshold_pct:g} %)"
            f"  reference: {r.reference_source or 'none fresh'}"
        )
    for reason in report.unknown_reasons():
        print(f"unknown: {reason}")
    for change in report.changes:
        if change.end_reason:
            print(f"event closed as stale: {change.end_reason}")
    print(backfill_summary(reports) if reports else report.summary())


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--at: {text!r} is not an ISO 8601 time such as 2025-01-31T14:00"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
