"""``users``, ``keys`` and ``watchlist`` commands."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.cli.common import CommandError, open_database, open_runtime
from pairscreen.cli.hints import command_line
from pairscreen.cli.output import Row, add_json_option, print_rows, text
from pairscreen.notify import watchlist
from pairscreen.notify.hygiene import HygieneChange

if TYPE_CHECKING:
    from pairscreen.db.models import WatchlistItem


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    users = commands.add_parser("users", help="manage accounts").add_subparsers(
        dest="users_command", required=True
    )
    for name, handler in (("create", _create_user), ("set-tier", _set_tier)):
        p = users.add_parser(name, help=f"{name} a user")
        p.add_argument("email", help="the account's e-mail address")
        p.add_argument(
            "--tier",
            choices=[*accounts.TIERS, NO_TIER],
            required=True,
            help=f"{' or '.join(accounts.TIERS)}; {NO_TIER}: no tier (the account's key is "
            "refused by the API until it is given one) (required, no default)",
        )
        when = p.add_mutually_exclusive_group()
        when.add_argument(
            "--expires",
            type=_day,
            metavar="YYYY-MM-DD",
            help="when the tier ends (00:00 UTC that day), a day to come (default: one year "
            "from now)",
        )
        when.add_argument(
            "--lifetime", action="store_true", help="the tier never expires (default: it does)"
        )
        p.set_defaults(handler=handler)
    listing = users.add_parser("list", help="list users: e-mail, tier, expiry")
    add_json_option(listing)
    listing.set_defaults(handler=_list_users)

    keys = commands.add_parser("keys", help="API keys").add_subparsers(
        dest="keys_command", required=True
    )
    rotate = keys.add_parser("rotate", help="issue a new key (revokes the old one at once)")
    rotate.add_argument("email", help="the account's e-mail address")
    rotate.set_defaults(handler=_rotate)
    key_list = keys.add_parser("list", help="each account's active key: its prefix, when issued")
    add_json_option(key_list)
    key_list.set_defaults(handler=_list_keys)

    wl = commands.add_parser("watchlist", help="users' watchlists").add_subparsers(
        dest="watchlist_command", required=True
    )
    add = wl.add_parser(
        "add",
        help="add a pair A/B to a user's watchlist",
        description=(
            "Add the pair A/B to a user's watchlist. A/B and B/A are one pair, watched by one "
            "item: adding the mirror of a watched pair is refused with the item that watches "
            "it (remove that one first to change the orientation). Notifications read the "
            "position in the orientation given here."
        ),
    )
    add.add_argument("email", help="the account's e-mail address")
    add.add_argument("pair", help="two tickers of the universe, A/B")
    add.add_argument(
        "--no-approach", action="store_true", help="no approach notifications (default: on)"
    )
    add.add_argument(
        "--no-in-zone", action="store_true", help="no in-zone notifications (default: on)"
    )
    _hygiene_options(add)
    add.set_defaults(handler=_watch_add)
    set_ = wl.add_parser(
        "set",
        help="change a watched pair's switches, cooldown, snooze or re-arm margin",
        description=(
            "Change the item watching A/B (as it was added): its switches and its alert "
            "hygiene. An option left out keeps the item's value."
        ),
    )
    set_.add_argument("email", help="the account's e-mail address")
    set_.add_argument("pair", help="the watched pair, A/B as it was added")
    set_.add_argument(
        "--approach",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="approach notifications on or off (default: unchanged)",
    )
    set_.add_argument(
        "--in-zone",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="in-zone notifications on or off (default: unchanged)",
    )
    _hygiene_options(set_)
    set_.set_defaults(handler=_watch_set)
    remove = wl.add_parser(
        "remove", help="remove a pair (written A/B or B/A) from a user's watchlist"
    )
    remove.add_argument("email", help="the account's e-mail address")
    remove.add_argument("pair", help="two tickers of the universe, A/B")
    remove.set_defaults(handler=_watch_remove)
    show = wl.add_parser("list", help="a user's watchlist: pair, last state, notifications")
    show.add_argument("email", help="the account's e-mail address")
    add_json_option(show)
    show.set_defaults(handler=_watch_list)


NO_TIER = "none"


def _hygiene_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cooldown",
        type=int,
        metavar="HOURS",
        help="after a notification, notify nothing of this pair for HOURS (0: no cooldown; "
        "default for a new item: 0)",
    )
    parser.add_argument(
        "--snooze-until",
        metavar="WHEN",
        help="notify nothing of this pair before WHEN: a date (from 00:00 UTC), a date-time, "
        "or 'none' to end a snooze (default for a new item: no snooze)",
    )
    parser.add_argument(
        "--rearm-margin",
        type=float,
        metavar="M",
        help="re-arm only when the position leaves the zone's approach band by M "
        "(0 to 0.2; default for a new item: 0.02)",
    )


def _hygiene(args: argparse.Namespace) -> HygieneChange:
    return HygieneChange.of(args.cooldown, args.snooze_until, args.rearm_margin)


def _day(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD, got {text!r}") from None


def _tier_args(args: argparse.Namespace) -> tuple[str | None, datetime | None, bool]:
    """The tier, its expiry (one year from now unless given) and whether it is lifetime."""
    tier = None if args.tier == NO_TIER else args.tier
    expires = args.expires
    if tier is None and (expires is not None or args.lifetime):
        raise CommandError(f"--tier {NO_TIER} has no expiry: leave out --expires and --lifetime")
    if expires is not None and expires <= clock.now():
        raise CommandError(
            f"--expires {expires:%Y-%m-%d} is in the past: give a day to come, or --lifetime"
        )
    if tier and not args.lifetime and expires is None:
        expires = clock.now().replace(microsecond=0) + timedelta(days=365)
    return tier, expires, args.lifetime


def _create_user(args: argparse.Namespace) -> None:
    settings = open_database(args)
    tier, expires, lifetime = _tier_args(args)
    user = accounts.create_user(args.email, tier, expires=expires, lifetime=lifetime)
    rotate = command_line(settings, "keys", "rotate", user.email)
    print(f"created {user.email} ({tier or 'no tier'}); issue a key with: {rotate}")


def _set_tier(args: argparse.Namespace) -> None:
    open_database(args)
    tier, expires, lifetime = _tier_args(args)
    user = accounts.set_tier(args.email, tier, expires=expires, lifetime=lifetime)
    until = "lifetime" if user.is_lifetime else (user.tier_expires_at or "no expiry")
    print(f"{user.email}: {user.tier or 'no tier'} ({until})")


def _list_users(args: argparse.Namespace) -> None:
    open_database(args)
    rows = [
        {
            "email": user.email,
            "tier": user.tier,
            "lifetime": bool(user.is_lifetime),
            "expires_at": clock.iso(user.tier_expires_at) if user.tier_expires_at else None,
        }
        for user in accounts.list_users()
    ]

    def cells(row: Row) -> list[str]:
        until = "lifetime" if row["lifetime"] else text(row["expires_at"])
        return [row["email"], text(row["tier"]), until]

    print_rows(args, ["E-MAIL", "TIER", "EXPIRES"], rows, cells)


def _list_keys(args: argparse.Namespace) -> None:
    open_database(args)

    def cells(row: Row) -> list[str]:
        return [row["email"], f"{row['prefix']}…", row["issued_at"]]

    print_rows(args, ["E-MAIL", "KEY", "ISSUED"], accounts.list_keys(), cells)


def _rotate(args: argparse.Namespace) -> None:
    open_database(args)
    print(accounts.rotate_key(args.email))


def _watch_add(args: argparse.Namespace) -> None:
    rt = open_runtime(args)
    item = watchlist.add_item(
        rt.universe,
        args.email,
        args.pair,
        approach=not args.no_approach,
        in_zone=not args.no_in_zone,
        hygiene=_hygiene(args),
    )
    given = (args.cooldown, args.snooze_until, args.rearm_margin) != (None, None, None)
    print(f"watching {item.a}/{item.b} for {args.email}{_hygiene_text(item) if given else ''}")


def _watch_set(args: argparse.Namespace) -> None:
    rt = open_runtime(args)
    item = watchlist.set_item(
        rt.universe,
        args.email,
        args.pair,
        approach=args.approach,
        in_zone=args.in_zone,
        hygiene=_hygiene(args),
    )
    print(f"{item.a}/{item.b} for {args.email}{_hygiene_text(item)}")


def _hygiene_text(item: WatchlistItem) -> str:
    """The item's switches and hygiene, as the add/set commands confirm them."""
    on = [f for f, v in (("approach", item.notify_approach), ("in_zone", item.notify_in_zone)) if v]
    parts = [
        f"notify on {','.join(on) or 'nothing'}",
        f"cooldown {item.cooldown_hours} h",
        f"re-arm margin {item.rearm_margin:g}",
    ]
    if item.snoozed_until is not None:
        parts.append(f"snoozed until {clock.iso(item.snoozed_until)}")
    return ": " + ", ".join(parts)


def _watch_remove(args: argparse.Namespace) -> None:
    rt = open_runtime(args)
    removed = watchlist.remove_item(rt.universe, args.email, args.pair)
    print(f"removed {removed} from {args.email}'s watchlist")


def _watch_list(args: argparse.Namespace) -> None:
    open_database(args)

    def cells(item: Row) -> list[str]:
        flags = ",".join(
            f
            for f, on in (
                ("approach", item["notify_approach"]),
                ("in_zone", item["notify_in_zone"]),
            )
            if on
        )
        return [
            item["pair"],
            text(item["last_notified_state"]),
            flags or "-",
            f"{item['cooldown_hours']} h",
            text(item["snoozed_until"]),
            f"{item['rearm_margin']:g}",
        ]

    headers = ["PAIR", "LAST STATE", "NOTIFY ON", "COOLDOWN", "SNOOZED UNTIL", "RE-ARM MARGIN"]
    print_rows(args, headers, watchlist.items_of(args.email), cells)
