"""Watchlist items: each user sees and edits only their own, one item per pair (``A/B`` and
``B/A`` are one pair, see :func:`add_item`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import peewee

from pairscreen import clock
from pairscreen.access.accounts import AccountError, find_user
from pairscreen.contracts import Asset
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import WatchlistItem, canonical_pair
from pairscreen.errors import Conflict, NotFound, ServiceError
from pairscreen.notify.hygiene import HygieneChange
from pairscreen.notify.states import cooldown_end
from pairscreen.universe import Universe


def item_json(item: WatchlistItem) -> dict[str, Any]:
    return {
        "pair": f"{item.a}/{item.b}",
        "a": item.a,
        "b": item.b,
        "notify_approach": item.notify_approach,
        "notify_in_zone": item.notify_in_zone,
        "last_notified_state": item.last_notified_state,
        "state_changed_at": clock.iso(item.state_changed_at) if item.state_changed_at else None,
        "created_at": clock.iso(item.created_at),
        "cooldown_hours": item.cooldown_hours,
        "snoozed_until": _iso(item.snoozed_until),
        "rearm_margin": item.rearm_margin,
        "last_notified_at": _iso(item.last_notified_at),
        "cooldown_until": _iso(cooldown_end(item.last_notified_at, item.cooldown_hours)),
    }


def _iso(moment: datetime | None) -> str | None:
    return clock.iso(moment) if moment is not None else None


def watchlist_of(user_id: int) -> dict[str, Any]:
    items = (
        WatchlistItem.select()
        .where(WatchlistItem.user == user_id)
        .order_by(WatchlistItem.created_at, WatchlistItem.id)
    )
    body = [item_json(i) for i in items]
    return {"count": len(body), "items": body}


def parse_pair(universe: Universe, text: str) -> tuple[Asset, Asset]:
    """``"A/B"`` (a command line's pair) as the universe's two assets (:meth:`Universe.pair`),
    or AccountError saying what is wrong: a wrong pair on a command line is a usage error."""
    parts = text.split("/")
    if len(parts) != 2:
        raise AccountError(f"pair must look like A/B, got {text!r}")
    try:
        return universe.pair(parts[0], parts[1])
    except ServiceError as wrong:
        raise AccountError(f"{wrong.message} (pair {text!r})") from None


# Items a user may keep, per tier: enough for any manual use, a bound for a script gone wrong.
ITEM_LIMITS: dict[str, int] = {"personal": 50, "pro": 500}


def save_item(
    user_id: int,
    tier: str | None,
    asset_a: Asset,
    asset_b: Asset,
    *,
    approach: bool | None = None,
    in_zone: bool | None = None,
    owner: str = "your watchlist",
    update: bool = True,
    hygiene: HygieneChange | None = None,
) -> tuple[WatchlistItem, bool]:
    """Watch ``a``/``b`` for the user, or set an existing item's switches; (item, created).

    The one write path of the watchlist: the API's ``PUT`` and the CLI's ``watchlist add``
    both come here. A switch left ``None`` is on for a new item and unchanged on an existing
    one. ``A/B`` and ``B/A`` are one pair: one item, so one ratio move is one notification.
    Writing the mirror of a watched pair is refused (409) rather than folded into the item,
    because the item's orientation decides what "top" and "bottom" mean in its notifications:
    quietly keeping the other orientation, or flipping it mid-excursion, would surprise the
    trader. ``update=False`` refuses an existing item too (the CLI's ``add``). A new item
    beyond the tier's :data:`ITEM_LIMITS` is refused (409). The unique ``pair_key`` index
    settles two concurrent writes: the loser gets the 409. ``hygiene`` sets the item's
    cooldown, snooze and re-arm margin the same way (a value left ``None`` keeps the item's,
    or the default for a new one). The assets come from :meth:`Universe.pair`.
    """
    a, b = asset_a.ticker, asset_b.ticker
    hygiene = hygiene or HygieneChange()
    key = canonical_pair(a, b)
    try:
        with write_transaction():
            existing = _item_on(user_id, key)
            if existing is None:
                _check_room(user_id, tier, owner)
                item = WatchlistItem.create(
                    user=user_id,
                    a=a,
                    b=b,
                    pair_key=key,
                    notify_approach=True if approach is None else approach,
                    notify_in_zone=True if in_zone is None else in_zone,
                )
                if _apply(item, hygiene):
                    item.save()
                return item, True
            if update and (existing.a, existing.b) == (a, b):
                if approach is not None:
                    existing.notify_approach = approach
                if in_zone is not None:
                    existing.notify_in_zone = in_zone
                _apply(existing, hygiene)
                existing.save()
                return existing, False
    except peewee.IntegrityError:
        existing = _item_on(user_id, key)  # a concurrent write of this pair won
    raise Conflict(_already_watched(owner, a, b, existing))


def _apply(item: WatchlistItem, change: HygieneChange) -> bool:
    """Set the hygiene values ``change`` gives on ``item``; whether any was given."""
    changed = False
    if change.cooldown_hours is not None:
        item.cooldown_hours, changed = change.cooldown_hours, True
    if change.rearm_margin is not None:
        item.rearm_margin, changed = change.rearm_margin, True
    if change.clear_snooze or change.snoozed_until is not None:
        item.snoozed_until, changed = change.snoozed_until, True
    return changed


def delete_item(user_id: int, asset_a: Asset, asset_b: Asset, *, owner: str) -> str:
    """Stop watching the pair (written either way round); the removed item's pair, or 404."""
    a, b = asset_a.ticker, asset_b.ticker
    with write_transaction():
        existing = _item_on(user_id, canonical_pair(a, b))
        if existing is not None:
            existing.delete_instance()
    if existing is None:
        raise NotFound(f"{a}/{b} is not on {owner}")
    return f"{existing.a}/{existing.b}"


def _check_room(user_id: int, tier: str | None, owner: str) -> None:
    limit = ITEM_LIMITS.get(tier or "", ITEM_LIMITS["personal"])
    count = WatchlistItem.select().where(WatchlistItem.user == user_id).count()
    if count >= limit:
        raise Conflict(
            f"{owner[0].upper()}{owner[1:]} is full: {count} items, the {tier or 'personal'} "
            f"tier's limit is {limit}. Remove an item first."
        )


def _already_watched(owner: str, a: str, b: str, existing: WatchlistItem | None) -> str:
    """The one-line refusal of adding ``a``/``b``, naming the item that watches the pair."""
    if existing is None or (existing.a, existing.b) == (a, b):
        return f"{a}/{b} is already on {owner}"
    watched = f"{existing.a}/{existing.b}"
    return (
        f"{a}/{b} is already on {owner} as {watched} (one item per pair); "
        f"remove {watched} first to watch it as {a}/{b}"
    )


def add_item(
    universe: Universe,
    email: str,
    pair: str,
    *,
    approach: bool = True,
    in_zone: bool = True,
    hygiene: HygieneChange | None = None,
) -> WatchlistItem:
    """Watch ``pair`` (``"A/B"``) for ``email``; refused when the pair is already watched
    either way round, or when the watchlist is full (:func:`save_item`)."""
    user = find_user(email)
    asset_a, asset_b = parse_pair(universe, pair)
    item, _ = save_item(
        user.id,
        user.tier,
        asset_a,
        asset_b,
        approach=approach,
        in_zone=in_zone,
        owner=f"{user.email}'s watchlist",
        update=False,
        hygiene=hygiene,
    )
    return item


def set_item(
    universe: Universe,
    email: str,
    pair: str,
    *,
    approach: bool | None = None,
    in_zone: bool | None = None,
    hygiene: HygieneChange | None = None,
) -> WatchlistItem:
    """Change the switches and hygiene of the item watching ``pair`` as written (the CLI's
    ``watchlist set``); 404 when the user does not watch it that way round."""
    user = find_user(email)
    asset_a, asset_b = parse_pair(universe, pair)
    owner = f"{user.email}'s watchlist"
    existing = _item_on(user.id, canonical_pair(asset_a.ticker, asset_b.ticker))
    if existing is None:
        raise NotFound(f"{asset_a.ticker}/{asset_b.ticker} is not on {owner}")
    item, _ = save_item(
        user.id,
        user.tier,
        asset_a,
        asset_b,
        approach=approach,
        in_zone=in_zone,
        owner=owner,
        hygiene=hygiene,
    )
    return item


def remove_item(universe: Universe, email: str, pair: str) -> str:
    """Stop watching ``pair`` (written either way round); returns the removed item's pair."""
    user = find_user(email)
    asset_a, asset_b = parse_pair(universe, pair)
    return delete_item(user.id, asset_a, asset_b, owner=f"{user.email}'s watchlist")


def _item_on(user_id: int, key: str) -> WatchlistItem | None:
    """The user's item on the pair of ``key`` (:func:`canonical_pair`), whichever way round."""
    item: WatchlistItem | None = WatchlistItem.get_or_none(
        (WatchlistItem.user == user_id) & (WatchlistItem.pair_key == key)
    )
    return item


def items_of(email: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = watchlist_of(find_user(email).id)["items"]
    return items
