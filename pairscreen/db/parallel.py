"""PostgreSQL databases whose connects run in parallel.

peewee's ``Database.connect`` holds the database's one lock while the driver connects, and
the pool's ``_connect`` holds the pool's lock meanwhile. While PostgreSQL answers, that is a
few milliseconds; when it does not (a frozen server, a dropped packet, a DNS lookup that
hangs), every thread of the process queues behind the one that waits for its connect
timeout, and eight concurrent requests answered 503 after 5, 10, 15 … seconds. Here the
driver connects with no lock held, so each request fails (or succeeds) on its own timeout.

The locks keep guarding what they are for: the thread's connection state and the server
version (the database lock), the pool's books (the pool lock). A pool's limit of connections
counts them once they are open, so connects in flight may briefly exceed it; each thread
holds at most one connection, so a process never has more than its threads.
"""

from __future__ import annotations

from typing import Any

import peewee
from playhouse.pool import PooledPostgresqlDatabase

# peewee's internals used here are untyped: reached through Any.
_EXCEPTIONS: Any = vars(peewee)["__exception_wrapper__"]


class ParallelConnectPostgres(peewee.PostgresqlDatabase):
    """``PostgresqlDatabase`` whose ``connect`` holds no lock while the driver connects."""

    def connect(self, reuse_if_open: bool = False) -> bool:
        db: Any = self
        if db.deferred:
            raise peewee.InterfaceError("the database must be initialized before connecting")
        if not db._state.closed:
            if reuse_if_open:
                return False
            raise peewee.OperationalError("Connection already opened.")
        db._state.reset()
        with _EXCEPTIONS:
            conn = db._connect()
            with db._lock:
                db._state.set_connection(conn)
                if db.server_version is None:
                    db._set_server_version(conn)
            db._initialize_connection(conn)
        return True

    def _connect(self) -> Any:
        """The driver's connect, with the pool's lock (when a pool holds it) let go meanwhile."""
        driver: Any = super()
        pool_lock = getattr(self, "_pool_lock", None)
        if pool_lock is None:
            return driver._connect()
        pool_lock.release()
        try:
            return driver._connect()
        finally:
            pool_lock.acquire()


class ParallelConnectPool(PooledPostgresqlDatabase, ParallelConnectPostgres):  # type: ignore[misc]
    """The pool of ``postgresql+pool://``: its check-out under its lock, a new connection's
    connect outside it (the pool reaches the driver through
    :meth:`ParallelConnectPostgres._connect`)."""
