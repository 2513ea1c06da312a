"""A screen's page items stored in compressed blocks (migration 19), written at publish.

The page index (:mod:`.stored_pages`) says which survivors a page shows, but their text lay
in the payload: 218 MB for 100,000 survivors, read from the database before the first page
of a new screen could be cut, over a second of a server's time. Publishing stores, beside
the index, the text each view lists for each survivor (``/screen/latest``'s slice of the
payload, ``/pairs``'s compact form) in blocks of ``BLOCK_ITEMS`` survivors in the index's
order (best score first), each block compressed on its own. A page reads the few blocks
holding its items in one query and decompresses only those; the payload is not read.

Only the newest screens keep their blocks (``KEPT_SCREENS``): pages are served of the latest
screen only, and an older one without blocks still pages from its payload.

A block is ``zlib`` of: the item count (uint32), each item's length in characters (uint32
each), then the items' text, UTF-8. A server keeps the last ``CACHED_BLOCKS`` blocks it
decoded per view, so paging on through a screen reads each block about once.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pairscreen.db.models import Screen, ScreenPageBlock
from pairscreen.db.rows import tuples
from pairscreen.errors import NotFound

BLOCK_ITEMS = 64  # a page of 100 reads two or three blocks when its items are close together
LEVEL = 6  # survivors' JSON is repetitive text; the level costs seconds only at publish
CACHED_BLOCKS = 64  # decoded blocks a server keeps per view of a screen
# Pages serve the latest screen only: the blocks of the newest screens are kept (the one
# before the newest, for the servers that have not noticed the newest yet), the rest dropped.
KEPT_SCREENS = 2
INSERT_ROWS = 16  # blocks per INSERT statement: a few MB at most
COLUMNS = {"survivors": ScreenPageBlock.survivors, "pairs": ScreenPageBlock.pairs}


def pack(items: Sequence[str]) -> bytes:
    """One block: ``items`` (JSON texts) with their lengths, compressed."""
    lengths = np.fromiter((len(t) for t in items), dtype="<u4", count=len(items))
    body = len(items).to_bytes(4, "little") + lengths.tobytes() + "".join(items).encode()
    return zlib.compress(body, LEVEL)


def unpack(blob: bytes) -> list[str]:
    """The items of a block, as :func:`pack` was given them."""
    body = zlib.decompress(blob)
    count = int.from_bytes(body[:4], "little")
    lengths = np.frombuffer(body, dtype="<u4", count=count, offset=4).astype(np.int64)
    text = body[4 + 4 * count :].decode()
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    return [text[s:e] for s, e in zip(starts, ends, strict=True)]


@dataclass(frozen=True)
class PreparedBlocks:
    """A screen's blocks ready to store: ``(survivors, pairs)`` blobs, block by block."""

    rows: list[tuple[bytes, bytes]]

    @property
    def stored_bytes(self) -> int:
        return sum(len(s) + len(p) for s, p in self.rows)

    def store(self, screen_id: int) -> None:
        rows = [
            {"screen": screen_id, "block": k, "survivors": s, "pairs": p}
            for k, (s, p) in enumerate(self.rows)
        ]
        for start in range(0, len(rows), INSERT_ROWS):
            ScreenPageBlock.insert_many(rows[start : start + INSERT_ROWS]).execute()
        drop_old_blocks()


def drop_old_blocks() -> None:
    """Delete the blocks of all but the ``KEPT_SCREENS`` newest regular screens: no page of
    an older screen is served (a cursor of one answers 404), and the items would add about a
    quarter of each kept screen's payload to the database."""
    newest = (
        Screen.select(Screen.id)
        .where(Screen.as_of.is_null())
        .order_by(Screen.id.desc())
        .limit(KEPT_SCREENS)
    )
    ScreenPageBlock.delete().where(ScreenPageBlock.screen.not_in(newest)).execute()


def prepare_blocks(
    count: int, survivor: Callable[[int], str], pair: Callable[[int], str]
) -> PreparedBlocks:
    """The blocks of ``count`` items in the index's order; ``survivor(i)`` and ``pair(i)``
    are item ``i``'s text in each view. Built one block at a time, so that only the
    compressed blocks are held, not a second copy of the payload."""
    rows = []
    for first in range(0, count, BLOCK_ITEMS):
        positions = range(first, min(first + BLOCK_ITEMS, count))
        rows.append((pack([survivor(i) for i in positions]), pack([pair(i) for i in positions])))
    return PreparedBlocks(rows)


def has_blocks(screen_id: int) -> bool:
    """Whether ``screen_id`` was published with its page items stored (after migration 19)."""
    return bool(ScreenPageBlock.select().where(ScreenPageBlock.screen == screen_id).exists())


class BlockItems:
    """The items of one view of a stored screen, read a block at a time as pages ask."""

    def __init__(self, screen_id: int, view: str) -> None:
        self.screen_id = screen_id
        self.column = COLUMNS[view]
        self._blocks: OrderedDict[int, list[str]] = OrderedDict()  # most recently used last
        self._lock = threading.Lock()  # pages are cut on several threads at once

    def texts(self, positions: np.ndarray) -> list[str]:
        """The JSON text of the items at ``positions`` (in the index's order)."""
        wanted = np.unique(positions // BLOCK_ITEMS).tolist()
        with self._lock:
            held = {b: self._blocks[b] for b in wanted if b in self._blocks}
        missing = [b for b in wanted if b not in held]
        if missing:
            read = self._read(missing)
            held.update(read)
            with self._lock:
                self._blocks.update(read)
        with self._lock:
            for b in wanted:
                if b in self._blocks:
                    self._blocks.move_to_end(b)
            while len(self._blocks) > max(CACHED_BLOCKS, len(wanted)):
                self._blocks.popitem(last=False)
        return [held[p // BLOCK_ITEMS][p % BLOCK_ITEMS] for p in positions.tolist()]

    def _read(self, blocks: list[int]) -> dict[int, list[str]]:
        rows = tuples(
            ScreenPageBlock.select(ScreenPageBlock.block, self.column).where(
                (ScreenPageBlock.screen == self.screen_id) & ScreenPageBlock.block.in_(blocks)
            )
        )
        # PostgreSQL's driver gives a memoryview
        read = {int(block): unpack(bytes(blob)) for block, blob in rows}
        if len(read) != len(blocks):  # the screen was pruned since this server last looked
            raise NotFound(
                "A newer screen has been published since: ask again without cursor to page "
                "through the latest screen."
            )
        return read
