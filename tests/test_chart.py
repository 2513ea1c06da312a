"""``/pair/{a}/{b}/chart.png`` and the built-in chart renderer ``default``.

Renderer tests draw hand-built, deterministic :class:`ChartData` (no demo market): decoded
size, not blank, the band fills, the zone colour, trade markers and the note present exactly
when the data has them, identical bytes from concurrent threads, a golden image with an RMS
tolerance, and bounded memory over many renders. HTTP tests go through the app with the demo
market: content type, PNG, headers, quota (one unit per 200, none for 400/404), and the same
numbers as the snapshot.

Refresh the golden image after an intended visual change with
``PAIRSCREEN_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_chart.py -k golden`` and
commit ``tests/golden/chart_default.png`` after looking at it.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from matplotlib import colors as mcolors
from pairscreen_plugins.charts import matplotlib_renderer as mpl_renderer
from PIL import Image

from pairscreen import ChartData, Trade, hookimpl
from pairscreen.bootstrap import build_runtime
from pairscreen.config import Settings
from pairscreen.db.connection import database
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screening.chart import SIZES, chart_data, chart_png, rolling_bands, trigger_levels

BASE = "/api/v1"
GOLDEN = Path(__file__).parent / "golden" / "chart_default.png"
GOLDEN_RMS_TOLERANCE = 3.0  # per-pixel RMS over R, G, B on the 0-255 scale
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RENDERER = mpl_renderer.MatplotlibRenderer()


# ---------------------------------------------------------------------------
# Hand-built chart data and image helpers
# ---------------------------------------------------------------------------


def synthetic_chart(
    seed: int = 11, *, days: int = 900, bt: int = 360, window: int = 540
) -> ChartData:
    """A deterministic oscillating log-ratio with its rolling bands and both legs' swaps."""
    rng = np.random.default_rng(seed)
    t = np.arange(days)
    noise = np.zeros(days)
    shocks = rng.normal(0.0, 0.025, days)
    for i in range(1, days):
        noise[i] = 0.93 * noise[i - 1] + shocks[i]
    r = -0.8 + 0.22 * np.sin(2 * np.pi * t / 97.0) + 0.06 * np.sin(2 * np.pi * t / 23.0) + noise
    dates = np.datetime64("2024-01-01") + t.astype("timedelta64[D]")
    start = days - bt
    bands = rolling_bands(r, start, window)
    trades = {leg: tuple(_swaps(r, bands, dates, start, leg)) for leg in ("A", "B")}
    p5, p95 = bands["p5"][-1], bands["p95"][-1]
    position = float((r[-1] - p5) / (p95 - p5))
    zone = "bottom" if position < 0.2 else "top" if position > 0.8 else "mid"
    return ChartData(
        a="ETH",
        b="BTC",
        bt_days=bt,
        dates=dates,
        log_ratio=r,
        bands=bands,
        current=float(r[-1]),
        position=position,
        zone=zone,
        backtest_start_index=start,
        trades=trades,
        data_time=datetime(2026, 6, 18, tzinfo=UTC),
        note="Synthetic data (hand-built test chart): these prices are not real.",
    )


def _swaps(r, bands, dates, start, leg):  # type: ignore[no-untyped-def]
    """The accumulation rule on the drawn bands (a stand-in for the strategy plugin)."""
    holding = leg
    for t in range(start, len(r)):
        p5, p95 = bands["p5"][t], bands["p95"][t]
        position = (r[t - 1] - p5) / (p95 - p5)
        if position <= 0.2 and holding == "B":
            holding = "A"
            yield Trade(t, dates[t].item(), "A", float(r[t - 1]))
        elif position >= 0.8 and holding == "A":
            holding = "B"
            yield Trade(t, dates[t].item(), "B", float(r[t - 1]))


def decode(png: bytes) -> np.ndarray:
    assert png.startswith(PNG_SIGNATURE)
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def colour_pixels(image: np.ndarray, colour: str, tolerance: int = 2) -> int:
    """How many pixels have ``colour`` (a hex string), within ``tolerance`` per channel."""
    rgb = np.array([round(c * 255) for c in mcolors.to_rgb(colour)], dtype=np.int16)
    return int(np.all(np.abs(image - rgb) <= tolerance, axis=-1).sum())


def rms(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a.astype(float) - b.astype(float)) ** 2)))


def render(chart: ChartData, size: str = "desktop") -> bytes:
    width, height = SIZES[size]
    return RENDERER.render(chart, width_px=width, height_px=height)


def rss_bytes() -> int:
    """Resident anonymous memory of this process (heap, not file pages that the kernel may
    evict and page back in while other processes compete for memory)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    with open("/proc/self/statm") as f:  # kernels without RssAnon: resident minus shared
        fields = f.read().split()
    return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------------------
# The renderer plugin
# ---------------------------------------------------------------------------


def test_renderer_registers_through_its_hook():
    pm = new_plugin_manager()
    pm.register(mpl_renderer, name="charts")
    renderers = Plugins(pm, Settings()).chart_renderers
    assert "default" in renderers
    assert [r.name for r in mpl_renderer.pairscreen_register_chart_renderers()] == ["default"]


def test_renderer_never_imports_pyplot():
    tree = ast.parse(Path(mpl_renderer.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    assert "matplotlib.backends.backend_agg.FigureCanvasAgg" in imported
    assert not any("pyplot" in name for name in imported)


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_png_has_the_size_asked_for_and_is_not_blank(size):
    image = decode(render(synthetic_chart(), size))
    width, height = SIZES[size]
    assert image.shape == (height, width, 3)
    assert image.std() > 20  # a blank or single-colour image has std 0
    assert (image.sum(axis=-1) < 200).mean() > 0.002  # dark ink: the line, the text


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_band_fills_are_drawn_where_bands_exist(size):
    chart = synthetic_chart()
    image = decode(render(chart, size))
    total = image.shape[0] * image.shape[1]
    assert colour_pixels(image, mpl_renderer.BOTTOM_FILL) > 0.004 * total
    assert colour_pixels(image, mpl_renderer.TOP_FILL) > 0.004 * total
    no_bands = {k: np.full(len(chart.log_ratio), np.nan) for k in chart.bands}
    bare = decode(render(replace(chart, bands=no_bands), size))
    # Only the two legend swatches remain.
    assert colour_pixels(bare, mpl_renderer.BOTTOM_FILL) < 0.0015 * total
    assert colour_pixels(bare, mpl_renderer.TOP_FILL) < 0.0015 * total


def test_swap_levels_are_drawn_dotted_in_the_band_colours():
    """The 0.2 / 0.8 levels (``ChartData.triggers``) add their line colours inside the band
    window, and nothing is drawn without them (a third-party ``ChartData`` may omit them)."""
    chart = synthetic_chart()
    triggers = trigger_levels(dict(chart.bands))
    drawn = decode(render(replace(chart, triggers=triggers)))
    # The same layout (legend entry included) with levels that are NaN everywhere.
    unset = {name: np.full(len(chart.log_ratio), np.nan) for name in triggers}
    bare = decode(render(replace(chart, triggers=unset)))
    changed = np.nonzero(np.any(np.abs(drawn - bare) > 40, axis=-1))[1]
    assert len(changed) > 500, len(changed)
    # Only in the backtest window: the last 40 % of the days, right of 55 % of the width.
    assert changed.min() > 0.55 * drawn.shape[1]
    assert decode(render(replace(chart, triggers={}))).shape == drawn.shape
    start = chart.backtest_start_index
    p5, p95 = chart.bands["p5"][start:], chart.bands["p95"][start:]
    assert np.allclose(triggers["low"][start:], p5 + 0.2 * (p95 - p5))
    assert np.isnan(triggers["high"][:start]).all()


def test_current_point_takes_its_zone_colour():
    chart = synthetic_chart()
    top = decode(render(replace(chart, zone="top", position=0.95)))
    bottom = decode(render(replace(chart, zone="bottom", position=0.05)))
    assert (
        colour_pixels(top, mpl_renderer.BOUGHT_B)
        > colour_pixels(bottom, mpl_renderer.BOUGHT_B) + 100
    )
    assert (
        colour_pixels(bottom, mpl_renderer.BOUGHT_A)
        > colour_pixels(top, mpl_renderer.BOUGHT_A) + 100
    )


def test_trade_markers_of_both_legs_are_drawn():
    chart = synthetic_chart()
    assert (
        {t.bought for t in chart.trades["A"]} == {t.bought for t in chart.trades["B"]} == {"A", "B"}
    )
    with_trades = decode(render(chart))
    without = decode(render(replace(chart, trades={"A": (), "B": ()})))
    leg_b_only = decode(render(replace(chart, trades={"A": (), "B": chart.trades["B"]})))
    for colour in (mpl_renderer.BOUGHT_A, mpl_renderer.BOUGHT_B):
        assert (
            colour_pixels(with_trades, colour)
            > colour_pixels(leg_b_only, colour)
            > colour_pixels(without, colour)
        )


def test_note_is_shown_only_when_given():
    chart = synthetic_chart()
    assert colour_pixels(decode(render(chart)), mpl_renderer.NOTE, tolerance=12) > 200
    assert (
        colour_pixels(decode(render(replace(chart, note=""))), mpl_renderer.NOTE, tolerance=12) == 0
    )


def test_each_line_of_the_note_is_drawn_above_the_plot():
    """A depegged leg adds a line to the synthetic-data one: both are drawn, and the plot
    moves down to make room rather than running under the second line."""
    chart = synthetic_chart()
    depeg = "Depeg: PAXG is in an active depeg event since 2026-11-20T14:00:00+00:00"
    image = decode(render(replace(chart, note=f"{depeg}\n{chart.note}")))
    note_rows = np.flatnonzero(mask(image, mpl_renderer.NOTE, tolerance=12).any(axis=1))
    lines = np.split(note_rows, np.flatnonzero(np.diff(note_rows) > 1) + 1)
    assert len(lines) == 2
    assert note_rows[-1] < plot_top(image)
    assert plot_top(decode(render(chart))) < plot_top(image)


def mask(image: np.ndarray, colour: str, tolerance: int = 2) -> np.ndarray:
    """Per pixel, whether it has ``colour`` (a hex string), within ``tolerance``."""
    rgb = np.array([round(c * 255) for c in mcolors.to_rgb(colour)], dtype=np.int16)
    return np.asarray(np.all(np.abs(image - rgb) <= tolerance, axis=-1))


def plot_top(image: np.ndarray) -> int:
    """The top pixel row of the plot: where the left spine (the longest axis-grey column)
    starts."""
    spine = mask(image, mpl_renderer.AXIS)
    return int(np.flatnonzero(spine[:, int(spine.sum(axis=0).argmax())])[0])


def test_short_history_and_flat_bands_still_render():
    chart = synthetic_chart(days=300, bt=90, window=540)
    flat = {k: np.where(np.isnan(v), np.nan, -0.8) for k, v in chart.bands.items()}
    for variant in (chart, replace(chart, bands=flat, position=0.5, zone="mid", trades={})):
        assert decode(render(variant, "phone")).shape == (480, 720, 3)


def test_y_tick_labels_show_every_tick_exactly_and_distinctly():
    labels = mpl_renderer.y_tick_labels
    assert labels([-0.016, -0.008, 0.0, 0.008, 0.016]) == [
        "\u22120.016",
        "\u22120.008",
        "0.000",
        "0.008",
        "0.016",
    ]
    assert labels([-0.6, 5.551115123125783e-17, 0.6]) == ["\u22120.6", "0.0", "0.6"]
    assert labels([0.0, 0.025, 0.05]) == ["0.000", "0.025", "0.050"]
    assert labels([-5.76, -5.68, -5.6]) == ["\u22125.76", "\u22125.68", "\u22125.60"]


def test_encode_png_round_trips_exactly():
    rng = np.random.default_rng(3)
    rgba = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)
    rgba[..., 3] = 255
    assert np.array_equal(decode(mpl_renderer.encode_png(rgba)), rgba[..., :3])


def test_concurrent_renders_equal_sequential_renders():
    charts = [synthetic_chart(seed) for seed in range(8)]
    sequential = [render(c, "desktop" if i % 2 else "phone") for i, c in enumerate(charts)]
    assert len(set(sequential)) == 8
    concurrent: list[bytes | None] = [None] * 8
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(2):
                concurrent[i] = render(charts[i], "desktop" if i % 2 else "phone")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert concurrent == sequential


def test_golden_image():
    png = render(synthetic_chart())
    if os.environ.get("PAIRSCREEN_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_bytes(png)
        pytest.skip(f"golden image written to {GOLDEN}; look at it, then commit it")
    assert GOLDEN.is_file(), f"{GOLDEN} is missing: run with PAIRSCREEN_UPDATE_GOLDEN=1 once"
    golden = decode(GOLDEN.read_bytes())
    image = decode(png)
    assert image.shape == golden.shape
    assert rms(image, golden) <= GOLDEN_RMS_TOLERANCE
    # The tolerance is tight enough to notice a different chart.
    chart = synthetic_chart()
    for changed in (
        replace(chart, zone="bottom", position=0.1),  # only the current point's colour
        replace(chart, trades={"A": (), "B": ()}),  # only the swap markers
        synthetic_chart(seed=12),  # other data
    ):
        assert rms(decode(render(changed)), golden) > GOLDEN_RMS_TOLERANCE


MEMORY_PROBE = """
import gc
from tests.test_chart import render, rss_bytes, synthetic_chart

chart = synthetic_chart()
for _ in range(20):
    render(chart, "phone")
gc.collect()
before = rss_bytes()
for i in range(1, 301):
    render(chart, "phone")
    if i % 50 == 0:
        gc.collect()
        print(round((rss_bytes() - before) / 2**20, 1))
"""


@pytest.mark.slow
def test_memory_stays_bounded_over_many_renders():
    """300 renders grow the resident set by less than 30 MB (phone size, for time).

    Measured in a process of its own: the test process's resident set also counts what other
    tests' leftover threads allocate meanwhile, which once added a one-off 33 MB here.
    """
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    growth_mb = [float(line) for line in done.stdout.split()]
    assert len(growth_mb) == 6, done.stdout + done.stderr
    assert growth_mb[-1] < 30, f"RSS growth every 50 renders (MB): {growth_mb}"


# ---------------------------------------------------------------------------
# The bands the service computes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "start", "window"), [(900, 540, 540), (400, 250, 540), (700, 100, 540)]
)
def test_rolling_bands_are_the_percentiles_of_the_days_before(n, start, window):
    r = np.random.default_rng(n).normal(0, 0.02, n).cumsum()
    bands = rolling_bands(r, start, window)
    assert np.isnan(bands["p5"][:start]).all()
    for t in (start, start + 1, (start + n) // 2, n - 1):
        expected = np.percentile(r[max(0, t - window) : t], [5, 15, 85, 95])
        assert [bands[k][t] for k in ("p5", "p15", "p85", "p95")] == list(expected)


# ---------------------------------------------------------------------------
# Over HTTP, with the demo market
# ---------------------------------------------------------------------------


def used_today(client, key: str) -> int:  # type: ignore[no-untyped-def]
    r = client.get(f"{BASE}/me", key)
    assert r.status_code == 200, r.text
    return int(r.json()["quota"]["used_today"])


@pytest.mark.parametrize(("size", "bt"), [("desktop", 360), ("phone", 90), (None, 180)])
def test_chart_endpoint_returns_the_png(client, keys, runtime, size, bt):
    params = {"bt": bt} | ({"size": size} if size else {})
    r = client.get(f"{BASE}/pair/ETH/BTC/chart.png", keys.personal, params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "image/png"
    assert r.headers["cache-control"] == "private, max-age=900"
    assert r.headers["ratelimit"].startswith('"daily";r=') and "RateLimit-Policy" in r.headers
    image = decode(r.content)
    width, height = SIZES[size or "desktop"]
    assert image.shape == (height, width, 3)
    assert image.std() > 20
    assert colour_pixels(image, mpl_renderer.NOTE, tolerance=12) > 100  # the demo is synthetic
    # The served image is the chart service's data drawn by the renderer, byte for byte ...
    with database.connection_context():
        data = chart_data(runtime, *runtime.universe.pair("ETH", "BTC"), bt)
    assert render(data, size or "desktop") == r.content
    # ... and its band fills are there: the same chart without bands has only the legend's.
    no_bands = {k: np.full(len(data.log_ratio), np.nan) for k in data.bands}
    bare = decode(render(replace(data, bands=no_bands), size or "desktop"))
    for fill in (mpl_renderer.BOTTOM_FILL, mpl_renderer.TOP_FILL):
        assert colour_pixels(image, fill) > colour_pixels(bare, fill) + 150, fill


def test_chart_consumes_one_unit_per_200_and_none_on_errors(client, keys):
    assert used_today(client, keys.personal) == 0
    assert client.get(f"{BASE}/pair/SOL/ETH/chart.png", keys.personal).status_code == 200
    assert used_today(client, keys.personal) == 1
    failures = {
        f"{BASE}/pair/ETH/ETH/chart.png": 400,
        f"{BASE}/pair/ETH/BTC/chart.png?bt=7": 400,
        f"{BASE}/pair/ETH/BTC/chart.png?size=poster": 400,
        f"{BASE}/pair/NOPE/BTC/chart.png": 404,
        f"{BASE}/pair/BERA/SOL/chart.png": 404,  # about 120 days of common history
    }
    for path, status in failures.items():
        r = client.get(path, keys.personal)
        assert r.status_code == status, (path, r.text)
        assert r.headers["content-type"].startswith("text/plain")
    assert used_today(client, keys.personal) == 1
    assert (
        client.get(
            f"{BASE}/pair/btc/eth/chart.png", keys.personal, params={"size": "phone"}
        ).status_code
        == 200
    )
    assert used_today(client, keys.personal) == 2
    assert client.get(f"{BASE}/pair/ETH/BTC/chart.png").status_code == 401
    assert client.get(f"{BASE}/pair/ETH/BTC/chart.png", keys.no_tier).status_code == 403


class FlatRenderer:
    """A third-party renderer: one flat colour, and it remembers what it was asked to draw."""

    name = "flat"

    def __init__(self) -> None:
        self.calls: list[tuple[ChartData, int, int]] = []

    def render(self, chart: ChartData, *, width_px: int, height_px: int) -> bytes:
        self.calls.append((chart, width_px, height_px))
        rgba = np.full((height_px, width_px, 4), 255, dtype=np.uint8)
        rgba[..., 1] = 0
        return mpl_renderer.encode_png(rgba)


class FlatPlugin:
    def __init__(self) -> None:
        self.renderer = FlatRenderer()

    @hookimpl
    def pairscreen_register_chart_renderers(self) -> list:
        return [self.renderer]


def test_configured_renderer_plugin_draws_the_chart(runtime):
    plugin = FlatPlugin()
    settings = replace(runtime.settings, chart_renderer="flat")
    rt = build_runtime(settings, migrate=False, extra_plugins=(plugin,))
    assert {"default", "flat"} <= set(rt.plugins.chart_renderers.items)
    with database.connection_context():
        png = chart_png(rt, *rt.universe.pair("ETH", "BTC"), 180, size="phone")
    image = decode(png)
    assert image.shape == (480, 720, 3) and (image == [255, 0, 255]).all()
    [(chart, width, height)] = plugin.renderer.calls
    assert (chart.a, chart.b, chart.bt_days, width, height) == ("ETH", "BTC", 180, 720, 480)


@pytest.mark.parametrize("bt", [90, 360])
def test_chart_draws_the_snapshots_numbers(client, keys, runtime, bt):
    snap = client.get(f"{BASE}/pair/SOL/ETH", keys.personal, params={"bt": bt}).json()
    with database.connection_context():
        chart = chart_data(runtime, *runtime.universe.pair("SOL", "ETH"), bt)
    m = snap["metrics"]
    assert (chart.a, chart.b) == ("SOL", "ETH")
    assert chart.current == m["r_current"] and chart.log_ratio[-1] == m["r_current"]
    assert chart.position == m["position"] and chart.zone == m["zone"]
    for name in ("p5", "p15", "p85", "p95"):
        assert chart.bands[name][-1] == pytest.approx(m[name], abs=1e-12), name
    assert len(chart.dates) - chart.backtest_start_index == snap["backtest"]["history_days"] == bt
    assert np.isnan(chart.bands["p5"][: chart.backtest_start_index]).all()
    assert np.isfinite(chart.bands["p5"][chart.backtest_start_index :]).all()
    assert chart.data_time.isoformat() == snap["data_time"]
    for leg in ("A", "B"):
        trades = chart.trades[leg]
        assert len(trades) == snap["backtest"][leg]["n_trades"], leg
        for trade in trades:
            assert chart.backtest_start_index <= trade.day_index < len(chart.dates)
            assert np.datetime64(trade.day, "D") == chart.dates[trade.day_index]
    assert "synthetic" in chart.note.lower()


def test_ou_levels_are_drawn_as_two_green_lines_across_the_backtest_window():
    """``ChartData.ou_levels`` (today's Bertram entry and exit) add green lines across the
    backtest window and a legend key; without them nothing green is drawn."""
    chart = synthetic_chart()
    r = chart.log_ratio[chart.backtest_start_index :]
    levels = {"entry": float(np.quantile(r, 0.3)), "exit": float(np.quantile(r, 0.7))}
    drawn = decode(render(replace(chart, ou_levels=levels)))
    bare = decode(render(replace(chart, ou_levels={})))

    def green(image: np.ndarray) -> np.ndarray:  # anti-aliased dashes: green dominates
        greenish: np.ndarray = image[..., 1] - np.maximum(image[..., 0], image[..., 2]) > 30
        return greenish

    assert not green(bare).any()
    rows, cols = np.nonzero(green(drawn))
    assert rows.size > 500
    in_plot = rows < 0.85 * drawn.shape[0]  # the legend key sits along the bottom edge
    # The lines span the backtest window: the last 40 % of the days, right of 55 % of the width.
    assert cols[in_plot].min() > 0.55 * drawn.shape[1]
    assert cols[in_plot].max() - cols[in_plot].min() > 0.3 * drawn.shape[1]
