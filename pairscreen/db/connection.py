"""One ``DatabaseProxy`` bound late from a URL (``sqlite:///…`` or ``postgresql://…``).

SQLite runs in WAL mode with a busy timeout, and write transactions that read first use
``BEGIN IMMEDIATE`` (see :func:`write_transaction`) so they wait instead of failing with
"database is locked".

PostgreSQL comes in two forms, both with a connection per request (``connection_context``):

* ``postgresql://user@host:port/db`` opens a fresh connection per request: simple, and a
  server restart costs nothing but the requests in flight.
* ``postgresql+pool://…?max_connections=20`` keeps a pool per process. peewee's pool checks
  a connection on check-out (``SELECT 1`` on an idle one) and discards it when the server has
  gone away, so after a restart the pool heals by itself. When every pooled connection is in
  use, a request waits at most ``timeout`` seconds (default :data:`POOL_WAIT_SECONDS`) and
  then fails with ``MaxConnectionsExceeded`` instead of hanging.

Connecting gives up after ``connect_timeout`` seconds (default
:data:`CONNECT_TIMEOUT_SECONDS`), each thread on its own (:mod:`pairscreen.db.parallel`).
The HTTP layer answers every database failure (:data:`UNAVAILABLE_ERRORS`) with a
plain-text 503, never a hang. Query-string parameters of the URL override these defaults
and reach psycopg2 (e.g. ``?sslmode=require``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import peewee
from playhouse import db_url
from playhouse.pool import MaxConnectionsExceeded

from pairscreen.db.parallel import ParallelConnectPool, ParallelConnectPostgres
from pairscreen.db.proxy import database as database  # re-exported: callers name it from here

CONNECT_TIMEOUT_SECONDS = 5
POOL_WAIT_SECONDS = 2
POSTGRES_SCHEMES = ("postgres://", "postgresql://", "postgres+pool://", "postgresql+pool://")

# What a database that is down, restarting, or out of connections raises: peewee wraps the
# driver's connection errors in OperationalError / InterfaceError, and a full pool raises
# MaxConnectionsExceeded.
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    peewee.OperationalError,
    peewee.InterfaceError,
    MaxConnectionsExceeded,
)

SQLITE_PRAGMAS = (
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
    ("foreign_keys", 1),
    ("busy_timeout", 30_000),
)


def connect(url: str) -> peewee.Database:
    """Open the database named by ``url`` (creating an SQLite file's folder) and bind it."""
    db: peewee.Database  # playhouse.db_url is untyped
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        db = db_url.connect(url, pragmas=SQLITE_PRAGMAS, timeout=30, check_same_thread=False)
    elif url.startswith(POSTGRES_SCHEMES):
        given = db_url.parse(url)
        if not given.get("database"):
            raise ValueError(
                f"DATABASE_URL names no database (got {url.split('@')[-1]!r}): "
                "postgresql://user@host:port/dbname"
            )
        pooled = "+pool" in url.split("://", 1)[0]
        defaults: dict[str, object] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
        if pooled:
            defaults["timeout"] = POOL_WAIT_SECONDS
        kind = ParallelConnectPool if pooled else ParallelConnectPostgres
        db = kind(**{**defaults, **given})
    else:
        raise ValueError(
            "DATABASE_URL must start with sqlite:/// or postgresql:// "
            f"(got {url.split(':', 1)[0]!r})"
        )
    database.initialize(db)
    return db


def init_database(url: str) -> peewee.Database:
    """Bind the database and bring its schema up to date."""
    from pairscreen.db.migrations import upgrade

    db = connect(url)
    upgrade(db)
    return db


def is_sqlite() -> bool:
    return isinstance(database.obj, peewee.SqliteDatabase)


@contextmanager
def write_transaction() -> Iterator[None]:
    """A transaction that will write: ``BEGIN IMMEDIATE`` on SQLite, a plain one elsewhere."""
    if is_sqlite():
        with database.atomic("IMMEDIATE"):
            yield
    else:
        with database.atomic():
            yield
