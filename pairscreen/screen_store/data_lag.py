"""How far a pair's data ends behind the newest close of its screen.

A survivor whose data stopped months before the others' would read as current in a list of
scores. So every view of a screen's pairs carries the pair's own last common close
(``data_time``) and, against the screen's newest close (``data_time.newest``), whether it
ends earlier (``data_behind``) and by how many calendar days (``data_behind_days``). On an
intraday screen a pair a few bars behind on the same UTC day is behind too: there the lag is
counted in bars, ``data_behind`` is true from one bar on, and ``data_behind_bars`` and
``data_behind_seconds`` say it beside the calendar days. The screen computes them once, when
it is published, so no view recomputes them per request.
"""

from __future__ import annotations

from datetime import date

from pairscreen.market.freshness import bars_between

LAG_FIELDS = ("data_time", "data_behind", "data_behind_days")
BAR_LAG_FIELDS = ("data_behind_bars", "data_behind_seconds")  # intraday screens only


def data_lag(last_day: date | None, newest: date | None) -> dict[str, bool | int | None]:
    """``data_behind`` and ``data_behind_days`` of a pair whose last common close is
    ``last_day`` in a screen whose newest close is ``newest``; both null when either is
    unknown (a pair the screen did not align: its reason says why)."""
    if last_day is None or newest is None:
        return {"data_behind": None, "data_behind_days": None}
    days = max(0, (newest - last_day).days)
    return {"data_behind": days > 0, "data_behind_days": days}


def bar_lag(
    last_day: date | None,
    newest: date | None,
    last_close: int | None,
    newest_close: int | None,
    bar_seconds: int,
) -> dict[str, bool | int | None]:
    """An intraday pair's lag: :func:`data_lag`'s calendar days between the UTC days of the
    two close times, then ``data_behind`` from one bar on, with the bars and seconds from its
    last common close (epoch seconds) to the screen's newest."""
    lag = data_lag(last_day, newest)
    if last_close is None or newest_close is None:
        return {**lag, "data_behind_bars": None, "data_behind_seconds": None}
    bars = bars_between(last_close, newest_close, bar_seconds)
    lag["data_behind"] = bars > 0
    return {**lag, "data_behind_bars": bars, "data_behind_seconds": bars * bar_seconds}
