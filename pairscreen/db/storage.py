"""What is permanently wrong with a database's storage, in a sentence naming where it is.

SQLite reports a full disk as "database or disk is full" or as a "disk I/O error", a
read-only file system as "attempt to write a readonly database" or "unable to open database
file" (its ``-wal`` and ``-shm`` files cannot be created), and a rollback after either can
replace the message with "cannot rollback - no transaction is active". The messages of the
whole exception chain and the state of the file and its folder together say which it is.
A passing condition ("database is locked") is not a storage fault.

PostgreSQL says it with an error code: ``53100`` (its disk is full) and ``25006`` (the
database only takes read-only transactions: a standby, or ``default_transaction_read_only``).
Those are named with the server and database of the URL (never its password).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import peewee

SQLITE_HEADER = b"SQLite format 3\x00"
STORAGE_ERRORS: tuple[type[BaseException], ...] = (peewee.DatabaseError, sqlite3.Error, OSError)
FULL = "database or disk is full"
READ_ONLY = "read-only file system"
NOT_WRITABLE = "no permission to write the database or its folder"
CORRUPT = "not an SQLite database (the file is damaged or is something else)"
UNOPENABLE = "cannot open the database file"
READ_ONLY_DATABASE = "the database accepts no writes (a standby, or set read-only)"
POSTGRES_CODES = {"53100": FULL, "25006": READ_ONLY_DATABASE}


@dataclass(frozen=True)
class StorageFault:
    """A condition that stays until someone fixes the storage: its cause and where (the
    SQLite file, or the PostgreSQL server and database)."""

    cause: str
    where: str

    def __str__(self) -> str:
        return f"{self.cause}: {self.where}"


def sqlite_path(url: str) -> Path | None:
    """The file of an ``sqlite:///`` URL (None for memory or another database)."""
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///")
    return None if path in ("", ":memory:") else Path(path).expanduser().absolute()


def diagnose(error: BaseException, url: str) -> StorageFault | None:
    """The storage fault behind ``error`` on the database at ``url``, or None."""
    if not isinstance(error, STORAGE_ERRORS):
        return None
    path = sqlite_path(url)
    if path is None:
        return _postgres_fault(error, url)
    text = " ".join(_messages(error)).lower()
    codes = {e.errno for e in _chain(error) if isinstance(e, OSError)}
    folder = path.parent
    if "not a database" in text or "malformed" in text or _damaged(path):
        return StorageFault(CORRUPT, str(path))
    if errno.EROFS in codes or _read_only(folder):
        return StorageFault(READ_ONLY, str(path))
    if FULL in text or errno.ENOSPC in codes or _no_space(folder):
        return StorageFault(FULL, str(path))
    if "readonly" in text or errno.EACCES in codes or not _writable(path):
        return StorageFault(NOT_WRITABLE, str(path))
    if "unable to open" in text:
        return StorageFault(UNOPENABLE, str(path))
    return None


def _postgres_fault(error: BaseException, url: str) -> StorageFault | None:
    for link in _chain(error):
        cause = POSTGRES_CODES.get(getattr(link, "pgcode", None) or "")
        if cause is not None:
            parts = urlsplit(url)
            return StorageFault(cause, f"{parts.hostname}:{parts.port or 5432}{parts.path}")
    return None


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _messages(error: BaseException) -> list[str]:
    return [str(e) for e in _chain(error)]


def _damaged(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except OSError:
        return False
    return bool(head) and head != SQLITE_HEADER


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _no_space(folder: Path) -> bool:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def _writable(path: Path) -> bool:
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK) and os.access(path.parent, os.W_OK)
