"""``notify run``, ``notify deliver``, ``channels set|disable|list`` and ``worker``."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from datetime import timedelta
from typing import TYPE_CHECKING

from pairscreen.bootstrap import load_all_plugins
from pairscreen.cli.common import CommandError, add_setting_options, open_database, open_runtime
from pairscreen.cli.output import Row, add_json_option, print_rows, text
from pairscreen.config import Settings
from pairscreen.db.connection import database
from pairscreen.plugin_system.channel_kinds import ChannelKinds
from pairscreen.universe import load_universe

if TYPE_CHECKING:
    from pairscreen.evaluation.portfolio import PortfolioSpec
    from pairscreen.runtime import Runtime
    from pairscreen.screen_schedule import ScreenSchedule


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    notify = commands.add_parser("notify", help="watchlist notifications").add_subparsers(
        dest="notify_command", required=True
    )
    notify.add_parser(
        "run", help="move every watchlist item's state and queue its notifications"
    ).set_defaults(handler=_notify_run)
    deliver = notify.add_parser("deliver", help="deliver the queued notifications that are due")
    deliver.set_defaults(handler=_notify_deliver)

    channels = commands.add_parser(
        "channels", help="where a user's notifications go"
    ).add_subparsers(dest="channels_command", required=True)
    set_ = channels.add_parser(
        "set",
        help="set and enable a user's e-mail address, Telegram chat, webhook, Discord or Slack",
    )
    set_.add_argument("email", help="the account's e-mail")
    set_.add_argument(
        "--email",
        dest="to_email",
        metavar="ADDRESS",
        help="deliver e-mail here (default: unchanged; at first the account's e-mail)",
    )
    set_.add_argument(
        "--telegram", metavar="CHAT_ID", help="Telegram chat id (or @channel) (default: unchanged)"
    )
    set_.add_argument(
        "--webhook", metavar="URL", help="http(s) URL for signed JSON POSTs (default: unchanged)"
    )
    set_.add_argument(
        "--discord",
        metavar="URL",
        help="the Discord channel's incoming-webhook URL (default: unchanged)",
    )
    set_.add_argument(
        "--slack", metavar="URL", help="the Slack incoming-webhook URL (default: unchanged)"
    )
    set_.add_argument(
        "--kind",
        help="a channel kind by name, built-in or a notifier plugin's ('pairscreen plugins' "
        "lists the notifiers), with --address (default: none)",
    )
    set_.add_argument("--address", help="the address of the --kind channel (default: none)")
    set_.add_argument(
        "--depeg-alerts",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Pro: e-mail on every depeg event, not only for watched assets (default: "
        "unchanged; at first off)",
    )
    set_.set_defaults(handler=_channels_set)
    disable = channels.add_parser("disable", help="turn one of a user's channels off")
    disable.add_argument("email", help="the account's e-mail address")
    disable.add_argument(
        "kind",
        help="the channel kind to turn off: email, telegram, webhook, discord, slack or a plugin's",
    )
    disable.set_defaults(handler=_channels_disable)
    show = channels.add_parser("list", help="a user's channels")
    show.add_argument("email", help="the account's e-mail address")
    add_json_option(show)
    show.set_defaults(handler=_channels_list)

    outbox = commands.add_parser("outbox", help="the queued notifications").add_subparsers(
        dest="outbox_command", required=True
    )
    listing = outbox.add_parser(
        "list",
        help="messages waiting for delivery and their last error, next due first",
        description=(
            "The outbox's messages, next due first, with the error of their last attempt: it "
            "says why a message waits (a channel not configured, a receiver refusing it)."
        ),
    )
    listing.add_argument(
        "--status",
        choices=["pending", "failed", "sent", "all"],
        default="pending",
        help="which messages (default: pending)",
    )
    listing.add_argument(
        "--limit", type=_positive, default=100, metavar="N", help="at most N (default: 100)"
    )
    add_json_option(listing)
    listing.set_defaults(handler=_outbox_list)

    worker = commands.add_parser(
        "worker",
        help="run the schedule: screen after each bar closes, peg sampling hourly, "
        "notifications, delivery",
    )
    add_setting_options(
        worker,
        "worker_wait",
        "deliver_every",
        "worker_lock_ttl",
        "screen_every_bars",
        "screen_delay",
        "screen_retry",
        "evidence_every",
        "evidence_sample",
        "evidence_portfolio",
        "evidence_max_per_asset",
    )
    worker.set_defaults(handler=_worker)


def _notify_run(args: argparse.Namespace) -> None:
    from pairscreen.notify.run import run_notifications

    rt = open_runtime(args)
    with database.connection_context():
        report = run_notifications(rt)
    print(report.summary())


def _notify_deliver(args: argparse.Namespace) -> None:
    from pairscreen.notify.outbox import backlog, counts, deliver_pending

    rt = open_runtime(args)
    with database.connection_context():
        report = deliver_pending(rt, worker_id=f"cli:{socket.gethostname()}:{os.getpid()}")
        left = counts()
        waiting = backlog()
    print(f"{report.summary()}; outbox: {left['pending']} pending, {left['failed']} failed")
    for channel in waiting:
        print(f"  {channel.line()}")


def _outbox_list(args: argparse.Namespace) -> None:
    from pairscreen.notify.outbox import listing

    kinds = channel_kinds(open_database(args))
    with database.connection_context():
        rows = listing(None if args.status == "all" else args.status, args.limit, kinds)

    def cells(row: Row) -> list[str]:
        return [
            str(row["id"]),
            row["channel"],
            row["address"],
            row["status"],
            str(row["attempts"]),
            text(row["next_attempt_at"]),
            text(row["last_error"]),
            row["subject"],
        ]

    headers = ["ID", "CHANNEL", "TO", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "LAST ERROR"]
    print_rows(args, [*headers, "SUBJECT"], rows, cells)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


def channel_kinds(settings: Settings) -> ChannelKinds:
    """The channel kinds the loaded notifier plugins offer (no runtime needed)."""
    return load_all_plugins(settings, load_universe(settings)).channel_kinds


def _channels_set(args: argparse.Namespace) -> None:
    from pairscreen.notify import channels

    if (args.kind is None) != (args.address is None):
        raise CommandError("--kind and --address go together: give both or neither")
    settings = open_database(args)
    kinds = channel_kinds(settings)
    addresses = {
        kind: value
        for kind, value in (
            ("email", args.to_email),
            ("telegram", args.telegram),
            ("webhook", args.webhook),
            ("discord", args.discord),
            ("slack", args.slack),
        )
        if value is not None
    }
    if args.kind is not None:
        if args.kind in addresses:
            raise CommandError(f"--kind {args.kind} repeats --{args.kind}: give one of them")
        addresses[args.kind] = args.address
    with database.connection_context():
        channels.set_channels(
            args.email, addresses=addresses, depeg_alerts=args.depeg_alerts, kinds=kinds
        )
        lines = channels.describe(args.email, kinds)
    print("\n".join(lines))


def _channels_disable(args: argparse.Namespace) -> None:
    from pairscreen.notify import channels

    settings = open_database(args)
    kinds = channel_kinds(settings)
    with database.connection_context():
        channels.disable_channel(args.email, args.kind, kinds)
        lines = channels.describe(args.email, kinds)
    print("\n".join(lines))


def _channels_list(args: argparse.Namespace) -> None:
    from pairscreen.notify import channels

    settings = open_database(args)
    kinds = channel_kinds(settings)
    with database.connection_context():
        rows = channels.channel_rows(args.email, kinds)

    def cells(row: Row) -> list[str]:
        return [
            row["kind"],
            row["address"] + (" (account address)" if row["account_address"] else ""),
            "enabled" if row["enabled"] else "disabled",
            "all assets" if row["depeg_alerts"] else "-",
        ]

    print_rows(
        args,
        ["CHANNEL", "ADDRESS", "STATE", "DEPEG ALERTS"],
        rows,
        cells,
        plain=channels.describe_row,
    )


def _evidence_portfolio(settings: Settings) -> PortfolioSpec | None:
    """The portfolio the worker's track record publishes: ``--evidence-portfolio N`` with
    ``--evidence-max-per-asset K`` as ``evaluate --publish --portfolio N --max-per-asset K``
    (0 turns each off); a limit without a portfolio is refused, as the CLI refuses it."""
    from pairscreen.evaluation.portfolio import PortfolioSpec

    size, limit = settings.evidence_portfolio, settings.evidence_max_per_asset
    if limit and not size:
        raise CommandError(
            "--evidence-max-per-asset limits the worker's portfolio: give "
            "--evidence-portfolio N too (PAIRSCREEN_EVIDENCE_PORTFOLIO)"
        )
    return PortfolioSpec(size, limit or None) if size else None


def _screen_schedule(rt: Runtime) -> ScreenSchedule:
    """The worker's screen schedule from the universe's bar and the settings."""
    from pairscreen.contracts.bars import bar_size
    from pairscreen.screen_schedule import ScreenSchedule

    settings = rt.settings
    try:
        return ScreenSchedule(
            bar_size(rt.universe.bar),
            every=settings.screen_every_bars,
            delay=timedelta(seconds=settings.screen_delay),
            retry=timedelta(seconds=settings.screen_retry),
        )
    except ValueError as exc:  # a delay as long as the step
        raise CommandError(f"--screen-delay: {exc}") from None


def _worker(args: argparse.Namespace) -> int:
    from pairscreen.config import export_settings
    from pairscreen.worker import EXIT_LOCK_HELD, WorkerBusy, WorkerOptions, run_worker

    rt = open_runtime(args)
    export_settings(rt.settings)  # the screen's forked or spawned processes read them back
    settings = rt.settings
    try:
        return run_worker(
            rt,
            WorkerOptions(
                wait=settings.worker_wait,
                deliver_every=settings.deliver_every,
                lock_ttl=settings.worker_lock_ttl,
                wait_poll=settings.worker_wait_poll,
                screen=_screen_schedule(rt),
                evidence_every=timedelta(seconds=settings.evidence_every),
                evidence_sample=settings.evidence_sample,
                evidence_portfolio=_evidence_portfolio(settings),
            ),
        )
    except WorkerBusy as exc:
        print(f"pairscreen: error: {exc}", file=sys.stderr)
        return EXIT_LOCK_HELD
