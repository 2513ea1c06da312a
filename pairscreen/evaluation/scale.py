"""An evaluation at the universe's bar: the market it reads, its default as-of range, and the
steps the track record uses.

A daily universe is evaluated on its daily candles with the screen's settings, exactly as
before bars existed. An intraday universe is evaluated on its closed bars with the spans
its screen uses (``screening.spans``: ``[screen] window_days``, its declared backtests, its
core minimum of history), so that each as-of close replays ``screen run --as-of`` at that
close. Horizons and steps are then counts of its bars.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from pairscreen import clock
from pairscreen.contracts import Candles
from pairscreen.contracts.bars import BarSize, bar_size
from pairscreen.evaluation.dates import close_at, point_of

if TYPE_CHECKING:
    from pairscreen.evaluation.verdicts import Market
    from pairscreen.runtime import Runtime

EVERY_DAYS = 30  # the daily track record's step, days
HORIZONS = (30, 90)  # the daily track record's horizons, days
# An intraday track record: as-of closes 6 hours apart, horizons of 24 and 72 hours, in
# hours (a multiple of every bar size but 1d, whose universes use the two above).
INTRADAY_EVERY_HOURS = 6
INTRADAY_HORIZON_HOURS = (24, 72)
# At most this many as-of closes in an intraday track record: beyond it the step widens (a
# worker's daily refresh of two years of hourly bars would otherwise replay 2,900 screens).
MAX_TRACK_RECORD_CLOSES = 1000


def universe_bar(rt: Runtime) -> BarSize:
    return bar_size(rt.universe.bar)


def runtime_candles(rt: Runtime) -> Mapping[str, Candles]:
    """The candles an evaluation of ``rt``'s universe reads: daily candles, or closed bars."""
    from pairscreen.screening.screen_candles import screen_candles

    return screen_candles(rt, universe_bar(rt))


def runtime_market(
    rt: Runtime,
    candles: Mapping[str, Candles],
    *,
    sample: int | None,
    scorer: str | None,
) -> Market:
    """The evaluated pairs of ``rt``'s universe on ``candles``, with the screen's spans."""
    from pairscreen.evaluation.verdicts import Market
    from pairscreen.screening.spans import screen_spans

    bar = universe_bar(rt)
    settings = rt.settings
    if not bar.intraday:
        return Market.of(
            rt.universe,
            candles,
            window_days=settings.window_days,
            min_history_days=settings.min_history_days,
            sample=sample,
            scorer=scorer,
        )
    spans = screen_spans(rt.universe, settings)
    return Market.of(
        rt.universe,
        candles,
        window_days=spans.window_days,
        min_history_days=spans.min_history_days,
        sample=sample,
        scorer=scorer,
        bar=bar,
        bt_days=spans.screen_bt_days,
    )


def window_days(rt: Runtime) -> int:
    """The band window the first as-of point waits for, days."""
    from pairscreen.screening.spans import screen_spans

    if not universe_bar(rt).intraday:
        return rt.settings.window_days
    return screen_spans(rt.universe, rt.settings).window_days


def track_record_steps(bar: BarSize) -> tuple[int, tuple[int, ...]]:
    """The track record's step and horizons in ``bar``'s bars."""
    if not bar.intraday:
        return EVERY_DAYS, HORIZONS
    per_hour = 3600 // bar.seconds if bar.seconds <= 3600 else 0
    if per_hour:
        return INTRADAY_EVERY_HOURS * per_hour, tuple(h * per_hour for h in INTRADAY_HORIZON_HOURS)
    hours = bar.seconds // 3600  # 4h bars: 6 hours is not a whole number of them
    return 1, tuple(h // hours for h in INTRADAY_HORIZON_HOURS)


def track_record_every(bar: BarSize, start: date, end: date, every: int) -> int:
    """The track record's step in bars from ``start`` to ``end``: ``every``, widened on an
    intraday universe so that the range holds at most :data:`MAX_TRACK_RECORD_CLOSES` as-of
    closes (each replays a screen); a daily universe's is ``every`` as it always was."""
    if not bar.intraday:
        return every
    span = int((close_at(end) - close_at(start)).total_seconds()) // bar.seconds
    return max(every, math.ceil(span / (MAX_TRACK_RECORD_CLOSES - 1)))


def oldest_newest(candles: Mapping[str, Candles], bar: BarSize) -> tuple[date, date]:
    """The oldest and newest close: days, or bar closes (aware UTC datetimes)."""
    if not bar.intraday:
        oldest = min(c.dates[0] for c in candles.values()).astype("datetime64[D]").item()
        newest = max(c.dates[-1] for c in candles.values()).astype("datetime64[D]").item()
        return oldest, newest
    first = min(c.dates[0] for c in candles.values()).astype(bar.dtype)
    last = max(c.dates[-1] for c in candles.values()).astype(bar.dtype)
    return point_of(first, bar), point_of(last, bar)


def default_points(
    candles: Mapping[str, Candles], window: int, horizon: int, bar: BarSize
) -> tuple[date, date]:
    """The first point with a full ``window`` days of history after the oldest close, and the
    last one the shortest horizon (``horizon`` bars) can follow."""
    oldest, newest = oldest_newest(candles, bar)
    if not bar.intraday:
        return oldest + timedelta(days=window), newest - timedelta(days=horizon)
    return oldest + timedelta(days=window), newest - timedelta(seconds=horizon * bar.seconds)


def last_closed(bar: BarSize) -> date:
    """The newest point an evaluation may take: yesterday on a daily universe (today has
    not closed), the last closed bar on an intraday one."""
    if not bar.intraday:
        return clock.today() - timedelta(days=1)
    return datetime.fromtimestamp(bar.last_closed(clock.now()), UTC)
