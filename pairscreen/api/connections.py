"""The database connection of one request, in the thread that serves it."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import peewee

from pairscreen.db.connection import database, is_sqlite

T = TypeVar("T")

log = logging.getLogger(__name__)

# For this long after a database error, each request opens a new SQLite connection instead
# of reusing its thread's (see RequestConnections).
DISTRUST_SECONDS = 60.0


class RequestConnections:
    """Opens (or keeps) the connection each request runs in.

    On SQLite a thread keeps its connection (one, to the current database) for its next
    request: opening one (a file open and four PRAGMAs) cost more than the whole request of
    a cached endpoint. On PostgreSQL each request takes a fresh or pooled connection and
    gives it back, so that a server restart heals.

    A kept SQLite connection is not trusted after a database error (a full disk, an I/O
    error): the connection that met it is closed at once, and for :data:`DISTRUST_SECONDS`
    after the last error every request replaces its thread's connection with a new one.
    Connections kept through a full disk, with the worker writing beside the server, went
    on committing quota charges that the server itself read back but that SQLite's recovery
    (when the database was next opened) did not: requests answered 200 and were never
    charged. New connections, each opened after the failed writes, commit what recovery
    reads. Connections are replaced, never merely closed, so the server always holds the
    database open while it serves and no other process recovers it under its feet.

    Which database each thread keeps is this object's own thread-local record, so an app
    owns it and drops it with itself.
    """

    def __init__(self) -> None:
        self._kept = threading.local()
        self._lock = threading.Lock()
        self._last_error = float("-inf")  # time.monotonic() of the last database error

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """The connection of one request, in this thread."""
        if not is_sqlite():
            with database.connection_context():
                yield
            return
        db: peewee.Database = database.obj
        kept = getattr(self._kept, "database", None)
        if kept is not db:  # the service was bound to another database (tests do that)
            if kept is not None:
                _close(kept)
            self._kept.database = db
        elif time.monotonic() - self._last_error < DISTRUST_SECONDS:
            _close(db)
        if db.is_closed():
            db.connect()
        try:
            yield
        except (peewee.DatabaseError, sqlite3.DatabaseError) as exc:
            if not isinstance(exc, peewee.IntegrityError | sqlite3.IntegrityError):
                with self._lock:
                    self._last_error = time.monotonic()
                _close(db)
            raise

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in this thread, inside its request connection."""
        with self.request():
            return fn(*args)


def _close(db: peewee.Database) -> None:
    """Close this thread's connection to ``db`` (a close that fails is logged: the next
    request tries again)."""
    if db.is_closed():
        return
    try:
        db.close()
    except (peewee.DatabaseError, sqlite3.Error) as exc:
        log.warning("could not close a database connection after an error: %s", exc)
