"""Filtered pages of ``/pairs``: by sector, zone and score, a page at a time.

A screen of 100,000 survivors makes a 3 MB ``/pairs``; a client after the top 100 of one
sector should not download it. The compact list is parsed once per screen into arrays
(score, sector, zone), so a filtered page costs one vectorised mask and the serialisation
of the page itself. A cursor names the screen it belongs to and the offset of the next
page, so paging through a screen that has been replaced meanwhile answers 404 rather than
silently mixing two screens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from pairscreen.errors import BadRequest, NotFound
from pairscreen.screening.published import PublishedScreen

DEFAULT_LIMIT = 100  # page size when a filter is given without ``limit``


@dataclass(frozen=True, eq=False)
class PairIndex:
    """The compact pairs of one screen, in published order, each as its JSON text, with
    arrays to filter them (texts, not dicts: a third of the memory, and a page is a join)."""

    generated_at: str
    texts: list[str]
    score: np.ndarray  # float
    sector: np.ndarray  # str
    zone: np.ndarray  # str, "" where the zone is unknown

    @classmethod
    def of(cls, pairs_body: str) -> PairIndex:
        body = json.loads(pairs_body)
        pairs: list[dict[str, Any]] = body["pairs"]
        return cls(
            body["generated_at"],
            [json.dumps(p, allow_nan=False) for p in pairs],
            np.array([p["score"] for p in pairs], dtype=float),
            np.array([p["sector"] for p in pairs], dtype=str),
            np.array([p.get("zone", "") for p in pairs], dtype=str),
        )


@dataclass(frozen=True)
class PairQuery:
    sector: str | None = None
    zone: str | None = None
    min_score: float | None = None
    limit: int | None = None
    cursor: str | None = None

    @property
    def is_plain(self) -> bool:
        """No parameter at all: the whole list, served from the bytes prepared per screen."""
        given = (self.sector, self.zone, self.min_score, self.limit, self.cursor)
        return all(value is None for value in given)


def pair_page(screen: PublishedScreen, index: PairIndex, query: PairQuery) -> str:
    """The ``/pairs`` body for ``query`` (JSON text): the matching pairs from the cursor on,
    at most ``limit`` of them, and ``next_cursor`` when more follow."""
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
    head = json.dumps({"generated_at": index.generated_at, "count": int(chosen.shape[0])})
    more = ""
    if offset + limit < matching.shape[0]:
        more = f', "next_cursor": "{screen.key[0]}.{offset + limit}"'
    pairs = ", ".join(index.texts[i] for i in chosen)
    return f'{head[:-1]}, "pairs": [{pairs}]{more}}}'


def _offset(screen: PublishedScreen, cursor: str | None) -> int:
    if cursor is None:
        return 0
    screen_id, _, offset = cursor.partition(".")
    if not (screen_id.isdigit() and offset.isdigit()):
        raise BadRequest(
            f"query parameter 'cursor' is {cursor[:64]!r}; allowed: a next_cursor from /pairs."
        )
    if int(screen_id) != screen.key[0]:
        raise NotFound(
            "The page this cursor names is gone: a newer screen has been published since. "
            "Ask again without cursor to page through the latest screen."
        )
    return int(offset)
