"""Watchlist items: each user sees and edits only their own."""

from __future__ import annotations

from typing import Any

import peewee

from pairscreen import clock
from pairscreen.access.accounts import AccountError, find_user
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import WatchlistItem
from pairscreen.universe import Universe


def item_json(item: WatchlistItem) -> dict[str, Any]:
    return {
        "pair": f"{item.a}/{item.b}",
        "a": item.a,
        "b": item.b,
        "notify_approach": item.notify_approach,
        "notify_in_zone": item.notify_in_zone,
        "last_notified_state": item.last_notified_state,
        "created_at": clock.iso(item.created_at),
    }


def watchlist_of(user_id: int) -> dict[str, Any]:
    items = (
        WatchlistItem.select()
        .where(WatchlistItem.user == user_id)
        .order_by(WatchlistItem.created_at, WatchlistItem.id)
    )
    body = [item_json(i) for i in items]
    return {"count": len(body), "items": body}


def parse_pair(universe: Universe, text: str) -> tuple[str, str]:
    """``"A/B"`` as two known tickers of the universe, or AccountError saying what is wrong."""
    parts = text.split("/")
    if len(parts) != 2:
        raise AccountError(f"pair must look like A/B, got {text!r}")
    tickers = []
    for part in parts:
        asset = universe.resolve(part.strip())
        if asset is None:
            raise AccountError(f"unknown ticker {part!r} in {text!r}")
        tickers.append(asset.ticker)
    if tickers[0] == tickers[1]:
        raise AccountError(f"a pair needs two different assets, got {text!r}")
    return tickers[0], tickers[1]


def add_item(
    universe: Universe, email: str, pair: str, *, approach: bool = True, in_zone: bool = True
) -> WatchlistItem:
    user = find_user(email)
    a, b = parse_pair(universe, pair)
    try:
        with write_transaction():
            return WatchlistItem.create(
                user=user.id, a=a, b=b, notify_approach=approach, notify_in_zone=in_zone
            )
    except peewee.IntegrityError:
        raise AccountError(f"{a}/{b} is already on {email}'s watchlist") from None


def remove_item(universe: Universe, email: str, pair: str) -> None:
    user = find_user(email)
    a, b = parse_pair(universe, pair)
    with write_transaction():
        deleted = (
            WatchlistItem.delete()
            .where(
                (WatchlistItem.user == user.id) & (WatchlistItem.a == a) & (WatchlistItem.b == b)
            )
            .execute()
        )
    if not deleted:
        raise AccountError(f"{a}/{b} is not on {email}'s watchlist")


def items_of(email: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = watchlist_of(find_user(email).id)["items"]
    return items
