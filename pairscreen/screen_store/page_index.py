"""A screen view's page index: where each item lies in the view's text, best score first,
with the arrays a page filters on (score, sector, zone).

Built when a screen is published (:mod:`.stored_pages` stores it beside the screen) and, for a
screen published before that, by the reading side on the first filtered request
(:mod:`pairscreen.screen_views.pages`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import orjson

from pairscreen.engine.required_fields import ZONE
from pairscreen.screen_store.json_items import Field, walk
from pairscreen.screen_store.payload_parts import PayloadParts


class ItemSource(Protocol):
    """Where the items of a view are read from when the index does not hold its text: the
    blocks stored at publish (:class:`~pairscreen.screen_store.page_blocks.BlockItems`)."""

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


def payload_index(payload: str, each: Callable[[dict[str, Any]], None] | None = None) -> PageIndex:
    """The page index of a screen's payload (its ``/screen/latest`` view); ``each`` is given
    every survivor as decoded."""
    return PageIndex.of(payload, "survivors", survivor_zone, each)
