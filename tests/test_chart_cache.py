"""Repeated ``chart.png`` of the same pair, window, size and data: drawn once, still counted."""

from __future__ import annotations

import time
from dataclasses import replace

from pairscreen.db.connection import database
from pairscreen.runtime.charts import ChartCache, chart_key
from pairscreen.screening.chart import chart_data

BASE = "/api/v1"


def used_today(client, key: str) -> int:  # type: ignore[no-untyped-def]
    return int(client.get(f"{BASE}/me", key).json()["quota"]["used_today"])


def test_the_same_chart_is_drawn_once_and_each_request_consumes_a_unit(client, keys, runtime):
    url = f"{BASE}/pair/ETH/BTC/chart.png"
    first = client.get(url, keys.personal)
    repeats_ms = []
    for _ in range(5):
        started = time.perf_counter()
        again = client.get(url, keys.personal)
        repeats_ms.append((time.perf_counter() - started) * 1000)
        assert again.status_code == 200 and again.content == first.content
    assert first.status_code == 200
    assert used_today(client, keys.personal) == 6
    phone = client.get(url, keys.personal, params={"size": "phone"})
    shorter = client.get(url, keys.personal, params={"bt": 90})
    assert len({first.content, phone.content, shorter.content}) == 3
    assert len(runtime.charts._images) == 3
    print(f"\nrepeated chart.png answered in {sorted(repeats_ms)[2]:.1f} ms (median of 5)")


def test_the_key_follows_every_input_of_the_drawing(runtime):
    with database.connection_context():
        chart = chart_data(runtime, *runtime.universe.pair("ETH", "BTC"), 360)
    key = chart_key(chart, "default", 1280, 720)
    assert key == chart_key(replace(chart), "default", 1280, 720)
    others = [
        chart_key(chart, "line", 1280, 720),
        chart_key(chart, "default", 720, 480),
        chart_key(replace(chart, note="Depeg: PAXG"), "default", 1280, 720),
        chart_key(replace(chart, log_ratio=chart.log_ratio + 1e-12), "default", 1280, 720),
        chart_key(replace(chart, trades={"A": (), "B": ()}), "default", 1280, 720),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_the_cache_keeps_the_most_recently_used():
    cache = ChartCache(kept=2)
    cache.put(b"a", b"1")
    cache.put(b"b", b"2")
    assert cache.get(b"a") == b"1"
    cache.put(b"c", b"3")
    assert cache.get(b"b") is None
    assert (cache.get(b"a"), cache.get(b"c")) == (b"1", b"3")
