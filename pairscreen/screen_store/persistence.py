"""Persistence: in which of the previous screens a pair passed every rule but persistence.

A pair that survives one screen may have done so by chance; one that passes screen after
screen has shown it more than once. The previous screens are the stored ones, regular or
point-in-time, each at least a day before the one after it (several screens of one day show
the same closes), newest first, up to the ``persistence_screens`` setting. On an intraday
universe each read an earlier bar than the one after it (its last closed bar at its time):
the screens of the worker that follows the bar, one per bar it screens after, not a day's.

What counts in a previous screen is that the pair passed its filter and every other
screen-wide rule (``Screen.candidate_keys``), not that it survived: counting survivors, a
universe with ``min_persistence`` on from its first screen would pass nothing then and so
nothing ever after. ``pairscreen evaluate`` replays the same count. Screens stored before
``candidate_keys`` existed count their survivors (``Screen.survivor_keys``), the same pairs
whenever that screen's persistence rule was off. Both are one line per pair, so neither a
screen nor a ``/pair`` request decodes a stored payload.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pairscreen import clock
from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.db.models import Screen

SPACING = timedelta(days=1)


@dataclass(frozen=True)
class PastScreen:
    id: int
    generated_at: datetime
    as_of: date | None


def spaced_screens(
    before: datetime, count: int, *, include_first: bool = False, bar: BarSize = DAILY
) -> list[PastScreen]:
    """Up to ``count`` stored screens, newest first, each at least a day before the previous
    one chosen; the first at least a day before ``before`` (at or before it when
    ``include_first``). On an intraday ``bar``, each read an earlier bar than the previous
    one chosen (:func:`_bar_spaced`)."""
    if count <= 0:
        return []
    if bar.intraday:
        return _bar_spaced(before, count, include_first, bar)
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


def _bar_spaced(
    before: datetime, count: int, include_first: bool, bar: BarSize
) -> list[PastScreen]:
    """The intraday spacing: a screen reads the last bar closed at its time, so each screen
    chosen was generated before the close of the bar the one after it read (two screens
    within one bar read the same closes: the later counts). A point-in-time screen, stored
    at its bar's close, reads that bar."""
    rows = (
        Screen.select(Screen.id, Screen.generated_at, Screen.as_of)
        .where(Screen.generated_at <= before)
        .order_by(Screen.generated_at.desc(), Screen.id.desc())
    )
    bound = None if include_first else _read_close(before, bar)  # chosen: generated before it
    chosen: list[PastScreen] = []
    for row in rows.iterator():
        if bound is not None and row.generated_at >= bound:
            continue
        chosen.append(PastScreen(row.id, row.generated_at, row.as_of))
        if len(chosen) == count:
            break
        bound = _read_close(row.generated_at, bar)
    return chosen


def _read_close(moment: datetime, bar: BarSize) -> datetime:
    """The close time of the last bar closed at ``moment``: the bar a screen then reads."""
    return datetime.fromtimestamp(bar.last_closed(moment), UTC)


def candidate_sets(screens: Iterable[PastScreen]) -> list[frozenset[str]]:
    """Each screen's pairs that passed every rule but persistence, as ``A/B`` keys (its
    survivors when stored before they were kept; a screen pruned meanwhile: none)."""
    ids = [s.id for s in screens]
    rows = Screen.select(Screen.id, Screen.candidate_keys, Screen.survivor_keys).where(
        Screen.id.in_(ids)
    )
    keys = {
        int(row.id): row.candidate_keys if row.candidate_keys is not None else row.survivor_keys
        for row in rows
    }
    return [frozenset((keys.get(i) or "").splitlines()) for i in ids]


def _survivor_keys(ids: list[int]) -> dict[int, str | None]:
    rows = Screen.select(Screen.id, Screen.survivor_keys).where(Screen.id.in_(ids))
    return {int(row.id): row.survivor_keys for row in rows}


def survived_count(a: str, b: str, sets: list[frozenset[str]]) -> int:
    """In how many of ``sets`` the pair is, written either way round."""
    forward, backward = f"{a}/{b}", f"{b}/{a}"
    return sum(1 for s in sets if forward in s or backward in s)


def recent_verdicts(a: str, b: str, count: int, bar: BarSize = DAILY) -> list[dict[str, Any]]:
    """The pair's verdict in the latest stored screen and the ``count`` before it (spaced as
    persistence counts them), newest first: whether it was among the survivors (which, with
    a persistence rule on, may be fewer than the screens its ``survived_last`` counts).

    Only the matching line of each screen's survivor list is looked for, so a screen of
    100,000 survivors costs a substring search, not a decode.
    """
    screens = spaced_screens(clock.now(), count + 1, include_first=True, bar=bar)
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
