"""pairscreen: pair screening, coin-accumulation backtests and depeg watching behind a REST API.

Plugin authors import everything they need from here and nothing deeper.
"""

from __future__ import annotations

from pairscreen.config import Settings
from pairscreen.hookspecs import hookimpl
from pairscreen.types import (
    ASSET_CLASSES,
    Asset,
    BacktestBatch,
    CalendarWindow,
    Candles,
    ChartData,
    ChartRenderer,
    DeliveryError,
    DepeggedLeg,
    Filter,
    FilterContext,
    FilterRule,
    IntradayMarketPrice,
    Leg,
    MarketSource,
    Metric,
    MetricField,
    Notification,
    Notifier,
    PairPanel,
    PegConfig,
    PegEventChange,
    PegSource,
    PluginOption,
    ReferenceQuote,
    RowIssues,
    Scorer,
    Strategy,
    Trade,
)

__version__ = "0.1.0"

__all__ = [
    "ASSET_CLASSES",
    "Asset",
    "BacktestBatch",
    "CalendarWindow",
    "Candles",
    "ChartData",
    "ChartRenderer",
    "DeliveryError",
    "DepeggedLeg",
    "Filter",
    "FilterContext",
    "FilterRule",
    "IntradayMarketPrice",
    "Leg",
    "MarketSource",
    "Metric",
    "MetricField",
    "Notification",
    "Notifier",
    "PairPanel",
    "PegConfig",
    "PegEventChange",
    "PegSource",
    "PluginOption",
    "ReferenceQuote",
    "RowIssues",
    "Scorer",
    "Settings",
    "Strategy",
    "Trade",
    "__version__",
    "hookimpl",
]
