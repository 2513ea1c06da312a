"""Typed views of peewee's row iterators.

peewee's stubs type ``query.tuples()`` and ``query.dicts()`` as the query itself, which
iterates model instances; the rows they yield are tuples and dicts. These helpers say so,
once, so callers unpack the rows without a cast or an ignore of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import peewee


def tuples(query: peewee.BaseQuery) -> Iterator[tuple[Any, ...]]:
    """The rows of ``query`` as tuples, in the order of its selected columns."""
    return cast(Iterator[tuple[Any, ...]], iter(query.tuples()))


def dicts(query: peewee.BaseQuery) -> Iterator[dict[str, Any]]:
    """The rows of ``query`` as dicts keyed by column name (or alias)."""
    return cast(Iterator[dict[str, Any]], iter(query.dicts()))
