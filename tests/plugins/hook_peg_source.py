"""Test plugin: a peg source ``hook_fixed`` quoting every reference at a fixed price.

It also offers the optional :class:`~pairscreen.IntradayMarketPrice` capability, so a
universe whose market source is named ``hook_fixed`` takes the token's price from it.
Options: ``price`` (default 100) and ``market_price`` (default 97).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pairscreen import Asset, ReferenceQuote, hookimpl


class FixedPegSource:
    name = "hook_fixed"
    max_age = timedelta(hours=1)

    def reference_price(
        self, reference: str, at: datetime, options: Mapping[str, Any]
    ) -> ReferenceQuote | None:
        price = float(options.get("price", 100.0))
        return ReferenceQuote(source=self.name, reference=reference, price=price, as_of=at)

    def market_price(self, asset: Asset, at: datetime, options: Mapping[str, Any]) -> float | None:
        return float(options.get("market_price", 97.0))


@hookimpl
def pairscreen_register_peg_sources() -> list[FixedPegSource]:
    return [FixedPegSource()]
