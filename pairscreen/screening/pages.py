"""Filtered pages of a screen: by sector, zone and score, a page at a time.

A screen of 100,000 survivors makes a 3 MB ``/pairs`` and a far bigger ``/screen/latest``;
a client after the top 100 of one sector should download neither. Each view is indexed by a
:class:`PageIndex` (where each item lies in the view's text, best score first, and arrays of
score, sector and zone), so a filtered page costs one vectorised mask and the join of the
page's slices (or, for a screen published with its items in blocks, of the items read from
them). A screen's index is built when it is published and stored beside it
(:mod:`pairscreen.screening.stored_pages`); the functions here parse a view instead, for the
screens published before that. A cursor names the screen it belongs to and the offset
of the next page, so paging through a screen that has been replaced meanwhile answers 404
rather than silently mixing two screens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import orjson

from pairscreen.engine.required_fields import ZONE
from pairscreen.errors import BadRequest, NotFound
from pairscreen.runtime.published import PublishedScreen
from pairscreen.screening.json_items import Field, walk
from pairscreen.screening.pairs_view import pairs_json
from pairscreen.screening.payload_parts import PayloadParts

DEFAULT_LIMIT = 100  # page size when a filter is given without ``limit``


class ItemSource(Protocol):
    """Where the items of a view are read from when the index does not hold its text: the
    blocks stored at publish (:class:`~pairscreen.screening.page_blocks.BlockItems`)."""

    def texts(self, positions: np.ndarray) -> list[str]: ...


@dataclass(frozen=True, eq=False)
class PageIndex:
    """One view of a screen (``/pairs`` or ``/screen/latest``) ready to be paged: the body's
    other fields, and where each of its items lies in the view's text, best score first,
    with arrays to filter them. The index holds places, not copies: the view's text is kept
    by the screen anyway, and a page is a join of slices of it."""

    head: dict[str, Any]  # every field of the body but the items and their count
    items_key: str  # "pairs" or "survivors"
    text: str  # the whole view, as served without parameters ("" when ``source`` is given)
    start: np.ndarray  # int, where each item's JSON text starts in ``text``
    end: np.ndarray  # int, where it ends
    score: np.ndarray  # float
    sector: np.ndarray  # str
    zone: np.ndarray  # str, "" where the zone is unknown
    # How an item's text is made from its slice of ``text``; None: the slice is the item (an
    # index that points into another view's text renders each item of a page from it).
    render: Callable[[str], str] | None = None
    # Where the items' text is read instead, each as the view lists it (no ``text`` held).
    source: ItemSource | None = None
    # The items rendered so far, by position: each is rendered once, as a page first shows it.
    _rendered: dict[int, str] = field(default_factory=dict, repr=False)

    def item(self, i: int) -> str:
        """The JSON text of item ``i`` (in the index's order), as the view lists it."""
        if self.render is None:
            return self.text[self.start[i] : self.end[i]]
        text = self._rendered.get(i)
        if text is None:
            text = self._rendered.setdefault(i, self.render(self.text[self.start[i] : self.end[i]]))
        return text

    def texts(self, positions: np.ndarray) -> list[str]:
        """The JSON text of the items at ``positions``, as the view lists them."""
        if self.source is not None:
            return self.source.texts(positions)
        return [self.item(i) for i in positions]

    @classmethod
    def of(
        cls,
        text: str,
        items_key: str,
        zone_of: Callable[[dict[str, Any]], str | None],
        each: Callable[[dict[str, Any]], None] | None = None,
    ) -> PageIndex:
        """The index of the view ``text``; ``each`` is given every item as decoded, in the
        text's order (what else publishing needs from the same walk)."""
        head: dict[str, Any] = {}
        items: list[PlacedItem] = []
        for part in walk(text, items_key):  # one item decoded at a time
            if isinstance(part, Field):
                head[part.name] = part.value
            else:
                items.append(PlacedItem(part.start, part.end, _summary(part.value, zone_of, each)))
        return cls.of_items(head, items_key, text, items)

    @classmethod
    def of_items(
        cls, head: dict[str, Any], items_key: str, text: str, items: Iterable[PlacedItem]
    ) -> PageIndex:
        """The index of a view whose fields but its items are ``head`` and whose items lie
        at the given places of ``text`` (``text`` may be "" when pages read them elsewhere)."""
        start, end, score, sector, zone = [], [], [], [], []
        for item in items:
            start.append(item.start)
            end.append(item.end)
            score.append(item.summary[0])
            sector.append(item.summary[1])
            zone.append(item.summary[2])
        scores = np.array(score, dtype=float)
        order = np.argsort(-scores, kind="stable")  # ties keep the published order
        return cls(
            {k: v for k, v in head.items() if k != "count"},
            items_key,
            text,
            np.array(start, dtype=np.int64)[order],
            np.array(end, dtype=np.int64)[order],
            scores[order],
            np.array(sector, dtype=str)[order],
            np.array(zone, dtype=str)[order],
        )


@dataclass(frozen=True)
class PlacedItem:
    """Where an item lies in its view's text, and its score, sector and zone."""

    start: int
    end: int
    summary: tuple[float, str, str]


def _summary(
    item: dict[str, Any],
    zone_of: Callable[[dict[str, Any]], str | None],
    each: Callable[[dict[str, Any]], None] | None,
) -> tuple[float, str, str]:
    if each is not None:
        each(item)
    return item["score"], item["sector"], zone_of(item) or ""


def survivor_zone(survivor: dict[str, Any]) -> str | None:
    """A survivor's zone, as ``/screen/latest`` lists it."""
    zone: str | None = survivor["metrics"].get(ZONE.name)
    return zone


def placed_survivors(
    payload: PayloadParts, each: Callable[[dict[str, Any]], None] | None = None
) -> Iterator[PlacedItem]:
    """Every survivor of ``payload`` with its place in the payload's text, decompressed and
    decoded one at a time (``each`` is given each as decoded). orjson decodes a survivor to
    the same objects as ``json.loads``, five times faster: publishing a screen decodes every
    survivor once."""
    at = len(payload.opening)
    for i in range(payload.n_survivors):
        text = payload.survivor(i)
        at += 1 if i else 0  # the comma between two survivors
        yield PlacedItem(at, at + len(text), _summary(orjson.loads(text), survivor_zone, each))
        at += len(text)


def pair_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/pairs`` view."""
    return PageIndex.of(pairs_json(screen), "pairs", lambda pair: pair.get(ZONE.name))


def survivor_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/screen/latest`` view."""
    return payload_index(screen.payload)


def payload_index(payload: str, each: Callable[[dict[str, Any]], None] | None = None) -> PageIndex:
    """The page index of a screen's payload (its ``/screen/latest`` view); ``each`` is given
    every survivor as decoded."""
    return PageIndex.of(payload, "survivors", survivor_zone, each)


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
