"""What a plugin author imports: the contracts of every component a plugin contributes, the
data they receive and return, and ``hookimpl``.

    from pairscreen.contracts import Metric, MetricField, PairPanel, hookimpl

Nothing here is the engine's: a panel is read-only to a plugin (:class:`PairPanel`), and
what the engine does with panels, verdicts and registries lives under ``pairscreen.engine``
and ``pairscreen.plugin_system``. The contracts are grouped by component, one module each
(``metrics``, ``filters``, ``strategies`` with the scorer, ``charts``, ``pegs``, ``market``,
``notifiers``, ``commands``, ``options``; ``panel`` and ``assets`` for the data they read,
``bars`` for the bar sizes a universe declares and their UTC grid);
every public name is re-exported here, so a plugin needs this one import line.
``pairscreen.clock`` (the service's notion of now, which tests pin) is the other module a
plugin may import. ``pairscreen.types`` re-exports the same names for one more release.
"""

from __future__ import annotations

from pairscreen.config import Settings
from pairscreen.contracts.assets import ASSET_CLASSES, Asset, Candles, PegConfig, RowIssues
from pairscreen.contracts.bars import BAR_SIZES, DAILY, BarSize, bar_size, days_between
from pairscreen.contracts.charts import ChartData, ChartRenderer
from pairscreen.contracts.commands import Command, CommandSpec
from pairscreen.contracts.filters import (
    DepeggedLeg,
    Filter,
    FilterContext,
    FilterRule,
    ShortHistory,
    enough_history,
)
from pairscreen.contracts.hooks import hookimpl
from pairscreen.contracts.market import MarketSource
from pairscreen.contracts.metrics import Metric, MetricField
from pairscreen.contracts.notifiers import (
    AddressError,
    ChannelNotifier,
    ChannelSpec,
    DeliveryError,
    Notification,
    Notifier,
    masked_address,
)
from pairscreen.contracts.options import PluginOption
from pairscreen.contracts.panel import CalendarWindow, Leg, PairPanel
from pairscreen.contracts.pegs import (
    IntradayMarketPrice,
    PegEventChange,
    PegSource,
    ReferenceQuote,
)
from pairscreen.contracts.strategies import BacktestBatch, Scorer, Strategy, Trade

# Every module's public names (tests/test_contracts.py holds the two lists together).
__all__ = [
    "ASSET_CLASSES",
    "BAR_SIZES",
    "DAILY",
    "AddressError",
    "Asset",
    "BacktestBatch",
    "BarSize",
    "CalendarWindow",
    "Candles",
    "ChannelNotifier",
    "ChannelSpec",
    "ChartData",
    "ChartRenderer",
    "Command",
    "CommandSpec",
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
    "ShortHistory",
    "Strategy",
    "Trade",
    "bar_size",
    "days_between",
    "enough_history",
    "hookimpl",
    "masked_address",
]
