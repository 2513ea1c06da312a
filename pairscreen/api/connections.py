"""The database connection of one request, in the thread that serves it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pairscreen.db.connection import database, is_sqlite

T = TypeVar("T")


class RequestConnections:
    """Opens (or keeps) the connection each request runs in.

    On SQLite a thread keeps its connection (one, to the current database) for its next
    request: opening one (a file open and four PRAGMAs) cost more than the whole request of
    a cached endpoint. On PostgreSQL each request takes a fresh or pooled connection and
    gives it back, so that a server restart heals.

    Which database each thread keeps is this object's own thread-local record, so an app
    owns it and drops it with itself.
    """

    def __init__(self) -> None:
        self._kept = threading.local()

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """The connection of one request, in this thread."""
        if is_sqlite():
            db = database.obj
            kept = getattr(self._kept, "database", None)
            if kept is not db:  # the service was bound to another database (tests do that)
                if kept is not None and not kept.is_closed():
                    kept.close()
                self._kept.database = db
            if db.is_closed():
                db.connect()
            yield
        else:
            with database.connection_context():
                yield

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in this thread, inside its request connection."""
        with self.request():
            return fn(*args)
