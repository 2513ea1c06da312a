"""``screen run``: sync the candles, screen every pair, publish the result, say what it did.

Read top-down: :func:`register` declares the command, :func:`_run` is the command itself in
its four steps (check the flags and build the runtime, sync, screen and publish, report),
each a function below it. The computing lives in :mod:`pairscreen.screening`, the storing in
:mod:`pairscreen.screen_store`; this module only reads flags and prints.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from pairscreen import clock
from pairscreen.cli.common import CommandError, add_setting_options, open_runtime, settings_of
from pairscreen.cli.progress import ProgressDisplay
from pairscreen.contracts.bars import DAILY, BarSize, bar_size
from pairscreen.wording import plural

if TYPE_CHECKING:  # a command imports what it runs when it runs (``--help`` stays light)
    from pairscreen.config import Settings
    from pairscreen.runtime import Runtime
    from pairscreen.screen_store.publish import ScreenSummary


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    screen = commands.add_parser("screen", help="the pair screen").add_subparsers(
        dest="screen_command", required=True
    )
    run = screen.add_parser("run", help="screen every pair and publish the result")
    add_setting_options(run, "executor", "dask_scheduler")
    run.add_argument(
        "--no-sync", action="store_true", help="do not pull new candles first (default: pull them)"
    )
    run.add_argument(
        "--as-of",
        metavar="DATE",
        help="screen with the candles up to DATE only (YYYY-MM-DD) and store it as history, "
        "beside the latest screen (implies --no-sync; default: today's screen); an intraday "
        "universe also takes a UTC time (YYYY-MM-DDTHH:MM): the bars closed by then",
    )
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> None:
    settings = _checked_settings(args)
    rt = open_runtime(args)
    as_of: date | datetime | None = None
    if args.as_of is not None and rt.universe.bar == DAILY.name:
        as_of = past_day(args.as_of)
        _refuse_before_history(rt, as_of)
    elif args.as_of is not None:
        as_of = past_close(args.as_of, bar_size(rt.universe.bar))
        _refuse_before_bars(rt, as_of)
    if not args.quiet:
        _announce(rt)
    with ProgressDisplay(quiet=args.quiet) as display:
        if not args.no_sync and as_of is None:
            _sync_first(rt, display)
        started = time.perf_counter()
        summary = _screen_and_publish(rt, settings, as_of, display)
        elapsed = time.perf_counter() - started
    _report(summary, as_of, elapsed)


def past_day(text: str) -> date:
    """A ``--as-of`` day: an ISO date that has closed (before today, UTC)."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--as-of {text!r} is not a date (YYYY-MM-DD)") from None
    if day >= clock.today():
        raise CommandError(f"--as-of {day} has not closed yet; give a day before today")
    return day


def _refuse_before_history(rt: Runtime, day: date) -> None:
    """A ``--as-of`` day before every stored close has no candle to screen: refuse it rather
    than store an empty screen as that day's history."""
    from pairscreen.market.sync import oldest_stored_day

    oldest = oldest_stored_day(rt.universe)
    if oldest is not None and day < oldest:
        raise CommandError(
            f"--as-of {day} is before the first stored close, {oldest}: no pair has candles "
            f"then; give {oldest} or later"
        )


def _refuse_before_bars(rt: Runtime, close: datetime) -> None:
    """An intraday ``--as-of`` before any stored bar could close: refused, as a day before
    every stored close is on a daily universe."""
    from pairscreen.market.bar_store import first_day

    bar = bar_size(rt.universe.bar)
    first = first_day(bar, (asset.ticker for asset in rt.universe.assets))
    if first is None:
        return
    first_close = datetime.combine(first, datetime.min.time(), UTC) + timedelta(seconds=bar.seconds)
    if close < first_close:
        raise CommandError(
            f"--as-of {close.isoformat()} is before the first day with stored bars, {first}: "
            f"no pair has bars then; give {first} or later"
        )


def past_close(text: str, bar: BarSize, flag: str = "--as-of") -> datetime:
    """An intraday ``--as-of``: the close time of the last ``bar`` closed by the moment
    ``text`` names, an ISO date-time (UTC when it gives no offset) or a bare date (its end,
    24:00 UTC, as a daily ``--as-of`` reads the day's close); a moment to come is refused.
    ``flag`` names the option in the errors (``evaluate --from`` reads its times so too)."""
    try:
        if "T" in text or " " in text.strip():
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        else:
            moment = datetime.combine(
                date.fromisoformat(text) + timedelta(days=1), datetime.min.time()
            )
    except ValueError:
        raise CommandError(
            f"{flag} {text!r} is neither a date (YYYY-MM-DD) nor a UTC time (YYYY-MM-DDTHH:MM)"
        ) from None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    if moment > clock.now():
        raise CommandError(
            f"{flag} {moment.isoformat()} has not come yet; give a time before "
            f"{clock.iso(clock.now())}"
        )
    return datetime.fromtimestamp(bar.last_closed(moment), UTC)


def _checked_settings(args: argparse.Namespace) -> Settings:
    """The settings, refused before anything runs when the executor cannot work."""
    settings = settings_of(args)
    if settings.executor == "dask" and not settings.dask_scheduler:
        raise CommandError("--executor dask needs --scheduler tcp://HOST:PORT (a Dask scheduler)")
    return settings


def _announce(rt: Runtime) -> None:
    n_pairs = int(rt.universe.screened_pair_indices()[0].shape[0])
    n_assets = len(rt.universe.assets)
    print(f"screening {plural(n_pairs, 'pair')} of {plural(n_assets, 'asset')}", flush=True)


def _sync_first(rt: Runtime, display: ProgressDisplay) -> None:
    """New candles first; what the sync left for a person is a warning, not a stop."""
    if rt.universe.bar != DAILY.name:
        _sync_bars_first(rt, display)
        return
    from pairscreen.market.sync import sync_candles

    synced = sync_candles(rt.universe, rt.plugins, on_progress=display.step("market data"))
    for line in synced.review_lines():
        print(f"pairscreen: warning: sync {line}", file=sys.stderr)


def _sync_bars_first(rt: Runtime, display: ProgressDisplay) -> None:
    """An intraday universe's new bars first (:mod:`pairscreen.market.bar_sync`); an asset
    the sync refused or held is a warning, not a stop, as for daily candles."""
    from pairscreen.market.bar_sync import sync_bars

    report = sync_bars(rt.universe, rt.plugins, on_progress=display.step("market data"))
    if report.needs_review:
        for line in report.lines():
            print(f"pairscreen: warning: sync {line}", file=sys.stderr)


def _screen_and_publish(
    rt: Runtime, settings: Settings, as_of: date | datetime | None, display: ProgressDisplay
) -> ScreenSummary:
    """Today's screen as the latest one, or the screen as of ``as_of`` as history."""
    if isinstance(as_of, datetime):
        from pairscreen.screening.point_in_time import run_screen_as_of_close

        return run_screen_as_of_close(
            rt,
            as_of,
            executor=settings.executor,
            scheduler=settings.dask_scheduler,
            on_progress=display.step("pairs"),
        )
    if as_of is not None:
        from pairscreen.screening.point_in_time import run_screen_as_of

        return run_screen_as_of(
            rt,
            as_of,
            executor=settings.executor,
            scheduler=settings.dask_scheduler,
            on_progress=display.step("pairs"),
        )
    from pairscreen.screening.screen import run_screen

    return run_screen(
        rt,
        executor=settings.executor,
        scheduler=settings.dask_scheduler,
        on_progress=display.step("pairs"),
    )


def _report(summary: ScreenSummary, as_of: date | datetime | None, elapsed: float) -> None:
    rejected = ", ".join(f"{k} {v}" for k, v in summary.rejected.items() if v)
    when = f" as of {clock.iso(as_of) if isinstance(as_of, datetime) else as_of}" if as_of else ""
    print(
        f"screen #{summary.screen_id}{when}: {plural(summary.n_pairs_screened, 'pair')}, "
        f"{plural(summary.n_survivors, 'survivor')} ({rejected or 'none rejected'}) "
        f"in {elapsed:.1f} s"
    )
    print(f"published in {summary.publish_seconds:.2f} s")
