"""``/pair/{a}/{b}/series``: the chart's numbers, one unit of quota when it answers 200."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import pair_compute
from pairscreen.screening.chart import chart_series
from pairscreen.screening.spans import backtest_window


async def pair_series(
    a: str, b: str, token_info: TokenInfo, bt: int | None = None
) -> tuple[dict[str, Any], int, dict[str, str]]:
    body, headers = await pair_compute(
        token_info,
        a,
        b,
        lambda rt, asset_a, asset_b: chart_series(rt, asset_a, asset_b, backtest_window(rt, bt)),
    )
    return body, 200, {"Content-Type": "application/json", **headers}
