"""The spans of time a universe is screened over: its bar, windows and backtests, in days.

Every span stays a duration whatever the bar: 30 days of hourly bars are 720 bars. A
universe may declare its own in ``[screen]`` (``window_days``, ``backtest_days``); a setting
given a value other than its default (``PAIRSCREEN_WINDOW_DAYS``,
``PAIRSCREEN_MIN_HISTORY_DAYS``) still wins over the universe's, as settings win over the
universe file elsewhere. The screen's own backtest is the longest declared one (360 days
of the daily default 90, 180 and 360).

``[screen] min_history_days`` is a threshold of the filter (a universe raises the minimum
with it). For an intraday universe it is also the core's minimum, whose 200-day default
suits years of daily closes, not weeks of bars; a daily universe's core minimum stays the
setting, so that its screens are what they were.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from pairscreen.config import Settings
from pairscreen.contracts.bars import BarSize, bar_size
from pairscreen.errors import BadRequest
from pairscreen.runtime import Runtime
from pairscreen.universe import Universe

DAILY_BACKTEST_DAYS = (90, 180, 360)  # the backtest windows of a universe declaring none


@dataclass(frozen=True)
class ScreenSpans:
    """What a screen and a snapshot of one universe compute over."""

    bar: BarSize
    window_days: int
    min_history_days: int
    backtest_days: tuple[int, ...]  # the windows ``/pair``'s ``bt`` accepts, ascending

    @property
    def screen_bt_days(self) -> int:
        """The screen's own backtest: the longest declared window."""
        return self.backtest_days[-1]


def screen_spans(universe: Universe, settings: Settings) -> ScreenSpans:
    """The universe's spans, its ``[screen]`` values under the settings that were changed."""
    return ScreenSpans(
        bar_size(universe.bar),
        _chosen(settings, "window_days", universe.window_days),
        _chosen(settings, "min_history_days", _declared_history(universe)),
        tuple(sorted(universe.backtest_days)) or DAILY_BACKTEST_DAYS,
    )


def _declared_history(universe: Universe) -> int | None:
    value = universe.screen_thresholds.get("min_history_days")
    if value is None or not bar_size(universe.bar).intraday:
        return None
    return int(value)


def _chosen(settings: Settings, name: str, declared: int | None) -> int:
    value: int = getattr(settings, name)
    if declared is None or value != _default(name):
        return value
    return declared


def _default(name: str) -> Any:
    return next(f.default for f in fields(Settings) if f.name == name)


def backtest_window(rt: Runtime, bt: int | None) -> int:
    """The backtest window a snapshot or a chart runs: ``bt`` when it is one the universe
    declares, the longest when None; :class:`BadRequest` naming the declared ones otherwise
    (the API's validator says the same first)."""
    spans = screen_spans(rt.universe, rt.settings)
    if bt is None:
        return spans.screen_bt_days
    if bt not in spans.backtest_days:
        *head, tail = (str(d) for d in spans.backtest_days)
        words = f"{', '.join(head)} or {tail}" if head else tail
        raise BadRequest(f"query parameter 'bt' is '{bt}'; allowed: {words}.")
    return bt
