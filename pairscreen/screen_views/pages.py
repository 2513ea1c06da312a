"""Filtered pages of a screen: by sector, zone and score, a page at a time.

A screen of 100,000 survivors makes a 3 MB ``/pairs`` and a far bigger ``/screen/latest``;
a client after the top 100 of one sector should download neither. Each view is indexed by a
:class:`~pairscreen.screen_store.page_index.PageIndex` (where each item lies in the view's
text, best score first, and arrays of score, sector and zone), so a filtered page costs one
vectorised mask and the join of the page's slices (or, for a screen published with its
items in blocks, of the items read from them). A screen's index is built when it is
published and stored beside it (:mod:`pairscreen.screen_store.stored_pages`); the functions
here parse a view instead, for the screens published before that. A cursor names the
screen it belongs to and the offset of the next page, so paging through a screen that has
been replaced meanwhile answers 404 rather than silently mixing two screens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pairscreen.engine.required_fields import ZONE
from pairscreen.errors import BadRequest, NotFound
from pairscreen.screen_store.compact_pairs import compact_pairs
from pairscreen.screen_store.page_blocks import BlockItems
from pairscreen.screen_store.page_index import PageIndex, payload_index
from pairscreen.screen_store.published import PublishedScreen
from pairscreen.screen_store.stored_pages import compact_text, stored_index
from pairscreen.screen_views.pairs_view import pairs_json

DEFAULT_LIMIT = 100  # page size when a filter is given without ``limit``


def pair_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/pairs`` view."""
    return PageIndex.of(pairs_json(screen), "pairs", lambda pair: pair.get(ZONE.name))


def survivor_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/screen/latest`` view."""
    return payload_index(screen.payload)


def survivor_page_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/screen/latest``: the stored one, its items read
    from their blocks (or cut from the payload when it has none), else parsed."""
    stored = stored_index(screen)
    if stored is None:
        return survivor_index(screen)
    if stored.blocks:
        items = BlockItems(screen.key[0], "survivors")
        return stored.view("survivors", stored.head, "", None, items)
    return stored.view("survivors", stored.head, screen.payload, None)


def pair_page_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/pairs``: the stored one, its items read from their
    blocks (or compacted from the payload, each as a page first shows it, when it has
    none), else parsed from the ``/pairs`` body."""
    stored = stored_index(screen)
    if stored is None:
        return pair_index(screen)
    body = compact_pairs(stored.head["generated_at"], [])
    head = {k: v for k, v in body.items() if k not in ("count", "pairs")}
    if stored.blocks:
        return stored.view("pairs", head, "", None, BlockItems(screen.key[0], "pairs"))
    return stored.view("pairs", head, screen.payload, compact_text)


@dataclass(frozen=True)
class PageQuery:
    sector: str | None = None
    zone: str | None = None
    min_score: float | None = None
    limit: int | None = None
    cursor: str | None = None

    @property
    def is_plain(self) -> bool:
        """No parameter at all: the whole view, served from the bytes prepared per screen."""
        given = (self.sector, self.zone, self.min_score, self.limit, self.cursor)
        return all(value is None for value in given)


def page(
    screen: PublishedScreen,
    index: PageIndex,
    query: PageQuery,
    head: Mapping[str, Any] | None = None,
) -> str:
    """The body for ``query`` (JSON text): the matching items from the cursor on, at most
    ``limit`` of them, their ``count``, and ``next_cursor`` when more follow; ``head``'s
    fields replace the stored ones of the same name (a screen's staleness judged now)."""
    offset = _offset(screen, query.cursor)
    keep = np.ones(index.score.shape[0], dtype=bool)
    if query.sector is not None:
        keep &= index.sector == query.sector
    if query.zone is not None:
        keep &= index.zone == query.zone
    if query.min_score is not None:
        keep &= index.score >= query.min_score
    matching = np.flatnonzero(keep)
    limit = query.limit or DEFAULT_LIMIT
    chosen = matching[offset : offset + limit]
    fields = {**index.head, **(head or {}), "count": int(chosen.shape[0])}
    text = json.dumps(fields, allow_nan=False)
    more = ""
    if offset + limit < matching.shape[0]:
        more = f', "next_cursor": "{screen.key[0]}.{offset + limit}"'
    items = ", ".join(index.texts(chosen))
    return f'{text[:-1]}, "{index.items_key}": [{items}]{more}}}'


def _offset(screen: PublishedScreen, cursor: str | None) -> int:
    if cursor is None:
        return 0
    screen_id, _, offset = cursor.partition(".")
    if not (screen_id.isdigit() and offset.isdigit()):
        raise BadRequest(
            f"query parameter 'cursor' is {cursor[:64]!r}; "
            "allowed: the next_cursor of the previous page."
        )
    if int(screen_id) != screen.key[0]:
        raise NotFound(
            "The page this cursor names is gone: a newer screen has been published since. "
            "Ask again without cursor to page through the latest screen."
        )
    return int(offset)
