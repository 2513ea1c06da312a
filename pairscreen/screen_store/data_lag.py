"""How far a pair's data ends behind the newest close of its screen.

A survivor whose data stopped months before the others' would read as current in a list of
scores. So every view of a screen's pairs carries the pair's own last common close
(``data_time``) and, against the screen's newest close (``data_time.newest``), whether it
ends earlier (``data_behind``) and by how many calendar days (``data_behind_days``). The
screen computes them once, when it is published, so no view recomputes them per request.
"""

from __future__ import annotations

from datetime import date

LAG_FIELDS = ("data_time", "data_behind", "data_behind_days")


def data_lag(last_day: date | None, newest: date | None) -> dict[str, bool | int | None]:
    """``data_behind`` and ``data_behind_days`` of a pair whose last common close is
    ``last_day`` in a screen whose newest close is ``newest``; both null when either is
    unknown (a pair the screen did not align: its reason says why)."""
    if last_day is None or newest is None:
        return {"data_behind": None, "data_behind_days": None}
    days = max(0, (newest - last_day).days)
    return {"data_behind": days > 0, "data_behind_days": days}
