"""One CSV cell read as a day or a number, or refused with a sentence saying why.

Only what cannot be read two ways is accepted: an ISO day (``2025-01-31``, or a timestamp of
that form, counted as its UTC day), a whole number of seconds or milliseconds since 1970 whose
size says which, and numbers in plain or exponent notation. Python's ``float`` would also take
``nan``, ``inf``, ``1_000`` and other scripts' digits; a thousands separator or a decimal
comma would shift a price by orders of magnitude, so none of these is a number here.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
WHOLE_NUMBER = re.compile(r"[0-9]+")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A timestamp's unit follows from its size: the two ranges do not overlap, and each covers
# 1973-03-03 to 2286-11-20. Microseconds (Binance's spot files since 2025) and anything
# between the ranges are refused.
SECONDS = range(10**8, 10**10)
MILLISECONDS = range(10**11, 10**13)


class CellError(ValueError):
    """A cell that cannot be read; the message names the cell and why."""


def iso_day(text: str) -> date:
    """``2025-01-31`` or an ISO timestamp of that day (``2025-01-31T00:00:00Z``; with an
    offset it counts as its UTC day)."""
    cell = text.strip()
    if not ISO_DAY.match(cell) or (len(cell) > 10 and cell[10] not in "T "):
        raise CellError(f"date {cell!r} is not an ISO day (YYYY-MM-DD)")
    try:
        if len(cell) == 10:
            return date.fromisoformat(cell)
        moment = datetime.fromisoformat(cell.replace("Z", "+00:00"))
    except ValueError:
        raise CellError(f"date {cell!r} is not a day of the calendar") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.date()


def timestamp_day(text: str) -> date:
    """The UTC day of a timestamp in seconds or milliseconds since 1970."""
    cell = text.strip()
    if not WHOLE_NUMBER.fullmatch(cell):
        raise CellError(
            f"timestamp {cell!r} is not a whole number of seconds or milliseconds since 1970"
        )
    value = int(cell)
    if value in SECONDS:
        seconds = value
    elif value in MILLISECONDS:
        seconds = value // 1000
    else:
        raise CellError(
            f"timestamp {cell} is neither seconds (10^8 to 10^10) nor milliseconds "
            "(10^11 to 10^13) since 1970; its unit is unknown"
        )
    return (EPOCH + timedelta(seconds=seconds)).date()


def plain_number(text: str, what: str, expected: str = "a number") -> float:
    """A number in plain or exponent notation (``2352.04``, ``2.35204e3``); ``what`` and
    ``expected`` word the refusal."""
    cell = text.strip()
    if not cell:
        raise CellError(f"{what} is empty")
    if not PLAIN_NUMBER.fullmatch(cell):
        hint = " (a thousands separator or a decimal comma?)" if "," in cell else ""
        raise CellError(f"{what} {cell!r} is not {expected}{hint}")
    return float(cell)


def close_value(text: str) -> float:
    """A close: a finite number above zero."""
    expected = "a finite positive number"
    value = plain_number(text, "close", expected)
    if not (0 < value < float("inf")):
        raise CellError(f"close {text.strip()!r} is not {expected}")
    return value


def volume_value(text: str) -> float:
    """A volume: a finite number of at least zero, or NaN (unknown) for an empty cell."""
    if not text.strip():
        return float("nan")
    expected = "a finite number of at least 0"
    value = plain_number(text, "volume", expected)
    if not (0 <= value < float("inf")):
        raise CellError(f"volume {text.strip()!r} is not {expected}")
    return value


def close_time(text: str) -> int:
    """A bar's close time as whole epoch seconds, from an ISO date-time (``Z``, an offset, or
    none: then UTC) or a whole number of seconds or milliseconds since 1970. A bare day is
    refused: an intraday file names each bar's time."""
    cell = text.strip()
    if WHOLE_NUMBER.fullmatch(cell):
        value = int(cell)
        if value in SECONDS:
            return value
        if value in MILLISECONDS:
            if value % 1000:
                raise CellError(f"timestamp {cell} falls between two whole seconds")
            return value // 1000
        raise CellError(
            f"timestamp {cell} is neither seconds (10^8 to 10^10) nor milliseconds "
            "(10^11 to 10^13) since 1970; its unit is unknown"
        )
    if not ISO_DAY.match(cell):
        raise CellError(
            f"time {cell!r} is neither an ISO date-time (2023-12-31T23:00:00Z) nor seconds "
            "or milliseconds since 1970"
        )
    if len(cell) == 10:
        raise CellError(f"time {cell!r} is a day; an intraday file gives each bar's close time")
    if cell[10] not in "T ":
        raise CellError(f"time {cell!r} is not an ISO date-time (2023-12-31T23:00:00Z)")
    try:
        moment = datetime.fromisoformat(cell.replace("Z", "+00:00"))
    except ValueError:
        raise CellError(f"time {cell!r} is not a time of the calendar") from None
    if moment.microsecond:
        raise CellError(f"time {cell!r} falls between two whole seconds")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # naive: UTC, as the format documents
    return int(moment.timestamp())
