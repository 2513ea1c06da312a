"""What a running service holds: settings, loaded plugins, the universe, its caches.

Built at the composition root (:func:`pairscreen.bootstrap.build_runtime`, called by the CLI
and the app factory) and handed down as an argument: no module keeps one, so two runtimes
(two databases, two universes) can live side by side in one process, as the tests do.

The package sits below the domain packages that work on a runtime (``market`` and
``screen_store`` excepted, whose caches it holds: candles and ``/assets``, the latest screen
and the screen of a moment) and beside them keeps the chart cache, so ``screening``,
``screen_views`` and ``pegs`` can take a runtime without a loop between folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pairscreen.access.accounts import KeyOwners
from pairscreen.config import Settings
from pairscreen.engine.filtering import FilterChoice
from pairscreen.market.assets import AssetListCache
from pairscreen.market.candle_cache import CandleCache
from pairscreen.plugin_system.registry import Plugins
from pairscreen.runtime.charts import ChartCache
from pairscreen.screen_store.store import ScreenStore
from pairscreen.universe import Universe


@dataclass
class Runtime:
    settings: Settings
    plugins: Plugins
    universe: Universe
    # The universe's screen filter with its thresholds, chosen once by the start-up checks
    # (:func:`pairscreen.bootstrap.check_setup`), never per request or per screen.
    screen_filter: FilterChoice
    candles: CandleCache = field(default_factory=CandleCache)
    screens: ScreenStore = field(default_factory=ScreenStore)  # with its caches
    key_owners: KeyOwners = field(default_factory=KeyOwners)
    assets: AssetListCache = field(default_factory=AssetListCache)
    charts: ChartCache = field(default_factory=ChartCache)
