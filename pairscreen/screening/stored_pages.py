"""A screen's page index, built when the screen is published and stored beside it.

The screen is published by one process (``screen run``, the worker) and served by others
(``pairscreen serve``). Parsing a screen of 100,000 survivors to index its pages takes
seconds, so doing it on a server's first filtered request made that request seconds long.
Publishing builds the index once instead (one walk of the payload) and stores its arrays,
compressed, in ``screen_page_index`` (migration 17), in the transaction that publishes the
screen; a server reads them (under a MB) on its first filtered request.

One index serves both views: ``/pairs`` lists the same survivors in the same order (best
score first, ties in published order) with the same score, sector and zone; its page shows
each chosen survivor compacted from its place in the payload, the same text the whole
``/pairs`` body holds for it. A screen published before the table existed has no row: its
views are parsed on their first filtered request, as before (:mod:`.pages`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pairscreen.db.models import ScreenPageIndex
from pairscreen.screening.pages import PageIndex, pair_index, payload_index, survivor_index
from pairscreen.screening.pairs_view import compact_pair, compact_pairs
from pairscreen.screening.published import PublishedScreen

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

    def view(
        self,
        items_key: str,
        head: dict[str, Any],
        text: str,
        render: Callable[[str], str] | None,
    ) -> PageIndex:
        """The index of one view whose items lie in ``text`` (rendered by ``render``)."""
        arrays = (self.start, self.end, self.score, self.sector, self.zone)
        return PageIndex(head, items_key, text, *arrays, render=render)


@dataclass(frozen=True)
class PreparedIndex:
    """A payload's page index ready to store: built before the publishing transaction (it
    takes seconds for 100,000 survivors, and an SQLite write lock held that long would make
    every other writer wait), stored inside it, so no server ever sees the screen without."""

    head: str  # JSON
    arrays: bytes  # a compressed .npz

    def store(self, screen_id: int) -> None:
        ScreenPageIndex.insert(screen=screen_id, head=self.head, arrays=self.arrays).execute()


def prepare_page_index(payload: str) -> PreparedIndex:
    """The page index of the screen ``payload``, one walk of it."""
    index = payload_index(payload)
    return PreparedIndex(json.dumps(index.head, allow_nan=False), pack(index))


def survivor_page_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/screen/latest``: the stored one, else parsed."""
    stored = _stored(screen)
    if stored is None:
        return survivor_index(screen)
    return stored.view("survivors", stored.head, screen.payload, None)


def pair_page_index(screen: PublishedScreen) -> PageIndex:
    """The page index of ``screen``'s ``/pairs``: the stored one, pointing into the payload
    and compacting each item of a page, else parsed from the ``/pairs`` body."""
    stored = _stored(screen)
    if stored is None:
        return pair_index(screen)
    body = compact_pairs(stored.head["generated_at"], [])
    head = {k: v for k, v in body.items() if k not in ("count", "pairs")}
    return stored.view("pairs", head, screen.payload, compact_text)


def compact_text(survivor: str) -> str:
    """A survivor's JSON text as ``/pairs`` lists it."""
    return json.dumps(compact_pair(json.loads(survivor)), allow_nan=False)


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


def unpack(head: str, blob: bytes) -> StoredIndex:
    with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
        start = arrays["start"]
        return StoredIndex(
            json.loads(head),
            start,
            start + arrays["length"].astype(np.int64),
            arrays["score"],
            arrays["sectors"][arrays["sector_code"]],
            arrays["zones"][arrays["zone_code"]],
        )


def _stored(screen: PublishedScreen) -> StoredIndex | None:
    """The index stored for ``screen``, read once per screen; None for a screen published
    before screens stored one."""
    return screen.memo(MEMO, lambda: _read(screen.key[0]))


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
    return unpack(head, bytes(blob))  # PostgreSQL's driver gives a memoryview
