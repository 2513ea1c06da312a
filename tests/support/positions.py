"""Moving a pair's live position in a test: rewrite the last candle, in memory or in the
database, so that today's position of A/B is the value the test needs."""

from __future__ import annotations

from datetime import date

import numpy as np

from pairscreen import Candles
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import Candle, DataVersion
from pairscreen.engine.panels import align


class InMemoryCandles:
    """The runtime's candles, held in memory so a test can move prices without a reload."""

    def __init__(self, candles: dict[str, Candles]):
        self.candles = dict(candles)

    def get(self) -> dict[str, Candles]:
        return self.candles

    def invalidate(self) -> None:
        pass


def set_position(rt, a: str, b: str, x: float) -> None:  # type: ignore[no-untyped-def]
    """Rewrite A's last close so that today's position of A/B is ``x`` (the band of the
    540 days before today does not change): in the database, or in memory when the test
    swapped in :class:`InMemoryCandles`."""
    candles = rt.candles.get()
    pair = align(candles[a], candles[b])
    history = np.log(pair.close_a / pair.close_b)[-541:-1]
    p5, p95 = np.percentile(history, [5, 95])
    r = p5 + x * (p95 - p5)
    close = float(pair.close_b[-1] * np.exp(r))
    if isinstance(rt.candles, InMemoryCandles):
        old = candles[a]
        i = int(np.searchsorted(old.dates, pair.dates[-1]))
        new_close = old.close.copy()
        new_close[i] = close
        candles[a] = Candles(a, old.dates, new_close, old.volume)
        return
    day = date.fromisoformat(str(pair.dates[-1].astype("datetime64[D]")))
    with write_transaction():
        Candle.update(close=close).where((Candle.ticker == a) & (Candle.day == day)).execute()
        DataVersion.update(version=DataVersion.version + 1).where(
            DataVersion.name == "candles"
        ).execute()
    rt.candles.invalidate()
