"""Test plugin: a chart renderer ``hook_caption`` whose "image" names what it was given."""

from __future__ import annotations

from pairscreen import ChartData, hookimpl

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Caption:
    name = "hook_caption"

    def render(self, chart: ChartData, *, width_px: int, height_px: int) -> bytes:
        caption = f"{chart.a}/{chart.b} {chart.bt_days}d {width_px}x{height_px}"
        return PNG_SIGNATURE + caption.encode()


@hookimpl
def pairscreen_register_chart_renderers() -> list[Caption]:
    return [Caption()]
