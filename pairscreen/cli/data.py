"""``db upgrade`` and ``data sync`` (``screen run`` is :mod:`pairscreen.cli.screen`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from pairscreen.cli import exits
from pairscreen.cli.common import (
    CommandError,
    open_runtime,
    settings_of,
)
from pairscreen.cli.progress import ProgressDisplay
from pairscreen.db.connection import connect
from pairscreen.db.migrations import upgrade
from pairscreen.universe import Universe

if TYPE_CHECKING:
    from pairscreen.market.bar_sync import BarSyncReport
    from pairscreen.market.sync_report import SyncReport
    from pairscreen.plugin_system.registry import Plugins


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = commands.add_parser("db", help="database schema").add_subparsers(
        dest="db_command", required=True
    )
    db.add_parser("upgrade", help="apply pending migrations").set_defaults(handler=_upgrade)

    data = commands.add_parser("data", help="market data").add_subparsers(
        dest="data_command", required=True
    )
    sync = data.add_parser(
        "sync",
        help="pull new daily candles (or the universe's intraday bars) from its market source",
        description="Check the last stored days of every asset against the source and add "
        "the new days. An asset whose stored history the source contradicts, whose rows the "
        "source could not all read, or whose new closes move implausibly is left as stored "
        f"and named; the command then exits with status {exits.DATA_CONFLICT}.",
    )
    sync.add_argument(
        "--verify",
        action="store_true",
        help="compare every stored day with the source, not only the last 7 (default: off)",
    )
    chosen = sync.add_mutually_exclusive_group()
    chosen.add_argument(
        "--replace",
        metavar="TICKER[,TICKER...]",
        help="replace the stored candles of these assets with the source's history (default: none)",
    )
    chosen.add_argument(
        "--replace-all",
        action="store_true",
        help="replace the stored candles of every asset with the source's history (default: off)",
    )
    sync.add_argument(
        "--accept",
        metavar="TICKER:DAY[,TICKER:DAY...]",
        action="append",
        default=[],
        help="adopt these held moves after review: the move of TICKER into DAY (YYYY-MM-DD), "
        "or into the bar closing at TIME (TICKER:2023-03-10T14:00:00Z) on an intraday "
        "universe, as the sync names it; may be repeated (default: none)",
    )
    sync.set_defaults(handler=_sync)


def _upgrade(args: argparse.Namespace) -> None:
    # Bound without init_database, which would migrate first and leave nothing to report.
    settings = settings_of(args)
    connect(settings.database_url)
    applied = upgrade()
    print(
        f"database {settings.database_url}: "
        + (f"applied migrations {applied}" if applied else "already up to date")
    )


def _sync(args: argparse.Namespace) -> None:
    from pairscreen.market.sync import sync_candles

    rt = open_runtime(args, create=True)  # a first sync fills a new database
    if args.replace_all:
        replace: tuple[str, ...] = rt.universe.tickers
    else:
        replace = _tickers(rt.universe, args.replace) if args.replace is not None else ()
    if rt.universe.bar != "1d":
        accept = _bar_moves(rt.universe, args.accept)
        _sync_bars(args, rt.universe, rt.plugins, replace, accept)
        return
    accept = _moves(rt.universe, args.accept)
    with ProgressDisplay(quiet=args.quiet) as display:
        report = sync_candles(
            rt.universe,
            rt.plugins,
            verify=args.verify,
            replace=replace,
            accept=accept,
            on_progress=display.step("market data"),
        )
    for line in report.lines():
        print(line)
    if report.needs_review:
        raise CommandError(_review_line(report), exits.DATA_CONFLICT)


def _sync_bars(
    args: argparse.Namespace,
    universe: Universe,
    plugins: Plugins,
    replace: tuple[str, ...],
    accept: tuple[str, ...],
) -> None:
    """``data sync`` of an intraday universe (:mod:`pairscreen.market.bar_sync`)."""
    from pairscreen.market.bar_sync import sync_bars

    with ProgressDisplay(quiet=args.quiet) as display:
        report = sync_bars(
            universe,
            plugins,
            verify=args.verify,
            replace=replace,
            accept=accept,
            on_progress=display.step("market data"),
        )
    for line in report.lines():
        print(line)
    if report.needs_review:
        raise CommandError(_review_line(report), exits.DATA_CONFLICT)


def _review_line(report: SyncReport | BarSyncReport) -> str:
    """The one-line error of a sync that left assets for a person (the report names why)."""
    parts = []
    if report.conflicts:
        parts.append(
            "the source contradicts the stored history of "
            + ", ".join(c.ticker for c in report.conflicts)
        )
    if report.refused:
        parts.append("files or rows that could not be read for " + ", ".join(report.refused))
    if report.holds:
        parts.append("implausible moves held for " + ", ".join(h.ticker for h in report.holds))
    names = report.needs_review
    return (
        f"{'; '.join(parts)}: nothing was written for {'it' if len(names) == 1 else 'them'} "
        "(see above)"
    )


def _moves(universe: Universe, given: list[str]) -> tuple[str, ...]:
    """``--accept btc:2023-10-01``: moves as the sync names them (``BTC:2023-10-01``)."""

    def day_of(text: str, day_text: str) -> str:
        try:
            return date.fromisoformat(day_text.strip()).isoformat()
        except ValueError:
            raise CommandError(
                f"--accept {text!r}: {day_text!r} is not a day (YYYY-MM-DD); give TICKER:DAY"
            ) from None

    return _accepted(universe, given, text_split=str.rpartition, when=day_of, form="TICKER:DAY")


def _bar_moves(universe: Universe, given: list[str]) -> tuple[str, ...]:
    """``--accept btc:2023-03-10T14:00Z`` on an intraday universe: moves as the sync names
    them (``BTC:2023-03-10T14:00:00Z``, the move into the bar closing then, UTC)."""
    from pairscreen.market.bar_checks import iso_time

    def close_time_of(text: str, time_text: str) -> str:
        try:
            moment: datetime | None = datetime.fromisoformat(time_text.strip())
        except ValueError:
            moment = None
        if moment is None or len(time_text.strip()) <= len("2023-03-10"):
            raise CommandError(
                f"--accept {text!r}: {time_text!r} is not a bar's close time (a UTC date-time, "
                f"e.g. 2023-03-10T14:00:00Z); give TICKER:TIME on a {universe.bar} universe"
            )
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return iso_time(int(moment.timestamp()))

    return _accepted(
        universe,
        given,
        text_split=str.partition,
        when=close_time_of,
        form="TICKER:TIME",
        example="BTC:2023-03-10T14:00:00Z",
    )


def _accepted(
    universe: Universe,
    given: list[str],
    *,
    text_split: Callable[[str, str], tuple[str, str, str]],
    when: Callable[[str, str], str],
    form: str,
    example: str = "BTC:2023-10-01",
) -> tuple[str, ...]:
    """``--accept``'s comma-separated ``TICKER:WHEN`` items as the sync names them, in order,
    once each: the ticker resolved in the universe, ``when(item, WHEN)`` the moment's own
    spelling (or a one-line :class:`CommandError`). ``text_split`` cuts an item at its colon
    (a day's item at the last one, a close time's at the first: the time has colons too)."""
    out: list[str] = []
    for text in (part.strip() for item in given for part in item.split(",")):
        if not text:
            continue
        ticker, _, moment = text_split(text, ":")
        asset = universe.resolve(ticker.strip()) if ticker else None
        if asset is None:
            what = f"{ticker!r} is not an asset of the universe" if ticker else "no ticker"
            raise CommandError(f"--accept {text!r}: {what}; give {form}, e.g. {example}")
        out.append(f"{asset.ticker}:{when(text, moment)}")
    return tuple(dict.fromkeys(out))


def _tickers(universe: Universe, text: str) -> tuple[str, ...]:
    """``--replace BTC,eth``: universe tickers (a unique case-insensitive match is enough)."""
    out: list[str] = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        asset = universe.resolve(name)
        if asset is None:
            raise CommandError(f"--replace: {name!r} is not an asset of the universe")
        out.append(asset.ticker)
    if not out:
        raise CommandError("--replace needs at least one ticker, e.g. --replace BTC,ETH")
    return tuple(out)
