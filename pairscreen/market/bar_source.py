"""What a market source offers to serve intraday bars (a universe's ``[market] bar``).

A source serves daily candles through :meth:`~pairscreen.MarketSource.fetch_candles`; one
that can also serve bars of 4h, 1h or 15m adds ``fetch_bars``. It is a separate, optional
method so that every source written for daily candles keeps working unchanged: a universe
asking such a source for hourly bars is refused with one line naming the source.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pairscreen.contracts import Asset, Candles


@runtime_checkable
class BarSource(Protocol):
    """A market source that serves bars of a declared size."""

    @property
    def name(self) -> str: ...

    def fetch_bars(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        bar: str,
        since: Mapping[str, datetime | None],
        until: datetime,
    ) -> Iterator[Candles]:
        """Yield, per asset, the bars of size ``bar`` ("4h", "1h", "15m") closing after
        ``since[ticker]`` (every bar when None) and at or before ``until`` (UTC).

        Each :class:`Candles` holds the bars' **close times** as ``datetime64[s]`` UTC in
        ``dates``. Rows the source could not use are counted in ``issues`` as for daily
        candles; the sync checks the grid, duplicates and unfinished bars again whatever
        the source did. An asset the source does not know is skipped with a logged warning.
        """
        ...


def bar_source(source: object, bar: str) -> BarSource:
    """``source`` as a :class:`BarSource`; :class:`ValueError` (a one-line error) when it
    serves daily candles only."""
    if isinstance(source, BarSource):
        return source
    name = getattr(source, "name", type(source).__name__)
    raise ValueError(
        f"market source {name!r} serves daily candles only; it cannot serve {bar} bars "
        '(set [market] bar = "1d" or use a source that serves bars: csv, demo, ccxt)'
    )
