"""The demo market's intraday bars: each simulated day cut into bars that end on its close.

A day's bars follow a Brownian bridge in log price from the previous day's close to the
day's close, with the asset's own daily scale spread over the day, so the bar closing at
00:00 UTC is exactly the daily demo market's close and an intraday universe tells the same
synthetic story as the daily one. A day's bar noise depends on ``(seed, symbol, day)`` only:
the same day always gets the same bars. The day's volume (when known) is split over its bars.
"""

from __future__ import annotations

import numpy as np

from pairscreen_plugins.demo_market.streams import stream_key

DAY_SECONDS = 86_400


def day_bars(
    seed: int,
    symbol: str,
    day_index: int,
    bars_per_day: int,
    open_close: tuple[float, float],
    day_volume: float,
    scale: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The closes and volumes of one day's ``bars_per_day`` bars, the last close being the
    day's; ``open_close`` is (the previous day's close, the day's close)."""
    rng = np.random.default_rng([seed & 0xFFFFFFFF, stream_key(f"bars:{symbol}"), day_index])
    steps = rng.standard_normal(bars_per_day) * (scale / np.sqrt(bars_per_day))
    walk = np.cumsum(steps)
    fraction = np.arange(1, bars_per_day + 1) / bars_per_day
    bridge = walk - fraction * walk[-1]  # zero at both ends of the day
    start, end = np.log(open_close[0]), np.log(open_close[1])
    log_close = start + fraction * (end - start) + bridge
    close = np.exp(log_close)
    close[-1] = open_close[1]  # exactly the daily close, not exp(log(x)) of it
    weights = rng.random(bars_per_day) + 0.5
    volume = day_volume * weights / weights.sum()
    return close, volume


def bars_between(
    seed: int,
    symbol: str,
    days: np.ndarray,
    close: np.ndarray,
    volume: np.ndarray,
    scale: float,
    bar_seconds: int,
    after: int,
    until: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bars of ``days`` (``datetime64[D]``, with their daily ``close`` and ``volume``)
    closing after ``after`` and at or before ``until`` (epoch seconds): close times,
    closes, volumes. The first day has no previous close and no bars."""
    per_day = DAY_SECONDS // bar_seconds
    epoch_days = days.astype(np.int64)
    first_day = max(1, int(np.searchsorted(epoch_days, (after - 1) // DAY_SECONDS)))
    times: list[np.ndarray] = []
    closes: list[np.ndarray] = []
    volumes: list[np.ndarray] = []
    offsets = np.arange(1, per_day + 1, dtype=np.int64) * bar_seconds
    for i in range(first_day, len(days)):
        day_start = int(epoch_days[i]) * DAY_SECONDS
        if day_start >= until:
            break
        bar_close, bar_volume = day_bars(
            seed,
            symbol,
            int(epoch_days[i]),
            per_day,
            (float(close[i - 1]), float(close[i])),
            float(volume[i]),
            scale,
        )
        stamps = day_start + offsets
        keep = (stamps > after) & (stamps <= until)
        times.append(stamps[keep])
        closes.append(bar_close[keep])
        volumes.append(bar_volume[keep])
    if not times:
        empty = np.array([], dtype=np.float64)
        return np.array([], dtype=np.int64), empty, empty.copy()
    return np.concatenate(times), np.concatenate(closes), np.concatenate(volumes)
