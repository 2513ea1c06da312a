"""``/pair/{a}/{b}/chart.png``: the pair drawn as a PNG, one unit of quota when it answers 200."""

from __future__ import annotations

from starlette.responses import Response

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import pair_compute
from pairscreen.screening.chart import chart_png
from pairscreen.screening.spans import backtest_window

CACHE_CONTROL = "private, max-age=900"  # a client may keep a chart 15 minutes


async def pair_chart(
    a: str, b: str, token_info: TokenInfo, bt: int | None = None, size: str = "desktop"
) -> Response:
    png, headers = await pair_compute(
        token_info,
        a,
        b,
        lambda rt, asset_a, asset_b: chart_png(
            rt, asset_a, asset_b, backtest_window(rt, bt), size=size
        ),
    )
    return Response(
        png, media_type="image/png", headers={**headers, "Cache-Control": CACHE_CONTROL}
    )
