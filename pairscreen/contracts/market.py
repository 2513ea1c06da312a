"""The market source contract: where daily candles come from."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import date
from typing import Any, Protocol, runtime_checkable

from pairscreen.contracts.assets import Asset, Candles

__all__ = ["MarketSource"]


@runtime_checkable
class MarketSource(Protocol):
    """Where daily candles come from (the demo generator, CSV files, an exchange)."""

    @property
    def name(self) -> str: ...

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        """Yield candles per asset for the days after ``since[ticker]`` up to ``until``.

        ``options`` are the keys given in the source plugin's ``[plugins.<name>]`` table when
        the plugin declares its options, else the universe's ``[market]`` table (paths
        relative to the universe file are already resolved). An asset the source does not
        know is skipped with a logged warning, never an exception that stops the other assets.
        """
        ...
