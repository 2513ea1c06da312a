"""A storage fault as the CLI's one-line error (full disk, read-only, corrupt database)."""

from __future__ import annotations

import argparse

from pairscreen.cli.common import settings_of
from pairscreen.db.storage import STORAGE_ERRORS, diagnose

__all__ = ["STORAGE_ERRORS", "storage_line"]


def storage_line(error: BaseException, args: argparse.Namespace) -> str | None:
    """``cause: path`` when ``error`` comes from the database's storage, else None."""
    try:
        url = settings_of(args).database_url
    except Exception:  # the settings themselves are what failed: not a storage fault
        return None
    fault = diagnose(error, url)
    return None if fault is None else str(fault)
