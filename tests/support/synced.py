"""A runtime on a universe file, its candles synced and one Pro key: what tests of a csv
universe over HTTP start from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.sync import sync_candles
from pairscreen.runtime import Runtime


@contextmanager
def synced_runtime(folder: Path, name: str) -> Iterator[tuple[Runtime, str]]:
    """``folder/universe.toml`` synced into ``folder/<name>.sqlite3``; yields the runtime and
    the key of a lifetime Pro account ``<name>@example.com``."""
    settings = load_settings(
        data_dir=folder,
        database_url=f"sqlite:///{folder / f'{name}.sqlite3'}",
        universe=folder / "universe.toml",
    )
    rt = build_runtime(settings)
    with database.connection_context():
        sync_candles(rt.universe, rt.plugins, until=clock.today())
        accounts.create_user(f"{name}@example.com", "pro", lifetime=True)
        key = accounts.rotate_key(f"{name}@example.com")
    try:
        yield rt, key
    finally:
        database.close()
