"""Watchlist items: each user sees and edits only their own, one item per pair (``A/B`` and
``B/A`` are one pair, see :func:`add_item`)."""

from __future__ import annotations

from typing import Any

import peewee

from pairscreen import clock
from pairscreen.access.accounts import AccountError, AccountNotFound, find_user
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import WatchlistItem, canonical_pair
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
    """Watch ``pair`` for ``email``, or refuse when the user already watches it either way round.

    ``A/B`` and ``B/A`` are one pair: one item, so one ratio move is one notification. Adding
    the mirror of a watched pair is refused rather than folded into the item, because the
    item's orientation decides what "top" and "bottom" mean in its notifications: quietly
    keeping the other orientation, or flipping it mid-excursion, would surprise the trader.
    The unique ``pair_key`` index settles two concurrent adds the same way.
    """
    user = find_user(email)
    a, b = parse_pair(universe, pair)
    key = canonical_pair(a, b)
    try:
        with write_transaction():
            existing = _item_on(user.id, key)
            if existing is None:
                return WatchlistItem.create(
                    user=user.id,
                    a=a,
                    b=b,
                    pair_key=key,
                    notify_approach=approach,
                    notify_in_zone=in_zone,
                )
    except peewee.IntegrityError:
        existing = _item_on(user.id, key)  # a concurrent add of this pair won
    raise AccountError(_already_watched(email, a, b, existing))


def _already_watched(email: str, a: str, b: str, existing: WatchlistItem | None) -> str:
    """The one-line refusal of adding ``a``/``b``, naming the item that watches the pair."""
    if existing is None or (existing.a, existing.b) == (a, b):
        return f"{a}/{b} is already on {email}'s watchlist"
    watched = f"{existing.a}/{existing.b}"
    return (
        f"{a}/{b} is already on {email}'s watchlist as {watched} (one item per pair); "
        f"remove {watched} first to watch it as {a}/{b}"
    )


def remove_item(universe: Universe, email: str, pair: str) -> str:
    """Stop watching ``pair`` (written either way round); returns the removed item's pair."""
    user = find_user(email)
    a, b = parse_pair(universe, pair)
    with write_transaction():
        existing = _item_on(user.id, canonical_pair(a, b))
        if existing is not None:
            existing.delete_instance()
    if existing is None:
        raise AccountNotFound(f"{a}/{b} is not on {email}'s watchlist")
    return f"{existing.a}/{existing.b}"


def _item_on(user_id: int, key: str) -> WatchlistItem | None:
    """The user's item on the pair of ``key`` (:func:`canonical_pair`), whichever way round."""
    item: WatchlistItem | None = WatchlistItem.get_or_none(
        (WatchlistItem.user == user_id) & (WatchlistItem.pair_key == key)
    )
    return item


def items_of(email: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = watchlist_of(find_user(email).id)["items"]
    return items
