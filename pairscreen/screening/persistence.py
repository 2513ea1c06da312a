"""Persistence: which of the previous screens a pair also survived.

A pair that survives one screen may have done so by chance; one that survives screen after
screen has shown it more than once. The previous screens are the stored ones, regular or
point-in-time, each at least a day before the one after it (several screens of one day show
the same closes), newest first, up to the ``persistence_screens`` setting. Each screen keeps
its survivors' pairs as one line each (``Screen.survivor_keys``), so neither a screen nor a
``/pair`` request decodes a stored payload.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from pairscreen import clock
from pairscreen.db.models import Screen

SPACING = timedelta(days=1)


@dataclass(frozen=True)
class PastScreen:
    id: int
    generated_at: datetime
    as_of: date | None


def spaced_screens(
    before: datetime, count: int, *, include_first: bool = False
) -> list[PastScreen]:
    """Up to ``count`` stored screens, newest first, each at least a day before the previous
    one chosen; the first at least a day before ``before`` (at or before it when
    ``include_first``)."""
    if count <= 0:
        return []
    limit = before if include_first else before - SPACING
    rows = (
        Screen.select(Screen.id, Screen.generated_at, Screen.as_of)
        .where(Screen.generated_at <= limit)
        .order_by(Screen.generated_at.desc(), Screen.id.desc())
    )
    chosen: list[PastScreen] = []
    for row in rows.iterator():
        if row.generated_at > limit:
            continue
        chosen.append(PastScreen(row.id, row.generated_at, row.as_of))
        if len(chosen) == count:
            break
        limit = row.generated_at - SPACING
    return chosen


def survivor_sets(screens: Iterable[PastScreen]) -> list[frozenset[str]]:
    """Each screen's survivors as ``A/B`` keys (a screen pruned meanwhile: no survivors)."""
    ids = [s.id for s in screens]
    keys = _survivor_keys(ids)
    return [frozenset((keys.get(i) or "").splitlines()) for i in ids]


def _survivor_keys(ids: list[int]) -> dict[int, str | None]:
    rows = Screen.select(Screen.id, Screen.survivor_keys).where(Screen.id.in_(ids))
    return {int(row.id): row.survivor_keys for row in rows}


def survived_count(a: str, b: str, sets: list[frozenset[str]]) -> int:
    """In how many of ``sets`` the pair survived, written either way round."""
    forward, backward = f"{a}/{b}", f"{b}/{a}"
    return sum(1 for s in sets if forward in s or backward in s)


def recent_verdicts(a: str, b: str, count: int) -> list[dict[str, Any]]:
    """The pair's verdict in the latest stored screen and the ``count`` before it (spaced as
    persistence counts them), newest first: whether it was among the survivors.

    Only the matching line of each screen's survivor list is looked for, so a screen of
    100,000 survivors costs a substring search, not a decode.
    """
    screens = spaced_screens(clock.now(), count + 1, include_first=True)
    keys = _survivor_keys([s.id for s in screens])
    forward, backward = f"\n{a}/{b}\n", f"\n{b}/{a}\n"
    verdicts = []
    for screen in screens:
        text = "\n" + (keys.get(screen.id) or "")
        verdicts.append(
            {
                "generated_at": clock.iso(screen.generated_at),
                "as_of": screen.as_of.isoformat() if screen.as_of else None,
                "survived": forward in text or backward in text,
            }
        )
    return verdicts
