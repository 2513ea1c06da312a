"""``/assets``'s summary of stored bars (pairscreen.market.bar_history) equals what reading
every bar gives: the first UTC day, the days holding a bar, the last closed bar and its close.

On the real Binance hourly closes of tests/fixtures/hourly (with their outage bar missing) and
an asset written here whose last day holds only late bars, on SQLite and PostgreSQL, at
moments ending a day, inside one (the last block then holds bars not closed yet) and before
an asset's first bar.
"""

from __future__ import annotations

import numpy as np
import pytest

from pairscreen.contracts.bars import BAR_SIZES
from pairscreen.db.connection import database, write_transaction
from pairscreen.db.models import AssetRow
from pairscreen.market.bar_history import CloseHistory, bar_histories
from pairscreen.market.bar_store import asset_ids, load_bars, write_bars
from pairscreen.types import Candles
from tests.test_hourly_bars import FIXTURES, TICKERS, bar_database, file_bars

__all__ = ["bar_database"]  # the fixture, shared with the bar store's tests

HOUR = BAR_SIZES["1h"]


def every_bar(until: int) -> dict[str, CloseHistory]:
    """The summary from every stored bar, read as the engine reads them."""
    out = {}
    for ticker, c in load_bars(HOUR, until=until).items():
        days = np.unique((c.dates - np.timedelta64(1, "s")).astype("datetime64[D]"))
        out[ticker] = CloseHistory(days[0], len(days), c.dates[-1], float(c.close[-1]))
    return out


def epoch(moment: str) -> int:
    return int(np.datetime64(moment, "s").astype(np.int64))


@pytest.mark.parametrize(
    "until",
    [
        "2023-04-01T00:00:00",  # the last bar of 2023-03-31 (it closes at 00:00)
        "2023-03-24T14:00:00",  # the outage bar's close: the day's block holds later bars
        "2023-03-31T12:00:00",  # inside LATE's only day, before its first bar
        "2023-03-31T21:00:00",  # LATE's first bar closed
        "2023-03-10T05:00:00",  # the fixtures' first day
    ],
)
def test_the_summary_equals_reading_every_bar(bar_database, until: str) -> None:  # type: ignore[no-untyped-def]
    with database.connection_context():
        for ticker in (*TICKERS, "LATE"):
            AssetRow.create(ticker=ticker, sector="majors", asset_class="crypto")
        with write_transaction():
            for ticker in TICKERS:
                times, close = file_bars(FIXTURES / f"{ticker}.csv")
                candles = Candles(
                    ticker, times.astype("datetime64[s]"), close, np.full(len(close), np.nan)
                )
                write_bars(HOUR, asset_ids(), candles)
            # LATE: one bar on 2023-03-20, then only the last hours of 2023-03-31
            late = np.array(
                ["2023-03-20T10:00:00", *[f"2023-03-31T{h}:00:00" for h in (20, 21, 22, 23)]],
                dtype="datetime64[s]",
            )
            write_bars(
                HOUR, asset_ids(), Candles("LATE", late, np.arange(1.0, 6.0), np.full(5, np.nan))
            )
        got = bar_histories(HOUR, epoch(until))
        expected = every_bar(epoch(until))
    assert got == expected
    if until == "2023-03-31T12:00:00":
        # its last block holds no closed bar: the 2023-03-20 bar is its last
        assert got["LATE"] == CloseHistory(
            np.datetime64("2023-03-20"), 1, np.datetime64("2023-03-20T10:00:00"), 1.0
        )
    if until == "2023-03-10T05:00:00":
        assert "LATE" not in got and got["BTC"].days == 1
    if until == "2023-04-01T00:00:00":
        assert got["BTC"].days == 22 and str(got["BTC"].first_day) == "2023-03-10"
