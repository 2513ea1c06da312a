"""Publishing a computed screen: the one place where a screen becomes a stored ``Screen`` row.

Both ``screen run`` and ``screen run --as-of`` come here with the screen's JSON text as the
computation wrote it (:class:`ComputedScreen`), so the text is stored as is (never parsed and
written again), in one transaction: a crash mid-publish leaves the previous screen served.
:func:`publish_screen` lists each step as one call; a step that must happen at publish time
(something stored beside the row, say) is one more call there.

A regular screen becomes the latest one: its pairs' verdicts and its page index with the
pages' items are stored beside its row (prepared before the transaction), old regular
screens beyond ``screens_kept`` go (but not those the next screen's persistence reads), the
``screen`` job time is set, and the store (:mod:`.store`) drops what its cache of the latest
screen holds. A point-in-time screen (``as_of``) is history: it replaces an earlier screen
as of the same day, prunes nothing, stores no verdicts nor page index and never becomes the
latest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from peewee import fn

from pairscreen import clock
from pairscreen.config import Settings
from pairscreen.contracts.bars import DAILY, BarSize
from pairscreen.db.connection import database, is_sqlite, write_transaction
from pairscreen.db.models import JobRun, Screen, ScreenPayload
from pairscreen.screen_store.payload_parts import PayloadParts
from pairscreen.screen_store.persistence import spaced_screens
from pairscreen.screen_store.stored_pages import prepare_page_index
from pairscreen.screen_store.verdict_store import EncodedVerdicts
from pairscreen.screen_store.verdict_store import store as store_verdicts

STREAMED_PAYLOAD_BYTES = 1 << 20  # SQLite payloads from this size are written in slices
PAYLOAD_SLICE = 1 << 20


@dataclass(frozen=True)
class ComputedScreen:
    """A screen ready to publish: its JSON text and the counts the summary reports."""

    generated_at: datetime
    payload: PayloadParts
    n_pairs: int
    n_survivors: int
    rejected: dict[str, int]
    data_source: str
    survivor_keys: str = ""
    candidate_keys: str = ""  # the pairs that passed every rule but persistence
    # Every screened pair's verdict, compact, encoded on demand (a regular screen's only).
    verdicts: Callable[[], EncodedVerdicts] | None = None
    bar: BarSize = DAILY  # the universe's bar: how the screens persistence counts are spaced

    @property
    def text(self) -> str:
        """The payload's whole text (built on each call: a big screen's is hundreds of MB)."""
        return self.payload.text()


@dataclass(frozen=True)
class ScreenSummary:
    screen_id: int
    generated_at: datetime
    n_pairs_screened: int
    n_survivors: int
    rejected: dict[str, int]
    publish_seconds: float = 0.0


def publish_screen(
    settings: Settings,
    screen: ComputedScreen,
    *,
    as_of: date | None = None,
    as_of_close: datetime | None = None,
) -> ScreenSummary:
    """Store ``screen`` in one transaction: as the latest screen, or as the screen as of
    ``as_of`` (history). Called through :meth:`.store.ScreenStore.publish`, which then
    drops what its cache of the latest screen holds.

    An intraday screen as of a bar's close gives that close as ``as_of_close`` (``as_of`` is
    then its day): it replaces only an earlier screen as of the same close, so a day keeps
    one answer per bar."""
    latest = as_of is None
    # Prepared before the transaction opens, so that it stays short: what the latest screen
    # stores beside its row (every pair's verdict, the page index and the pages' items).
    verdicts = screen.verdicts() if latest and screen.verdicts is not None else None
    started = time.perf_counter()  # publish_seconds: from the page index on
    page_index = prepare_page_index(screen.payload) if latest else None
    payload = screen.payload if as_of is None else screen.payload.with_as_of(as_of, as_of_close)
    with write_transaction():
        if as_of is not None:
            same = Screen.as_of == as_of  # one answer per past day, or per bar of it
            if as_of_close is not None:
                same &= Screen.generated_at == as_of_close
            Screen.delete().where(same).execute()
        row_id = _store_row(screen, payload, as_of)
        if verdicts is not None:
            store_verdicts(row_id, verdicts)
        if page_index is not None:
            page_index.store(row_id)
        if latest:
            _prune(settings, screen.generated_at, screen.bar)
            JobRun.replace(name="screen", finished_at=clock.now()).execute()
    return ScreenSummary(
        row_id,
        screen.generated_at,
        screen.n_pairs,
        screen.n_survivors,
        screen.rejected,
        time.perf_counter() - started,
    )


def _store_row(screen: ComputedScreen, payload: PayloadParts, as_of: date | None) -> int:
    row = Screen.create(
        generated_at=screen.generated_at,
        n_pairs_screened=screen.n_pairs,
        n_survivors=screen.n_survivors,
        data_source=screen.data_source,
        as_of=as_of,
        survivor_keys=screen.survivor_keys,
        candidate_keys=screen.candidate_keys,
    )
    _store_payload(int(row.id), payload)
    return int(row.id)


def _prune(settings: Settings, generated_at: datetime, bar: BarSize) -> None:
    """Delete the regular screens beyond ``screens_kept``, keeping those the next screen's
    persistence counts however many ran between; point-in-time screens are never pruned."""
    regular = Screen.as_of.is_null()
    keep = (
        Screen.select(Screen.id)
        .where(regular)
        .order_by(Screen.id.desc())
        .limit(settings.screens_kept)
    )
    counted = [s.id for s in spaced_screens(generated_at, settings.persistence_screens, bar=bar)]
    pruned = Screen.id.not_in(keep) & Screen.id.not_in(counted or [0]) & regular
    Screen.delete().where(pruned).execute()


def _store_payload(screen_id: int, payload: PayloadParts) -> None:
    """Store the payload's text; on SQLite, a big one streamed a slice at a time.

    Bound as a parameter, a value is copied twice (the binding, then the row record): a
    440 MB screen would cost three times its size at the moment it is published. On SQLite
    a placeholder of its size (``zeroblob``, the last column of its table, so never built in
    memory) is written in slices of the survivors as they are decompressed, and the text
    never exists whole.
    """
    if not is_sqlite():
        ScreenPayload.create(screen=screen_id, payload=payload.text())
        return
    size = sum(len(piece.encode()) for piece in payload.pieces())
    if size < STREAMED_PAYLOAD_BYTES:
        ScreenPayload.create(screen=screen_id, payload=payload.text())
        return
    ScreenPayload.create(screen=screen_id, payload=fn.zeroblob(size))
    table = ScreenPayload._meta.table_name  # peewee's model metadata
    with database.connection().blobopen(table, "payload", screen_id) as blob:
        pending: list[bytes] = []
        held = 0
        for piece in payload.pieces():
            pending.append(piece.encode())
            held += len(pending[-1])
            if held >= PAYLOAD_SLICE:
                blob.write(b"".join(pending))
                pending, held = [], 0
        blob.write(b"".join(pending))
