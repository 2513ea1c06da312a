"""Durations on the command line: ``30`` (days), ``24h``, ``3d``, ``90m``, counted in a
universe's bars.

``evaluate --horizon`` and ``--every`` take them; a duration must be a whole number of the
universe's bars, or it is refused in one line naming the bar.
"""

from __future__ import annotations

import re

from pairscreen.cli.common import CommandError
from pairscreen.contracts.bars import BarSize

_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86_400}
_DURATION = re.compile(r"^\s*(\d+)\s*(m|min|h|d)?\s*$", re.IGNORECASE)


def has_unit(text: str) -> bool:
    """Whether ``text`` is a duration with a unit (``24h``), not a bare number."""
    match = _DURATION.match(str(text))
    return match is not None and match.group(2) is not None


def bars_of(text: str, bar: BarSize, flag: str, *, bare: str) -> int:
    """``text`` in ``bar``'s bars: a whole number with a unit (``m``, ``h``, ``d``), or bare,
    read as ``bare`` (``"days"`` or ``"bars"``). At least one bar."""
    match = _DURATION.match(str(text))
    if match is None:
        raise CommandError(
            f"{flag} {text!r} is not a duration: a whole number with m, h or d (e.g. 24h, "
            f"3d), or a bare number of {bare}"
        )
    count, unit = int(match.group(1)), (match.group(2) or "").lower()
    if count < 1:
        raise CommandError(f"{flag} must be at least one bar, got {text!r}")
    if not unit and bare == "bars":
        return count
    seconds = count * _UNITS[unit or "d"]
    if seconds % bar.seconds:
        size = "days" if not bar.intraday else f"{bar.name} bars"
        raise CommandError(
            f"{flag} {text!r} is not a whole number of {size} (this universe's bar is {bar.name})"
        )
    return seconds // bar.seconds
