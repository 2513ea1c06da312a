"""``/pair/{a}/{b}/chart.png``: the snapshot's pair drawn by the configured chart renderer.

The numbers come from the same place as the snapshot: the pair's history is aligned by
:func:`~pairscreen.screening.snapshot.aligned_pair`, the panel is the snapshot's panel (the
last ``window_days + bt`` days), the current position and zone are the metric plugins' values
(:func:`~pairscreen.engine.evaluate.compute_metrics`) and the swaps are the configured
strategy's, both legs, with trades. What this module adds is the rolling bands.

Bands: for every day ``t`` of the backtest window, p5/p15/p85/p95 of the log-ratios of the
``window_days`` calendar days strictly before ``t`` (numpy's linear interpolation, like the
snapshot's bands), the window the walk-forward backtest uses on that day. With a short
history the window is every day before ``t``. On the last day this is exactly ``H``, so the
drawn band at the current point is the snapshot's ``p5 .. p95``. Days before the backtest
window (the band window itself) have no band drawn (NaN): each of those days' bands would
need history the chart does not show.

The drawn days are the common closes of the last ``window_days + bt`` calendar days (the
snapshot's panel without the close before that span it may hold to know the history covers
it): for a pair mixing calendars, fewer closes than days.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pairscreen import clock
from pairscreen.contracts import Asset, BacktestBatch, ChartData, PairPanel, Trade
from pairscreen.engine.evaluate import compute_metrics, run_legs
from pairscreen.engine.required_fields import POSITION, ZONE
from pairscreen.pegs.status import active_depegs, depegged_legs
from pairscreen.runtime import Runtime
from pairscreen.runtime.charts import chart_key
from pairscreen.screening.snapshot import aligned_pair, pair_stale_reason, snapshot_panel
from pairscreen.screening.spans import screen_spans

log = logging.getLogger(__name__)

# The sizes the API offers (the ``size`` query parameter), in pixels.
SIZES: dict[str, tuple[int, int]] = {"desktop": (1280, 720), "phone": (720, 480)}
BAND_PERCENTILES: dict[str, float] = {"p5": 5.0, "p15": 15.0, "p85": 85.0, "p95": 95.0}
ZONE_EDGES = (0.2, 0.8)  # bottom below 0.2, top above 0.8


def chart_png(
    rt: Runtime, asset_a: Asset, asset_b: Asset, bt: int, *, size: str = "desktop"
) -> bytes:
    """The PNG of the pair with a ``bt``-day backtest; 404 like the snapshot."""
    try:
        width, height = SIZES[size]
    except KeyError:
        raise ValueError(f"unknown chart size {size!r}") from None
    chart = chart_data(rt, asset_a, asset_b, bt)
    renderer = rt.plugins.chart_renderers.get(rt.settings.chart_renderer)
    key = chart_key(chart, renderer.name, width, height)
    png = rt.charts.get(key)
    if png is None:
        png = renderer.render(chart, width_px=width, height_px=height)
        rt.charts.put(key, png)
    return png


def chart_data(rt: Runtime, asset_a: Asset, asset_b: Asset, bt: int) -> ChartData:
    """Everything the renderer draws for one pair, from the snapshot's computation."""
    pair = aligned_pair(rt, asset_a, asset_b)
    settings = rt.settings
    window_days = screen_spans(rt.universe, settings).window_days
    panel = snapshot_panel(rt, pair, bt)
    strategy = rt.plugins.strategies.get(settings.strategy)
    legs = run_legs(strategy, panel, bt, with_trades=True)
    start = panel.n_days - int(legs["A"].simulated_closes()[0])
    # bars back from the last close (days, for daily closes): the band's span in bars
    offsets = panel.bar_offsets
    drawn = panel.calendar_window(window_days + bt).start  # first drawn column
    r = panel.log_ratio[0]
    bands = rolling_bands(r, start, panel.bar.bars(window_days), offsets)
    values = compute_metrics(rt.plugins, panel).values
    current, position, zone = _current(values, panel, bands)
    bands = {name: band[drawn:] for name, band in bands.items()}
    return ChartData(
        a=asset_a.ticker,
        b=asset_b.ticker,
        bt_days=bt,
        dates=panel.dates[0, drawn:],
        log_ratio=r[drawn:],
        bands=bands,
        current=current,
        position=position,
        zone=zone,
        backtest_start_index=start - drawn,
        trades={leg: _trades(batch, leg, drawn) for leg, batch in legs.items()},
        data_time=_last_moment(pair.dates[-1], pair.bar.intraday),
        note=_note(rt, asset_a, asset_b),
        triggers=trigger_levels(bands),
        ou_levels=ou_levels(values),
        spread_lines={name: line[drawn:] for name, line in strategy_lines(strategy, panel, bt)},
    )


def _last_moment(last: np.datetime64, intraday: bool) -> datetime:
    """00:00 UTC of the last common day; the last bar's close time for intraday bars."""
    unit = "datetime64[s]" if intraday else "datetime64[D]"
    return datetime.fromisoformat(str(last.astype(unit))).replace(tzinfo=UTC)


def strategy_lines(strategy: object, panel: PairPanel, bt: int) -> list[tuple[str, np.ndarray]]:
    """The strategy's own chart lines (``chart_lines(panel, bt_days)``, one value per column
    of the panel), when it draws any: the ``kalman_band`` strategy's spread and its levels."""
    draw = getattr(strategy, "chart_lines", None)
    if not callable(draw):
        return []
    return [(str(name), np.asarray(line, dtype=float)) for name, line in draw(panel, bt).items()]


def ou_levels(values: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Today's optimal OU entry and exit (the ``ou_entry`` / ``ou_exit`` metric fields), when
    a metric gives them and they are finite; empty otherwise (no fit, metric not loaded)."""
    levels: dict[str, float] = {}
    for name in ("entry", "exit"):
        array = values.get(f"ou_{name}")
        if array is not None and np.isfinite(float(array[0])):
            levels[name] = float(array[0])
    return levels


def trigger_levels(bands: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Where the accumulation backtest swaps, in log-ratio: positions 0.2 and 0.8 of each
    day's p5..p95 band (NaN where the band is)."""
    p5, width = bands["p5"], bands["p95"] - bands["p5"]
    return {"low": p5 + ZONE_EDGES[0] * width, "high": p5 + ZONE_EDGES[1] * width}


def chart_series(rt: Runtime, asset_a: Asset, asset_b: Asset, bt: int) -> dict[str, Any]:
    """``/pair/{a}/{b}/series``: :func:`chart_data` as JSON (NaN as null, days as dates)."""
    chart = chart_data(rt, asset_a, asset_b, bt)
    days = [str(d) for d in chart.dates.astype("datetime64[D]")]
    r = chart.log_ratio
    intraday = np.datetime_data(chart.dates.dtype)[0] != "D"
    closes = [f"{t}+00:00" for t in chart.dates.astype("datetime64[s]").astype(str)]
    start = min(chart.backtest_start_index, len(days) - 1)
    times = (
        {"close_times": closes, "backtest_start_close": closes[start] if closes else None}
        if intraday
        else {}
    )

    def trade(t: Trade) -> dict[str, Any]:
        """A swap at its day (and, on intraday bars, its bar's close time)."""
        at = {"close_time": closes[t.day_index]} if intraday else {}
        return {
            "date": days[t.day_index],
            "bought": t.bought,
            "log_ratio": float(r[t.day_index]),
            **at,
        }

    return {
        "pair": f"{chart.a}/{chart.b}",
        "a": chart.a,
        "b": chart.b,
        "bt_days": chart.bt_days,
        "data_time": clock.iso(chart.data_time),
        "backtest_start": days[start],
        "dates": days,
        "log_ratio": _values(r),
        "ratio": _values(np.exp(r)),
        "position": _values(day_positions(r, chart.bands)),
        "bands": {name: _values(v) for name, v in chart.bands.items()},
        "triggers": {name: _values(v) for name, v in chart.triggers.items()},
        "ou_levels": {name: chart.ou_levels.get(name) for name in ("entry", "exit")},
        "spread_lines": {name: _values(v) for name, v in chart.spread_lines.items()},
        "trades": {leg: [trade(t) for t in trades] for leg, trades in chart.trades.items()},
        "current": {"log_ratio": chart.current, "position": chart.position, "zone": chart.zone},
        **times,
    }


def day_positions(r: np.ndarray, bands: Mapping[str, np.ndarray]) -> np.ndarray:
    """Each day's position in its own band, ``(r - p5) / (p95 - p5)`` (0.5 for a flat band,
    as the position metric); NaN before the backtest window."""
    p5, width = bands["p5"], bands["p95"] - bands["p5"]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(width == 0, 0.5, (r - p5) / width)


def _values(v: np.ndarray) -> list[float | None]:
    """An array as JSON numbers, NaN as null."""
    return [float(x) if np.isfinite(x) else None for x in v]


def rolling_bands(
    r: np.ndarray, start: int, window: int, days_back: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Per day ``t >= start``: the band percentiles of the values of the ``window`` calendar
    days before ``t``.

    ``days_back`` gives each value's calendar days before the last one (None: one value a
    day). Days before ``start`` are NaN. Values are numpy's linear-interpolation percentiles,
    the same as ``np.percentile(r[max(0, t - window):t], q)`` day by day for daily values.
    """
    n = len(r)
    start = max(1, min(int(start), n))
    q = list(BAND_PERCENTILES.values())
    out = np.full((len(q), n), np.nan)
    if days_back is not None and not bool((np.diff(days_back) == -1).all()):
        rising = -np.asarray(days_back)
        for t in range(start, n):
            lo = int(np.searchsorted(rising, -(int(days_back[t]) + window), side="left"))
            if lo < t:
                out[:, t] = np.percentile(r[lo:t], q)
        return dict(zip(BAND_PERCENTILES, out, strict=True))
    full_from = max(start, window)  # first day with a whole window before it
    if full_from < n:
        windows = sliding_window_view(r[: n - 1], window)[full_from - window :]
        out[:, full_from:] = np.percentile(windows, q, axis=1)
    for t in range(start, min(full_from, n)):
        out[:, t] = np.percentile(r[:t], q)
    return dict(zip(BAND_PERCENTILES, out, strict=True))


def _current(
    values: Mapping[str, np.ndarray], panel: PairPanel, bands: dict[str, np.ndarray]
) -> tuple[float, float, str]:
    """The current log-ratio (the panel's last one), and the position and zone the metric
    plugins give, as the snapshot.

    Should the metric providing them fail (it is logged by ``compute_metrics``), the same
    definitions are applied to the last day's band so the chart is still drawn.
    """
    current = float(panel.r_current[0])
    if POSITION.name in values and ZONE.name in values:
        return current, float(values[POSITION.name][0]), str(values[ZONE.name][0])
    log.warning("position/zone metrics unavailable; the chart computes them from its bands")
    p5, p95 = float(bands["p5"][-1]), float(bands["p95"][-1])
    position = 0.5 if p95 == p5 else (current - p5) / (p95 - p5)
    zone = "bottom" if position < ZONE_EDGES[0] else "top" if position > ZONE_EDGES[1] else "mid"
    return current, position, zone


def _trades(batch: BacktestBatch, leg: str, drawn: int) -> tuple[Trade, ...]:
    """The leg's swaps, with ``day_index`` counted from the first drawn column."""
    if batch.trades is None:
        log.warning("strategy returned no trades for leg %s; the chart shows none", leg)
        return ()
    return tuple(replace(t, day_index=t.day_index - drawn) for t in batch.trades[0])


def _note(rt: Runtime, a: Asset, b: Asset) -> str:
    """The chart's warning lines: stale legs (the snapshot's ``stale`` reason, every stale
    leg with its age: the line drawn stopped moving only because the data stopped), a leg
    in an active depeg event (its prices are not the pair's usual behaviour, as the
    snapshot's ``depeg`` reason says), synthetic data."""
    lines = [line for line in [pair_stale_reason(rt, a, b)] if line]
    lines += [
        f"Depeg: {leg.ticker} is in an active depeg event"
        + (f" since {clock.iso(leg.since)}" if leg.since else "")
        for leg in depegged_legs(active_depegs(), a.ticker, b.ticker)
    ]
    label = rt.universe.label
    if "synthetic" in label.lower():
        lines.append(f"Synthetic data ({label}): these prices are not real.")
    return "\n".join(lines)
