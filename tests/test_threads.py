"""The HTTP layer's worker lanes: results and errors come back; a dropped lane's threads end."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import pytest

from pairscreen.api.threads import Lane


def _lane_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(f"pairscreen-{name}-")]


def test_a_lane_runs_work_on_its_threads_and_hands_back_errors():
    lane = Lane("probe", 3)
    assert _lane_threads("probe") == [], "threads start on first use"

    async def use() -> None:
        names = await asyncio.gather(
            *(lane.run(lambda: threading.current_thread().name) for _ in range(9))
        )
        assert all(n.startswith("pairscreen-probe-") for n in names)
        with pytest.raises(ZeroDivisionError):
            await lane.run(lambda: 1 / 0)

    asyncio.run(use())
    assert len(_lane_threads("probe")) == 3


def test_a_dropped_lane_stops_its_threads():
    lane = Lane("dropped", 2)
    asyncio.run(lane.run(int, "1"))
    assert len(_lane_threads("dropped")) == 2
    del lane
    gc.collect()
    deadline = time.monotonic() + 5
    while _lane_threads("dropped") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _lane_threads("dropped") == []
