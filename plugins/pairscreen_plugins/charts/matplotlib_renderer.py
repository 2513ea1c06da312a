"""Chart renderer ``default``: one pair's log-ratio, its rolling bands and both legs' swaps.

Drawn with matplotlib's object API only (a :class:`~matplotlib.figure.Figure` on its own
:class:`~matplotlib.backends.backend_agg.FigureCanvasAgg`, never the pyplot state machine),
so every call builds and drops its own figure and nothing global is touched: calls from
several threads at once are safe. rcParams are only read, never written; every style is set
on the artists.

What is drawn (see ``/pair/{a}/{b}/chart.png`` in ``openapi.yaml``):

* the log-ratio ``ln(A/B)`` over every day of :class:`~pairscreen.ChartData` (the band window
  followed by the backtest window), a dotted line where the backtest starts;
* the rolling p5/p15/p85/p95 bands where they are finite (the engine fills them over the
  backtest window): the bottom band p5..p15 shaded blue, the top band p85..p95 shaded
  orange, p5/p95 as solid lines and p15/p85 dashed; the backtest's swap levels (positions
  0.2 and 0.8 of the p5..p95 band, :attr:`~pairscreen.ChartData.triggers`) dotted; today's
  optimal OU entry and exit levels (:attr:`~pairscreen.ChartData.ou_levels`), when the pair
  has them, as green dash-dot lines across the backtest window;
* every swap of both backtest legs at its execution day, on that day's log-ratio: leg A
  (starts in A) as hollow circles, leg B (starts in B) as small filled diamonds (the two legs
  often swap on the same day, so the diamond sits inside the circle); blue when the swap
  bought A, orange when it bought B;
* the current point, filled with its zone's colour (bottom blue, mid grey, top orange);
* when the strategy draws its own decision line (:attr:`~pairscreen.ChartData.spread_lines`,
  the ``kalman_band`` strategy's Kalman spread), a panel under the ratio on the same dates:
  the spread in ink, its ``±entry`` levels as orange / blue lines and its exit level dotted
  grey, over the backtest window;
* a title naming the pair, the backtest window and the data time; a line in the zone's
  colour with the current log-ratio, the price ratio, the position and the zone; the
  caller's note, one line per line of it (e.g. that a leg is in an active depeg event, that
  the data is synthetic), when there is one; a legend below.

Sizes: fonts are set in points and the resolution follows the width, from 100 dpi at 1280 px
(desktop) to about 129 dpi at 720 px (phone), so text stays readable when a phone shows the
image at its screen width. The output is exactly ``width_px`` x ``height_px``.

Speed: the tick labels, grid and legend are laid out here in pixels rather than by
matplotlib's ``Axis`` and ``Legend`` machinery, texts are measured once through the same
artists that are drawn (matplotlib caches the layout per renderer), and the PNG is encoded
here; together that halves the time of a render.
"""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import dates as mdates
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import IdentityTransform

from pairscreen.contracts import ChartData, ChartRenderer, Trade, hookimpl

# Colours: blue is the bottom side (A is cheap: the strategy buys A), orange the top side.
INK = "#1d1d1f"
TEXT = "#333333"
AXIS = "#9a9a9a"
MUTED = "#5f6368"
GRID = "#e4e4e4"
BOTTOM_FILL = "#cfe2f7"
BOTTOM_LINE = "#2f6db5"
TOP_FILL = "#fadcc2"
TOP_LINE = "#c25a10"
BOUGHT_A = "#1f5aa6"
BOUGHT_B = "#c0500c"
MID = "#6f6f6f"
NOTE = "#b3261e"
OU_LINE = "#2e7d32"  # the OU entry / exit levels: green, apart from the band colours
SPREAD_LINE = "#6a1b9a"  # the strategy's spread in its own panel: purple, apart from the rest
SPREAD_SHARE = 0.3  # of the plotting height, for the spread panel when there is one
ZONE_COLOURS = {"bottom": BOUGHT_A, "mid": MID, "top": BOUGHT_B}

# Font sizes in points.
TITLE_PT = 12.5
SUBTITLE_PT = 10.0
LABEL_PT = 10.0
TICK_PT = 9.0
LEGEND_PT = 9.0

MARGIN_PX = 12.0  # between the image edge and any text

# Leg marker styles: shape tells the leg, colour tells the coin bought.
LEG_MARKERS = {
    "A": {"marker": "o", "markersize": 10.0, "markerfacecolor": "none", "markeredgewidth": 1.8},
    "B": {"marker": "D", "markersize": 5.0, "markeredgecolor": "white", "markeredgewidth": 0.6},
}
BANDS = ("p5", "p15", "p85", "p95")


def resolution(width_px: int) -> float:
    """Dots per inch for an image ``width_px`` wide: 100 at 1280 px, higher when narrower."""
    dpi = 100.0 + (1280.0 - width_px) * (28.6 / 560.0)
    return float(min(160.0, max(100.0, dpi)))


class MatplotlibRenderer:
    """The built-in renderer (``default``); stateless, so one instance serves every thread."""

    name = "default"

    def render(self, chart: ChartData, *, width_px: int, height_px: int) -> bytes:
        if width_px < 320 or height_px < 240:
            raise ValueError(f"chart size {width_px}x{height_px} is below 320x240")
        canvas = _Chart(chart, width_px, height_px).canvas
        canvas.draw()
        return encode_png(np.asarray(canvas.buffer_rgba()))


# ---------------------------------------------------------------------------
# PNG
# ---------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def encode_png(rgba: np.ndarray) -> bytes:
    """An opaque RGBA image (rows, columns, 4) as an 8-bit RGB PNG.

    Written here rather than through Pillow because it is the hot path: rows unfiltered and
    zlib level 1 (a chart is mostly flat colour) take a third of Pillow's time, for a file of
    about the same size.
    """
    h, w = int(rgba.shape[0]), int(rgba.shape[1])
    rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    rows[:, 0] = 0  # filter type 0 (None) on every row
    rows[:, 1:] = np.asarray(rgba[..., :3], dtype=np.uint8).reshape(h, 3 * w)
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return b"".join(
        (
            PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)),
            _chunk(b"IEND", b""),
        )
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(data, zlib.crc32(kind)) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


# ---------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------


class _Chart:
    """One chart's figure, built (not drawn) on its own canvas.

    Layout is in pixels: the title block at the top, the legend along the bottom, the axes
    in between with room for the tick labels, all measured with this canvas's renderer.
    """

    def __init__(self, chart: ChartData, width_px: int, height_px: int):
        self.chart = chart
        self.w, self.h = float(width_px), float(height_px)
        dpi = resolution(width_px)
        self.px = dpi / 72.0  # pixels per point
        # A hair above the exact size: the canvas truncates width * dpi to whole pixels.
        self.fig = Figure(
            figsize=((width_px + 1e-3) / dpi, (height_px + 1e-3) / dpi),
            dpi=dpi,
            facecolor="white",
        )
        self.canvas = FigureCanvasAgg(self.fig)
        self.renderer = self.canvas.get_renderer()

        dates = np.asarray(chart.dates)
        # intraday bars (dates finer than a day) keep their hours: the time axis is in hours
        self.intraday = np.datetime_data(dates.dtype)[0] not in ("D", "W", "M", "Y")
        self.x = mdates.date2num(
            dates.astype("datetime64[s]" if self.intraday else "datetime64[D]")
        )
        self.r = np.asarray(chart.log_ratio, dtype=float)
        n = len(self.r)
        if n < 2 or len(self.x) != n:
            raise ValueError("a chart needs at least two days with one log-ratio each")
        self.start = min(max(int(chart.backtest_start_index), 0), n - 1)
        self.zone_colour = ZONE_COLOURS.get(chart.zone, MID)
        self._build()

    # -- helpers --------------------------------------------------------------------------

    def width_of(self, text: Text) -> float:
        """Rendered width in pixels; the layout is cached for the draw that follows."""
        return float(text.get_window_extent(self.renderer).width)

    def figure_text(self, x_px: float, y_px: float, s: str, **style: Any) -> Text:
        return self.fig.text(x_px / self.w, y_px / self.h, s, parse_math=False, **style)

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        chart, x = self.chart, self.x
        title_px = self._titles()
        legend_px = self._legend()

        span = x[-1] - x[0]
        x_low, x_high = x[0] - 0.01 * span, x[-1] + 0.02 * span
        y_low, y_high = _y_limits(
            self.r, chart.bands, chart.current, tuple(chart.ou_levels.values())
        )
        ax = self._axes(x_low, x_high, y_low, y_high)
        self.ax = ax
        spread = self._spread_limits()
        lower = None if spread is None else self._axes(x_low, x_high, *spread)

        y_labels = self._y_axis(ax, y_low, y_high)
        if lower is not None and spread is not None:
            y_labels += self._y_axis(lower, *spread, bins=3)
        has_offset = self._x_axis(ax if lower is None else lower, x_low, x_high)
        y_label_w = max((self.width_of(t) for t in y_labels), default=0.0)
        left = MARGIN_PX + 1.2 * LABEL_PT * self.px + 8 + y_label_w + 6
        right = 14.0
        tick_row = 1.2 * TICK_PT * self.px + 6
        bottom = legend_px + 10 + tick_row * (2 if has_offset else 1) + 4
        top = title_px + 8
        axes_w = max(0.2 * self.w, self.w - left - right)
        axes_h = max(0.2 * self.h, self.h - bottom - top)
        if lower is not None:
            lower_h = SPREAD_SHARE * axes_h
            lower.set_position((left / self.w, bottom / self.h, axes_w / self.w, lower_h / self.h))
            self._axis_label(bottom + lower_h / 2, lower_h, "Kalman spread")
            gap = 10.0
            bottom += lower_h + gap
            axes_h -= lower_h + gap
            self._spread(lower)
        ax.set_position((left / self.w, bottom / self.h, axes_w / self.w, axes_h / self.h))
        self._axis_label(bottom + axes_h / 2, axes_h, f"ln({chart.a}/{chart.b})")

        self._bands()
        ax.plot(x, self.r, color=INK, linewidth=1.3, zorder=3, solid_joinstyle="round")
        ax.axvline(x[self.start], color="#8a8a8a", linestyle=":", linewidth=1.2, zorder=2)
        self._trades()
        ax.plot(
            [x[-1]],
            [chart.current],
            linestyle="none",
            zorder=6,
            **_current_style(self.zone_colour, 10),
        )
        self._phase_labels((x_high - x[self.start]) / (x_high - x_low) * axes_w)

    def _axes(self, x_low: float, x_high: float, y_low: float, y_high: float) -> Any:
        """Axes with their limits, spines styled, matplotlib's own axis machinery off (placed
        once the labels are measured)."""
        ax = self.fig.add_axes((0.1, 0.2, 0.8, 0.6))
        ax.set_xlim(x_low, x_high)
        ax.set_ylim(y_low, y_high)
        ax.xaxis.set_visible(False)
        ax.yaxis.set_visible(False)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        for side in ("left", "bottom"):
            ax.spines[side].set_color(AXIS)
        return ax

    def _axis_label(self, y_px: float, height_px: float, text: str) -> None:
        """A vertical axis label centred on its axes, shrunk to the axes' height."""
        label = self.figure_text(
            MARGIN_PX,
            y_px,
            text,
            fontsize=LABEL_PT,
            color=TEXT,
            rotation=90,
            ha="left",
            va="center",
        )
        tall = float(label.get_window_extent(self.renderer).height)
        if tall > height_px:
            label.set_fontsize(max(6.0, LABEL_PT * height_px / tall))

    def _spread_limits(self) -> tuple[float, float] | None:
        """The spread panel's y range, or None when the strategy draws no finite spread."""
        lines = self.chart.spread_lines
        drawn = [np.asarray(v, dtype=float) for v in lines.values()]
        every = np.concatenate(drawn) if drawn else np.empty(0)
        every = every[np.isfinite(every)]
        if every.size == 0 or "spread" not in lines:
            return None
        low, high = float(every.min()), float(every.max())
        pad = max((high - low) * 0.06, 1e-4)
        return low - pad, high + pad

    def _spread(self, ax: Any) -> None:
        """The strategy's spread and its levels, in the panel under the ratio."""
        lines = {k: np.asarray(v, dtype=float) for k, v in self.chart.spread_lines.items()}
        dotted = (0, (1, 2))
        styles = {
            "upper": {"color": TOP_LINE, "linewidth": 1.0},
            "lower": {"color": BOTTOM_LINE, "linewidth": 1.0},
            "exit": {"color": MID, "linewidth": 1.0, "linestyle": dotted},
            "spread": {"color": SPREAD_LINE, "linewidth": 1.1},
        }
        for name, style in styles.items():
            if name in lines:
                ax.plot(self.x, lines[name], zorder=3 if name == "spread" else 2, **style)
        ax.axvline(self.x[self.start], color="#8a8a8a", linestyle=":", linewidth=1.2, zorder=2)

    def _titles(self) -> float:
        """Title lines at the top left, shrunk to fit the width; returns their height."""
        chart = self.chart
        simulated = len(self.r) - self.start
        if self.intraday:  # bars, counted as bars: the span itself is bt days
            window = f"backtest {chart.bt_days} d ({simulated} bars)"
        else:
            window = f"backtest {simulated} d"
            if simulated < chart.bt_days:
                window = f"backtest {simulated} of {chart.bt_days} d (short history)"
        when = chart.data_time.strftime("%Y-%m-%d %H:%M UTC" if self.intraday else "%Y-%m-%d")
        ratio = math.exp(chart.current) if math.isfinite(chart.current) else float("nan")
        now = _minus(
            f"now {chart.current:+.4g} (1 {chart.a} = {ratio:.4g} {chart.b}) \u00b7 "
            f"position {chart.position:.2f} \u00b7 {chart.zone} zone"
        )
        lines = [
            (
                f"{chart.a}/{chart.b} \u00b7 {window} \u00b7 data to {when} UTC",
                TITLE_PT,
                INK,
                "normal",
            ),
            (now, SUBTITLE_PT, self.zone_colour, "normal"),
        ]
        lines.extend((note, SUBTITLE_PT, NOTE, "italic") for note in chart.note.splitlines())
        available = self.w - 2 * MARGIN_PX
        y = self.h - 8.0
        for s, size, colour, style in lines:
            text = self.figure_text(
                MARGIN_PX,
                y,
                s,
                fontsize=size,
                color=colour,
                fontweight="bold",
                fontstyle=style,
                ha="left",
                va="top",
            )
            wide = self.width_of(text)
            if wide > available:
                size = max(6.0, size * available / wide)
                text.set_fontsize(size)
            y -= 1.45 * size * self.px
        return self.h - y

    def _legend(self) -> float:
        """The legend along the bottom edge, in as many columns as fit; returns its height."""
        a, b = self.chart.a, self.chart.b
        grey = "#444444"
        entries: list[tuple[str, dict[str, Any], str]] = [
            ("line", {"color": INK, "linewidth": 1.3}, f"ln({a}/{b})"),
            ("patch", {"facecolor": BOTTOM_FILL, "edgecolor": BOTTOM_LINE}, "p5\u2013p15 band"),
            ("patch", {"facecolor": TOP_FILL, "edgecolor": TOP_LINE}, "p85\u2013p95 band"),
            *(
                [
                    (
                        "line",
                        {"color": grey, "linewidth": 1.1, "linestyle": (0, (1, 2))},
                        "swap at 0.2 / 0.8",
                    )
                ]
                if self.chart.triggers
                else []
            ),
            *(
                [("line", _ou_style(), "OU entry / exit (today's fit)")]
                if self.chart.ou_levels
                else []
            ),
            *(
                [
                    ("line", {"color": SPREAD_LINE, "linewidth": 1.1}, "Kalman spread e"),
                    ("line", {"color": TOP_LINE, "linewidth": 1.0}, "\u00b1entry \u00b7 \u221aQ"),
                ]
                if self._spread_limits() is not None
                else []
            ),
            ("marker", _current_style(self.zone_colour, 8), f"now ({self.chart.zone})"),
            ("marker", _leg_style("A", grey), f"leg A swap (starts in {a})"),
            ("marker", _leg_style("B", grey), f"leg B swap (starts in {b})"),
            ("patch", {"facecolor": BOUGHT_A, "edgecolor": BOUGHT_A}, f"swap bought {a}"),
            ("patch", {"facecolor": BOUGHT_B, "edgecolor": BOUGHT_B}, f"swap bought {b}"),
        ]
        labels = [
            self.figure_text(
                0, 0, label, fontsize=LEGEND_PT, color=TEXT, ha="left", va="center_baseline"
            )
            for _, _, label in entries
        ]
        widths = [self.width_of(t) for t in labels]
        unit = LEGEND_PT * self.px
        key_w, gap, column_gap, row_h = 1.8 * unit, 0.5 * unit, 1.4 * unit, 1.6 * unit
        for ncol in (4, 3, 2, 1):
            nrow = math.ceil(len(entries) / ncol)
            columns = [range(c * nrow, min(len(entries), (c + 1) * nrow)) for c in range(ncol)]
            columns = [col for col in columns if len(col)]
            column_w = [key_w + gap + max(widths[i] for i in col) for col in columns]
            total = sum(column_w) + column_gap * (len(columns) - 1)
            if total <= self.w - 2 * MARGIN_PX:
                break
        identity = IdentityTransform()
        x0 = MARGIN_PX
        for col, col_w in zip(columns, column_w, strict=True):
            for row, i in enumerate(col):
                kind, style, _ = entries[i]
                y = 6.0 + (nrow - row - 0.5) * row_h
                key: Artist
                if kind == "line":
                    key = Line2D([x0, x0 + key_w], [y, y], transform=identity, **style)
                elif kind == "patch":
                    h = 0.7 * unit
                    key = Rectangle(
                        (x0, y - h / 2), key_w, h, transform=identity, linewidth=0.8, **style
                    )
                else:
                    key = Line2D(
                        [x0 + key_w / 2], [y], linestyle="none", transform=identity, **style
                    )
                self.fig.add_artist(key)
                labels[i].set_position(((x0 + key_w + gap) / self.w, y / self.h))
            x0 += col_w + column_gap
        return 6.0 + nrow * row_h

    def _y_axis(self, ax: Any, low: float, high: float, bins: int = 6) -> list[Text]:
        """Horizontal grid lines and their labels; returns the labels (to be measured)."""
        ticks = [
            float(v) for v in MaxNLocator(nbins=bins).tick_values(low, high) if low <= v <= high
        ]
        along = ax.get_yaxis_transform()
        gx, gy = _segments(ticks)
        ax.add_line(Line2D(gy, gx, transform=along, color=GRID, linewidth=0.7, zorder=0))
        return [
            ax.annotate(
                label,
                (0, v),
                xycoords=along,
                xytext=(-5, 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=TICK_PT,
                color=TEXT,
                parse_math=False,
                annotation_clip=False,
            )
            for v, label in zip(ticks, y_tick_labels(ticks), strict=True)
        ]

    def _x_axis(self, ax: Any, low: float, high: float) -> bool:
        """Vertical grid lines at date ticks and their labels; True when a year row is added."""
        locator = mdates.AutoDateLocator(minticks=3, maxticks=7)
        ticks = [
            float(v)
            for v in locator.tick_values(mdates.num2date(low), mdates.num2date(high))
            if low <= v <= high
        ]
        if not ticks:
            return False
        formatter = mdates.ConciseDateFormatter(locator)
        labels = formatter.format_ticks(ticks)
        along = ax.get_xaxis_transform()
        gx, gy = _segments(ticks)
        ax.add_line(Line2D(gx, gy, transform=along, color=GRID, linewidth=0.7, zorder=0))
        style: dict[str, Any] = {
            "fontsize": TICK_PT,
            "color": TEXT,
            "parse_math": False,
            "annotation_clip": False,
        }
        for value, label in zip(ticks, labels, strict=True):
            ax.annotate(
                label,
                (value, 0),
                xycoords=along,
                xytext=(0, -5),
                textcoords="offset points",
                ha="center",
                va="top",
                **style,
            )
        offset = formatter.get_offset()  # the year, when every tick shares one
        if offset:
            ax.annotate(
                offset,
                (1, 0),
                xycoords="axes fraction",
                xytext=(0, -8 - 1.2 * TICK_PT),
                textcoords="offset points",
                ha="right",
                va="top",
                **style,
            )
        return bool(offset)

    # -- data -----------------------------------------------------------------------------

    def _bands(self) -> None:
        p5, p15, p85, p95 = (np.asarray(self.chart.bands[k], dtype=float) for k in BANDS)
        finite = np.isfinite(p5) & np.isfinite(p15) & np.isfinite(p85) & np.isfinite(p95)
        if not finite.any():
            return
        # Bands are NaN before the backtest window: draw from the first finite day on.
        first = int(np.argmax(finite))
        x, p5, p15, p85, p95, finite = (v[first:] for v in (self.x, p5, p15, p85, p95, finite))
        where = None if finite.all() else finite
        ax = self.ax
        ax.fill_between(x, p5, p15, where=where, color=BOTTOM_FILL, linewidth=0, zorder=1)
        ax.fill_between(x, p85, p95, where=where, color=TOP_FILL, linewidth=0, zorder=1)
        dashed = (0, (4, 3))
        ax.plot(x, p5, color=BOTTOM_LINE, linewidth=1.0, zorder=2)
        ax.plot(x, p15, color=BOTTOM_LINE, linewidth=0.9, linestyle=dashed, zorder=2)
        ax.plot(x, p85, color=TOP_LINE, linewidth=0.9, linestyle=dashed, zorder=2)
        ax.plot(x, p95, color=TOP_LINE, linewidth=1.0, zorder=2)
        self._triggers(first)
        self._ou_levels(first)

    def _triggers(self, first: int) -> None:
        """The backtest's swap levels (positions 0.2 and 0.8), dotted, where they are finite."""
        dotted = (0, (1, 2))
        for name, colour in (("low", BOTTOM_LINE), ("high", TOP_LINE)):
            level = self.chart.triggers.get(name)
            if level is None:
                continue
            y = np.asarray(level, dtype=float)[first:]
            self.ax.plot(self.x[first:], y, color=colour, linewidth=1.1, linestyle=dotted, zorder=2)

    def _ou_levels(self, first: int) -> None:
        """Today's optimal OU entry and exit, flat across the backtest window."""
        x = self.x[first:]
        for level in self.chart.ou_levels.values():
            self.ax.plot([x[0], x[-1]], [level, level], zorder=2, **_ou_style())

    def _trades(self) -> None:
        """Mark every swap at its execution day (the close it was made at)."""
        n = len(self.r)
        for leg in ("A", "B"):
            leg_trades: Sequence[Trade] = tuple(self.chart.trades.get(leg, ()) or ())
            for bought, colour in (("A", BOUGHT_A), ("B", BOUGHT_B)):
                idx = np.array(
                    [
                        t.day_index
                        for t in leg_trades
                        if t.bought == bought and 0 <= t.day_index < n
                    ],
                    dtype=np.intp,
                )
                if idx.size:
                    self.ax.plot(
                        self.x[idx],
                        self.r[idx],
                        linestyle="none",
                        zorder=5 if leg == "B" else 4,
                        **_leg_style(leg, colour),
                    )

    def _phase_labels(self, room_px: float) -> None:
        """Name the two sides of the backtest line; the right one shortens without room."""
        at = self.x[self.start]
        style: dict[str, Any] = {
            "fontsize": TICK_PT,
            "color": MUTED,
            "va": "top",
            "parse_math": False,
            "transform": self.ax.get_xaxis_transform(),
        }
        if self.start > 0:
            self.ax.text(at, 0.985, "band window \u2190 ", ha="right", **style)
        days = len(self.r) - self.start
        label = self.ax.text(at, 0.985, f" \u2192 backtest {days} d", ha="left", **style)
        if self.width_of(label) > room_px:
            label.set_text(f" \u2192 {days} d")


def _segments(at: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Separate segments from 0 to 1 at each of ``at``, as one polyline (NaN between)."""
    xs = np.repeat(np.asarray(at, dtype=float), 3)
    ys = np.tile(np.array([0.0, 1.0, np.nan]), len(at))
    return xs, ys


def _current_style(colour: str, size: float) -> dict[str, Any]:
    return {
        "marker": "o",
        "markersize": size,
        "markerfacecolor": colour,
        "markeredgecolor": INK,
        "markeredgewidth": 1.2,
    }


def _ou_style() -> dict[str, Any]:
    return {"color": OU_LINE, "linewidth": 1.2, "linestyle": (0, (6, 2, 1, 2))}


def _leg_style(leg: str, colour: str) -> dict[str, Any]:
    style = dict(LEG_MARKERS[leg])
    style["markeredgecolor" if leg == "A" else "markerfacecolor"] = colour
    return style


def _y_limits(
    r: np.ndarray, bands: Mapping[str, np.ndarray], current: float, levels: Sequence[float] = ()
) -> tuple[float, float]:
    values = [r, np.array([current, *levels], dtype=float)]
    values.extend(np.asarray(bands[k], dtype=float) for k in BANDS)
    every = np.concatenate(values)
    every = every[np.isfinite(every)]
    low, high = float(every.min()), float(every.max())
    pad = max((high - low) * 0.06, 1e-4)
    return low - pad, high + 2.2 * pad  # more headroom at the top, for the phase labels


def y_tick_labels(ticks: Sequence[float]) -> list[str]:
    """Labels with the fewest decimals (at least one) that show every tick exactly."""
    ticks = [float(v) for v in ticks]
    step = min((abs(b - a) for a, b in itertools.pairwise(ticks)), default=1.0) or 1.0
    for decimals in range(1, 12):
        if all(abs(round(v, decimals) - v) <= 1e-6 * step for v in ticks):
            break
    return [_minus(f"{round(v, decimals) + 0.0:.{decimals}f}") for v in ticks]


def _minus(text: str) -> str:
    return text.replace("-", "\u2212")  # a real minus sign, as wide as a plus


RENDERER: ChartRenderer = MatplotlibRenderer()


@hookimpl
def pairscreen_register_chart_renderers() -> list[ChartRenderer]:
    return [RENDERER]


__all__ = [
    "MatplotlibRenderer",
    "encode_png",
    "pairscreen_register_chart_renderers",
    "resolution",
    "y_tick_labels",
]
