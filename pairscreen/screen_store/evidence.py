"""The screens' published track record, stored beside them: write one evaluation, read the
newest (the ``/evidence`` body).

The evaluation itself (``pairscreen.evaluation``) only computes; the CLI and the worker
store its result here, and the HTTP handler reads it from here: only the database and
``json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime

from pairscreen import clock
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import Evidence

KEEP = 10  # published evaluations kept; older ones are deleted when a new one is written


@dataclass(frozen=True)
class PublishedEvidence:
    id: int
    published_at: datetime
    body: str  # JSON

    @property
    def etag(self) -> str:
        return f'"evidence-{self.id}"'


def publish(body: dict[str, object], first: date, last: date, at: datetime) -> int:
    """Store ``body`` (``published_at`` added) as the newest evaluation; keep the last
    :data:`KEEP`. Returns the row's id."""
    text = json.dumps({"published_at": clock.iso(at), **body}, allow_nan=False)
    with write_transaction():
        row = Evidence.create(published_at=at, first_day=first, last_day=last, payload=text)
        kept = Evidence.select(Evidence.id).order_by(Evidence.id.desc()).limit(KEEP)
        Evidence.delete().where(Evidence.id.not_in(kept)).execute()
    return int(row.id)


def latest() -> PublishedEvidence | None:
    """The newest published evaluation, or None when none was ever published."""
    row = Evidence.select().order_by(Evidence.id.desc()).first()
    if row is None:
        return None
    return PublishedEvidence(int(row.id), row.published_at, str(row.payload))
