"""``/pair/{a}/{b}``: a live snapshot, one unit of quota when it answers 200."""

from __future__ import annotations

from pairscreen.api.support import run_compute
from pairscreen.runtime import current
from pairscreen.screening.snapshot import compute_snapshot


async def pair_snapshot(a: str, b: str, token_info: dict, bt: int = 360) -> tuple[dict, int, dict]:
    rt = current()
    body, headers = await run_compute(token_info, lambda: compute_snapshot(rt, a, b, bt))
    return body, 200, {"Content-Type": "application/json", **headers}
