"""``/pair/{a}/{b}``: a live snapshot, one unit of quota when it answers 200."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, hangup, service
from pairscreen.screening.snapshot import check_pair, compute_snapshot


async def pair_snapshot(
    a: str, b: str, token_info: TokenInfo, bt: int = 360
) -> tuple[dict[str, Any], int, dict[str, str]]:
    svc = service()
    rt = svc.runtime
    body, headers = await svc.run_compute(
        caller(token_info),
        lambda: compute_snapshot(rt, a, b, bt),
        check=lambda: check_pair(rt, a, b),
        hangup=hangup(),
    )
    return body, 200, {"Content-Type": "application/json", **headers}
