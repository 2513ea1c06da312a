"""Rendered charts kept by content: the same pair, window, size and data draw once.

A chart costs about 60 ms of a core to draw (more on a slow machine) and a few ms to
compute. Clients ask for the same chart again and again (a page reload, a shared link), so
a runtime keeps the last :data:`CHARTS_KEPT` PNGs keyed by a digest of everything the
renderer would draw (the renderer, the size and every field of
:class:`~pairscreen.contracts.ChartData`): new candles, a new depeg note or another backtest
window change the digest, so a stale image is never served. Each request still consumes its
quota unit; only the drawing is saved.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from pairscreen.contracts import ChartData

CHARTS_KEPT = 64  # about 100 KB each at desktop size


def chart_key(chart: ChartData, renderer: str, width: int, height: int) -> bytes:
    """A digest of everything that decides the image."""
    digest = hashlib.blake2b(digest_size=20)
    for text in (renderer, f"{width}x{height}", chart.a, chart.b, str(chart.bt_days), chart.zone):
        digest.update(text.encode() + b"\0")
    arrays = (
        chart.dates,
        chart.log_ratio,
        *(chart.bands[k] for k in sorted(chart.bands)),
        *(chart.spread_lines[k] for k in sorted(chart.spread_lines)),
    )
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    numbers = (chart.current, chart.position, chart.backtest_start_index)
    digest.update(repr(numbers).encode())
    digest.update(repr(sorted(chart.trades.items())).encode())
    digest.update(repr(sorted(chart.ou_levels.items())).encode())
    digest.update(f"{chart.data_time.isoformat()}\0{chart.note}".encode())
    return digest.digest()


class ChartCache:
    """The most recently drawn charts of a runtime, least recently used dropped first."""

    def __init__(self, kept: int = CHARTS_KEPT) -> None:
        self.kept = kept
        self._lock = threading.Lock()
        self._images: OrderedDict[bytes, bytes] = OrderedDict()

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            image = self._images.get(key)
            if image is not None:
                self._images.move_to_end(key)
            return image

    def put(self, key: bytes, image: bytes) -> None:
        with self._lock:
            self._images[key] = image
            self._images.move_to_end(key)
            while len(self._images) > self.kept:
                self._images.popitem(last=False)
