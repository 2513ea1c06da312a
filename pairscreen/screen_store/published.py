"""The latest published screen, held in memory by each runtime.

``/screen/latest`` and ``/pairs`` answer from it: one indexed read of the latest row's id
tells whether the screen in memory is still the latest, instead of reading and parsing the
whole payload on every request. A new screen's payload (218 MB for 100,000 survivors) is
read only when an answer needs it (the whole view, the CSV): the pages of a screen published
with its page items in blocks never do. The cache belongs to a runtime's
:class:`~pairscreen.screen_store.store.ScreenStore` (not to this module) so that each
runtime, bound to its own database, serves its own screen.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from pairscreen.db.models import Screen, ScreenPayload
from pairscreen.db.proxy import database
from pairscreen.errors import NotFound

GZIP_LEVEL = 6  # a screen of 100,000 survivors compresses in about a second, once
GZIP_SLICE = 1 << 20  # characters encoded and compressed at a time
_Sql = tuple[str, list[Any]]
_T = TypeVar("_T")  # a query's SQL text and its parameters


@dataclass
class PublishedScreen:
    """A published screen in memory; its database row never changes."""

    database: object
    key: tuple[int, str]  # (id, generated_at) of the row
    checked_at: float  # time.monotonic() when it was last known to be the latest
    _payload: str | None = field(default=None, repr=False)  # read on first use
    _reading: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _views: dict[str, str] = field(default_factory=dict, repr=False)
    _gzipped: dict[str, bytes] = field(default_factory=dict, repr=False)
    _objects: dict[str, object] = field(default_factory=dict, repr=False)
    _variants: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    @property
    def payload(self) -> str:
        """The ``/screen/latest`` body as stored, read once (by one thread) on first use."""
        if self._payload is None:
            with self._reading:
                if self._payload is None:
                    self._payload = read_payload(self.key[0])
        return self._payload

    def memo(self, name: str, build: Callable[[], _T]) -> _T:
        """``build()``, computed once per screen and kept under ``name``."""
        if name not in self._objects:
            self._objects.setdefault(name, build())
        return cast(_T, self._objects[name])  # what build() returned for this name

    def has(self, name: str) -> bool:
        """Whether ``memo(name, ...)`` has been computed for this screen."""
        return name in self._objects

    def variant(self, name: str, key: str, build: Callable[[], str]) -> str:
        """``build()``, a variant ``key`` of the view ``name`` (the screen judged stale since it
        was published, say). One is kept per name: a new key replaces the old variant and
        its compressed copy, so a screen served for days never piles up copies."""
        held = self._variants.get(name)
        if held is not None and held[0] == key:
            return held[1]
        text = build()
        if held is not None:
            self._gzipped.pop(f"{name}:{held[0]}", None)
        self._variants[name] = (key, text)
        return text

    @property
    def etag(self) -> str:
        """A weak entity tag naming this screen: it changes exactly when another is published
        (weak, so that the gzip and identity encodings of a body share it)."""
        return f'W/"screen-{self.key[0]}"'

    def built(self, name: str) -> str | None:
        """The text of the view ``name`` when it is built already, else None: a request can
        then answer on the event loop, without a thread for a read or a render. ``name`` is
        ``screen`` (the payload), a view's name (``pairs``) or ``screen:KEY`` (a variant)."""
        if name == "screen":
            return self._payload
        view, _, key = name.partition(":")
        if key:
            held = self._variants.get(view)
            return held[1] if held is not None and held[0] == key else None
        return self._views.get(name)

    def gzipped_built(self, name: str) -> bytes | None:
        """The compressed copy of the view ``name`` when it exists already, else None."""
        return self._gzipped.get(name)

    def gzipped(self, name: str, text: str) -> bytes:
        """``text`` (the view ``name``) gzip-compressed, once per screen."""
        blob = self._gzipped.get(name)
        if blob is None:
            blob = self._gzipped.setdefault(name, gzip_text(text))
        return blob

    def view(self, name: str, render: Callable[[str], str]) -> str:
        """``render(payload)``, computed once per screen and kept under ``name``.

        Two threads may render the same view at once; both get the same text, one is kept.
        """
        text = self._views.get(name)
        if text is None:
            text = self._views.setdefault(name, render(self.payload))
        return text


def read_payload(screen_id: int) -> str:
    """The payload of the screen ``screen_id``; NotFound when it has been pruned since (newer
    screens were published after this one was known to be the latest)."""
    payload = stored_payload(screen_id)
    if payload is None:
        raise NotFound("A newer screen has been published meanwhile: ask again.")
    return payload


def stored_payload(screen_id: int) -> str | None:
    """The payload of the screen ``screen_id`` as stored, None when there is no such screen."""
    query = ScreenPayload.select(ScreenPayload.payload).where(ScreenPayload.screen == screen_id)
    payload = query.scalar()
    return None if payload is None else str(payload)


def gzip_text(text: str) -> bytes:
    """``text`` UTF-8 encoded and gzip-compressed a slice at a time, so a 100 MB body never
    exists a second time as bytes."""
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    parts = [
        packer.compress(text[i : i + GZIP_SLICE].encode()) for i in range(0, len(text), GZIP_SLICE)
    ]
    parts.append(packer.flush())
    return b"".join(parts)


class PublishedScreenCache:
    """The latest screen of the bound database, re-read only when a newer one exists."""

    def __init__(self) -> None:
        self._screen: PublishedScreen | None = None
        self._latest_sql: dict[type, _Sql] = {}  # compiled once per kind of database

    def latest(self) -> PublishedScreen:
        """The latest screen; NotFound before the first one is published."""
        db = database.obj
        row = database.execute_sql(*self._latest_query(type(db))).fetchone()
        if row is None:
            raise NotFound(
                "No screen has been published yet. Run 'pairscreen screen run' (the worker runs "
                "it after each bar closes) and try again."
            )
        key = (row[0], str(row[1]))
        now = time.monotonic()
        cached = self._screen
        if cached is not None and cached.database is db and cached.key == key:
            cached.checked_at = now
            return cached
        screen = PublishedScreen(db, key, now)  # its payload is read when first needed
        self._screen = screen
        return screen

    def forget(self) -> None:
        """Drop the screen held in memory: the next request reads the latest one."""
        self._screen = None

    def recent(self, max_age: float) -> PublishedScreen | None:
        """The latest screen as known at most ``max_age`` seconds ago, without a database read.

        A screen published through this runtime is known at once; one published by another
        process (the worker, another API worker) after at most ``max_age`` seconds.
        """
        cached = self._screen
        if cached is None or cached.database is not database.obj:
            return None
        if time.monotonic() - cached.checked_at > max_age:
            return None
        return cached

    def _latest_query(self, kind: type) -> _Sql:
        sql = self._latest_sql.get(kind)
        if sql is None:  # two threads may compile it at once: the same SQL, one is kept
            # point-in-time screens (as_of set) are history, never the latest
            query = Screen.select(Screen.id, Screen.generated_at).where(Screen.as_of.is_null())
            sql = self._latest_sql.setdefault(kind, query.order_by(Screen.id.desc()).limit(1).sql())
        return sql
