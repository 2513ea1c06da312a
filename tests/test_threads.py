"""The HTTP layer's worker lanes: results and errors come back; a dropped lane's threads end."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import pytest

from pairscreen.api.threads import Lane, NotStarted, Ticket


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


def test_a_job_not_started_in_time_never_runs_and_a_withdrawn_one_neither():
    lane = Lane("bounded", 1)
    gate = threading.Event()
    ran: list[str] = []

    async def use() -> None:
        busy = asyncio.ensure_future(lane.run(gate.wait, 5))
        await asyncio.sleep(0.05)  # the lane's one thread is taken
        started = time.monotonic()
        with pytest.raises(NotStarted):
            await lane.submit(Ticket(), 0.2, ran.append, "late")
        assert time.monotonic() - started < 1.0, "answered when the bound passed, not later"
        withdrawn = Ticket()
        queued = asyncio.ensure_future(lane.submit(withdrawn, None, ran.append, "withdrawn"))
        await asyncio.sleep(0.05)
        assert withdrawn.withdraw()
        gate.set()
        await busy
        assert await lane.run(ran.append, "next") is None
        queued.cancel()

    asyncio.run(use())
    assert ran == ["next"]
