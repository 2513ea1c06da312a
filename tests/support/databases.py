"""Test databases on PostgreSQL (when ``PAIRSCREEN_TEST_DATABASE_URL`` is set) and a dump of
what any database stores, for the tests that look at data at rest.

PostgreSQL databases are created on the server named by ``PAIRSCREEN_TEST_DATABASE_URL`` (a
maintenance database such as ``postgresql://postgres@127.0.0.1:5432/test``) with names
unique to this test session, so several sessions can share one server; each session drops
its own databases, and the databases of sessions that died (their process is gone) are
dropped by the next session.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2
from psycopg2 import sql

TEST_DATABASE_URL = os.environ.get("PAIRSCREEN_TEST_DATABASE_URL", "")
NAME_PREFIX = "pairscreen_test_"
NAME_PATTERN = re.compile(rf"^{NAME_PREFIX}(\d+)_[0-9a-f]+(_\w+)?$")


def _libpq_url(url: str) -> str:
    """The URL psycopg2 understands (peewee's ``postgresql+pool`` scheme is ours)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.split('+', 1)[0]}://{rest}"


class PostgresDatabases:
    """Creates and drops this session's databases on one PostgreSQL server."""

    def __init__(self, server_url: str):
        self.server_url = server_url
        self.session = f"{NAME_PREFIX}{os.getpid()}_{secrets.token_hex(3)}"
        self.created: list[str] = []
        self._serial = 0

    def _admin(self):  # type: ignore[no-untyped-def]
        conn = psycopg2.connect(_libpq_url(self.server_url), connect_timeout=10)
        conn.autocommit = True  # CREATE/DROP DATABASE cannot run in a transaction
        return conn

    def url(self, name: str) -> str:
        """``server_url`` with its database replaced by ``name`` (same scheme and options)."""
        parts = urlsplit(self.server_url)
        return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))

    def create(self, label: str, template: str | None = None) -> str:
        """A new database (a copy of ``template``, else empty); returns its name."""
        self._serial += 1
        name = f"{self.session}_{label}{self._serial}"
        statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template or "template0")
        )
        conn = self._admin()
        try:
            conn.cursor().execute(statement)
        finally:
            conn.close()
        self.created.append(name)
        return name

    def drop(self, name: str) -> None:
        """Drop ``name``, disconnecting anyone still connected (a server being torn down)."""
        conn = self._admin()
        try:
            conn.cursor().execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
        finally:
            conn.close()
        if name in self.created:
            self.created.remove(name)

    def drop_all(self) -> None:
        for name in reversed(list(self.created)):
            self.drop(name)

    def drop_orphans(self) -> list[str]:
        """Drop test databases left by sessions whose process no longer exists."""
        conn = self._admin()
        try:
            cursor = conn.cursor()
            cursor.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (NAME_PREFIX + "%",)
            )
            names = [row[0] for row in cursor.fetchall()]
        finally:
            conn.close()
        orphans = []
        for name in names:
            match = NAME_PATTERN.match(name)
            if match and not _process_alive(int(match.group(1))):
                self.drop(name)
                orphans.append(name)
        return orphans


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stored_text(database_url: str) -> tuple[str, bytes]:
    """Everything the database at ``database_url`` stores: (a text dump, raw bytes at rest).

    SQLite: the SQL dump of the file and the file's bytes after a WAL checkpoint. PostgreSQL:
    every row of every table of the public schema as JSON (all columns, as text) — the
    server's files are not ours to read, so the raw bytes are that dump too.
    Runs on the bound ``pairscreen.db.connection.database`` (the one at ``database_url``).
    """
    from pairscreen.db.connection import database, is_sqlite

    with database.connection_context():
        if is_sqlite():
            database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            dump = "\n".join(database.connection().iterdump())
            path = Path(database_url.removeprefix("sqlite:///"))
            return dump, path.read_bytes()
        tables = [
            row[0]
            for row in database.execute_sql(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            ).fetchall()
        ]
        lines = []
        for table in tables:
            query = sql.SQL("SELECT row_to_json(t)::text FROM {} AS t").format(
                sql.Identifier(table)
            )
            cursor = database.cursor()
            cursor.execute(query)
            lines += [f"{table}: {row[0]}" for row in cursor.fetchall()]
    dump = "\n".join(lines)
    return dump, dump.encode("utf-8")
