"""Counts in words, one rule for every message: ``1 asset``, ``2 assets``, ``0 pairs``.

A message that writes ``{n} assets`` reads "1 assets" once n is 1; every count a person reads
goes through :func:`plural` instead of a conditional of its own.
"""

from __future__ import annotations


def plural(count: int, noun: str, many: str = "", *, grouped: bool = False) -> str:
    """``count`` and ``noun``, the noun in the plural (``many``, by default ``noun + "s"``)
    unless the count is 1; ``grouped`` writes thousands separators (``1,426 days``)."""
    shown = f"{count:,}" if grouped else str(count)
    return f"{shown} {noun if count == 1 else many or noun + 's'}"
