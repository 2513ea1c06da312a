"""What a CSV export's bytes and header say, before any row is read.

The text must be UTF-8 (a byte-order mark is allowed, as Excel writes one); anything else is
refused with the reason, never decoded by a guess: a UTF-16 export or Latin-1 bytes read as
UTF-8 would give wrong characters or none. The header names the columns; which one holds the
day, the close and the volume is decided from the names alone (:func:`layout`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pairscreen_plugins.market.csv_cells import CellError, iso_day, plain_number

DayKind = Literal["date", "timestamp"]
# Yahoo Finance's export has both; its "Adj Close" (split- and dividend-adjusted) is the
# close, the series a holder of the asset earns.
CLOSE_COLUMNS = ("adj close", "close")
DAY_COLUMNS: tuple[DayKind, ...] = ("date", "timestamp")
VOLUME_COLUMN = "volume"
METATRADER_DAY = re.compile(r"[0-9]{4}\.[0-9]{2}\.[0-9]{2}")
NUL_SCAN_BYTES = 4096  # UTF-16 without a byte-order mark shows NUL bytes at once


class Unreadable(Exception):
    """Nothing of the file can be read; the message says why, for a person."""


def decode(data: bytes) -> str:
    """The file's text: UTF-8, with or without a byte-order mark."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise Unreadable("is UTF-32 (it starts with a UTF-32 byte-order mark); save it as UTF-8")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise Unreadable("is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")
    if b"\x00" in data[:NUL_SCAN_BYTES]:
        raise Unreadable("holds NUL bytes (UTF-16 without a byte-order mark?); save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise Unreadable(
            f"is not UTF-8: line {line} holds the byte 0x{data[exc.start]:02X} "
            "(Latin-1 or Windows-1252?); save it as UTF-8"
        ) from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise Unreadable("is empty")
    return text


@dataclass(frozen=True)
class Layout:
    """Where a file's day, close and volume are, and how many fields each row has."""

    width: int
    day: int
    day_kind: DayKind
    close: int
    volume: int | None
    adjusted: bool  # the close is Yahoo's "Adj Close"


def column_name(cell: str) -> str:
    """A header cell as compared: ``" Adj_Close "`` and ``"adj close"`` are one name."""
    return " ".join(cell.strip().lower().replace("_", " ").split())


def layout(header: list[str]) -> Layout:
    """The layout the header declares, or :class:`Unreadable` saying what is missing."""
    names = [column_name(cell) for cell in header]
    shown = ",".join(header)
    if _looks_like_data(header):
        raise Unreadable(
            f"has no header: its first line {shown!r} is data; the first line must name the "
            "columns, e.g. date,close,volume"
        )
    repeated = sorted({n for n in names if n and names.count(n) > 1})
    if repeated:
        raise Unreadable(f"its header {shown!r} names {', '.join(repeated)} more than once")
    days = [kind for kind in DAY_COLUMNS if kind in names]
    closes = [name for name in CLOSE_COLUMNS if name in names]
    if len(days) > 1:
        raise Unreadable(f"its header {shown!r} has both a date and a timestamp column; keep one")
    if not days or not closes:
        missing = " and no ".join(
            what for what, found in (("date (or timestamp)", days), ("close", closes)) if not found
        )
        raise Unreadable(
            f"its header {shown!r} names no {missing} column; the first line must name the "
            f"columns, e.g. date,close,volume{_separator_hint(shown)}"
        )
    return Layout(
        width=len(header),
        day=names.index(days[0]),
        day_kind=days[0],
        close=names.index(closes[0]),
        volume=names.index(VOLUME_COLUMN) if VOLUME_COLUMN in names else None,
        adjusted=closes[0] == "adj close",
    )


def _looks_like_data(header: list[str]) -> bool:
    """Whether the first line is a row rather than names: it starts with a day or a number
    (MetaTrader's ``2024.01.01,00:00,…``, Binance's ``1704067200000,…``)."""
    first = header[0].strip() if header else ""
    if METATRADER_DAY.fullmatch(first):
        return True
    for read in (iso_day, lambda cell: plain_number(cell, "cell")):
        try:
            read(first)
        except CellError:
            continue
        return True
    return False


def _separator_hint(shown: str) -> str:
    for mark, name in ((";", "semicolons"), ("\t", "tabs")):
        if mark in shown:
            return f" (its fields are separated by {name}? only commas are read)"
    return ""
