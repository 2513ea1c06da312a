"""Typed views of peewee's row iterators, and of the values they carry.

peewee's stubs type ``query.tuples()`` and ``query.dicts()`` as the query itself, which
iterates model instances; the rows they yield are tuples and dicts. These helpers say so,
once, so callers unpack the rows without a cast or an ignore of their own. A ``date``
column reads back as a ``date`` on PostgreSQL and as ISO text on SQLite (in a raw or
aggregated select): :func:`read_date` takes either.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any, cast

import peewee


def tuples(query: peewee.BaseQuery) -> Iterator[tuple[Any, ...]]:
    """The rows of ``query`` as tuples, in the order of its selected columns."""
    return cast(Iterator[tuple[Any, ...]], iter(query.tuples()))


def dicts(query: peewee.BaseQuery) -> Iterator[dict[str, Any]]:
    """The rows of ``query`` as dicts keyed by column name (or alias)."""
    return cast(Iterator[dict[str, Any]], iter(query.dicts()))


def read_date(value: object) -> date:
    """A ``date`` column's value as read back: a ``date`` (PostgreSQL) or ISO text (SQLite,
    where an aggregate such as ``MIN(day)`` gives the stored text)."""
    return value if isinstance(value, date) else date.fromisoformat(str(value)[:10])
