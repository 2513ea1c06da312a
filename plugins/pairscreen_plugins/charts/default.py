"""Chart renderer ``default``, registered without importing matplotlib.

Loading the plugins must stay cheap: every command loads them, and most (``screen run``,
``data sync``, ``notify``) never draw a chart. Importing matplotlib costs about a quarter of a
second, so the registered renderer imports :mod:`.matplotlib_renderer` on its first render.
"""

from __future__ import annotations

from pairscreen.contracts import ChartData, ChartRenderer, hookimpl


class DeferredMatplotlibRenderer:
    """The built-in renderer, whose drawing module is imported when the first chart is drawn
    (Python's import lock makes that safe from several threads at once)."""

    name = "default"

    def render(self, chart: ChartData, *, width_px: int, height_px: int) -> bytes:
        from pairscreen_plugins.charts.matplotlib_renderer import RENDERER

        return RENDERER.render(chart, width_px=width_px, height_px=height_px)


@hookimpl
def pairscreen_register_chart_renderers() -> list[ChartRenderer]:
    """The ``default`` renderer (matplotlib, imported on first use)."""
    return [DeferredMatplotlibRenderer()]
