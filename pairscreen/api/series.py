"""``/pair/{a}/{b}/series``: the chart's numbers, one unit of quota when it answers 200."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, service
from pairscreen.screening.chart import chart_series
from pairscreen.screening.snapshot import check_pair


async def pair_series(
    a: str, b: str, token_info: TokenInfo, bt: int = 360
) -> tuple[dict[str, Any], int, dict[str, str]]:
    svc = service()
    rt = svc.runtime
    body, headers = await svc.run_compute(
        caller(token_info),
        lambda: chart_series(rt, a, b, bt),
        check=lambda: check_pair(rt, a, b),
    )
    return body, 200, {"Content-Type": "application/json", **headers}
