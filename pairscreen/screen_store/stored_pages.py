"""A screen's page index, built when the screen is published and stored beside it.

The screen is published by one process (``screen run``, the worker) and served by others
(``pairscreen serve``). Parsing a screen of 100,000 survivors to index its pages takes
seconds, so doing it on a server's first filtered request made that request seconds long.
Publishing builds the index once instead (one walk of the payload) and stores its arrays,
compressed, in ``screen_page_index`` (migration 17), in the transaction that publishes the
screen; a server reads them (under a MB) on its first filtered request. The items the pages
show are stored with it, in compressed blocks (:mod:`.page_blocks`, migration 19), so that a
server answers a new screen's first pages without reading its payload at all.

One index serves both views: ``/pairs`` lists the same survivors in the same order (best
score first, ties in published order) with the same score, sector and zone; its page shows
each chosen survivor compacted from its place in the payload, the same text the whole
``/pairs`` body holds for it. A screen published before the table existed has no row: its
views are parsed on their first filtered request, as before
(:mod:`pairscreen.screen_views.pages`); one published with an index but before the blocks
existed has its pages cut from its payload.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from pairscreen.db.models import ScreenPageIndex
from pairscreen.screen_store.compact_pairs import compact_pair
from pairscreen.screen_store.page_blocks import (
    PreparedBlocks,
    has_blocks,
    prepare_blocks,
)
from pairscreen.screen_store.page_index import ItemSource, PageIndex, placed_survivors
from pairscreen.screen_store.payload_parts import PayloadParts
from pairscreen.screen_store.published import PublishedScreen

MEMO = "stored_page_index"  # the stored index's name among a screen's memos


@dataclass(frozen=True, eq=False)
class StoredIndex:
    """The stored part of a page index: all but the view's text."""

    head: dict[str, Any]  # the payload's fields but the survivors
    start: np.ndarray
    end: np.ndarray
    score: np.ndarray
    sector: np.ndarray
    zone: np.ndarray
    blocks: bool  # the items are stored in blocks too (published after migration 19)

    def view(
        self,
        items_key: str,
        head: dict[str, Any],
        text: str,
        render: Callable[[str], str] | None,
        source: ItemSource | None = None,
    ) -> PageIndex:
        """The index of one view whose items lie in ``text`` (rendered by ``render``), or are
        read from ``source``."""
        arrays = (self.start, self.end, self.score, self.sector, self.zone)
        return PageIndex(head, items_key, text, *arrays, render=render, source=source)


@dataclass(frozen=True)
class PreparedIndex:
    """A payload's page index ready to store: built before the publishing transaction (it
    takes seconds for 100,000 survivors, and an SQLite write lock held that long would make
    every other writer wait), stored inside it, so no server ever sees the screen without."""

    head: str  # JSON
    arrays: bytes  # a compressed .npz
    blocks: PreparedBlocks  # the items of both views

    def store(self, screen_id: int) -> None:
        ScreenPageIndex.insert(screen=screen_id, head=self.head, arrays=self.arrays).execute()
        self.blocks.store(screen_id)


def prepare_page_index(payload: PayloadParts) -> PreparedIndex:
    """The page index of the screen ``payload`` and its items in blocks, decoding each
    survivor once (and decompressing it again as its block is packed)."""
    compact: list[str] = []  # each survivor's /pairs item, in the payload's order
    placed = placed_survivors(payload, lambda s: compact.append(_compact_json(s)))
    index = PageIndex.of_items(payload.fields(), "survivors", "", placed)
    # The payload's order of each item of the index: the items' starts grow along the text.
    rank = np.searchsorted(np.sort(index.start), index.start).tolist()
    blocks = prepare_blocks(
        len(rank), lambda i: payload.survivor(rank[i]), lambda i: compact[rank[i]]
    )
    return PreparedIndex(json.dumps(index.head, allow_nan=False), pack(index), blocks)


def stored_index(screen: PublishedScreen) -> StoredIndex | None:
    """The index stored for ``screen``, read once per screen; None for a screen published
    before screens stored one."""
    return screen.memo(MEMO, lambda: _read(screen.key[0]))


def stored_fields(screen: PublishedScreen) -> dict[str, Any] | None:
    """The fields of ``screen``'s payload but its survivors, from its stored index (no read
    of the payload); None for a screen published before screens stored one."""
    stored = stored_index(screen)
    return stored.head if stored is not None else None


def compact_text(survivor: str) -> str:
    """A survivor's JSON text as ``/pairs`` lists it."""
    return _compact_json(orjson.loads(survivor))


def _compact_json(survivor: dict[str, Any]) -> str:
    return json.dumps(compact_pair(survivor), allow_nan=False)


def pack(index: PageIndex) -> bytes:
    """The arrays of ``index`` as a compressed ``.npz``: sectors and zones as codes into
    their distinct names, each item's place as its start and length."""
    sectors, sector_code = np.unique(index.sector, return_inverse=True)
    zones, zone_code = np.unique(index.zone, return_inverse=True)
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        start=index.start,
        length=(index.end - index.start).astype(np.uint32),
        score=index.score,
        sectors=sectors,
        sector_code=sector_code.astype(np.int32),
        zones=zones,
        zone_code=zone_code.astype(np.int8),
    )
    return buffer.getvalue()


def unpack(head: str, blob: bytes, blocks: bool) -> StoredIndex:
    with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
        start = arrays["start"]
        return StoredIndex(
            json.loads(head),
            start,
            start + arrays["length"].astype(np.int64),
            arrays["score"],
            arrays["sectors"][arrays["sector_code"]],
            arrays["zones"][arrays["zone_code"]],
            blocks,
        )


def _read(screen_id: int) -> StoredIndex | None:
    row = (
        ScreenPageIndex.select(ScreenPageIndex.head, ScreenPageIndex.arrays)
        .where(ScreenPageIndex.screen == screen_id)
        .tuples()
        .first()
    )
    if row is None:
        return None
    head, blob = row
    # PostgreSQL's driver gives a memoryview
    return unpack(head, bytes(blob), has_blocks(screen_id))
