"""What a running service holds: settings, loaded plugins, the universe, cached candles.

Built once by :func:`build_runtime` (from the CLI or the app factory), never at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pairscreen.config import Settings
from pairscreen.db.connection import connect, init_database
from pairscreen.hooks import Plugins
from pairscreen.market.candle_cache import CandleCache
from pairscreen.plugins import load_plugins
from pairscreen.universe import Universe


@dataclass
class Runtime:
    settings: Settings
    plugins: Plugins
    universe: Universe
    candles: CandleCache = field(default_factory=CandleCache)


def build_runtime(
    settings: Settings, *, migrate: bool = True, extra_plugins: tuple = ()
) -> Runtime:
    from pairscreen.engine.filtering import choose_filter
    from pairscreen.engine.required_fields import check_required_fields
    from pairscreen.market.universe_loader import load_universe
    from pairscreen.notify.depeg_alerts import DepegAlertsPlugin

    if migrate:
        init_database(settings.database_url)
    else:
        connect(settings.database_url)
    # The framework's own hook implementations (depeg alerts), then the caller's.
    plugins = Plugins(load_plugins(settings, extra=(DepegAlertsPlugin(), *extra_plugins)), settings)
    universe = load_universe(settings)
    # A missing metric, filter or threshold fails here, at start-up, not in a request.
    check_required_fields(plugins, choose_filter(plugins, universe).name)
    return Runtime(settings=settings, plugins=plugins, universe=universe)


_current: Runtime | None = None


def install(rt: Runtime) -> None:
    """Make ``rt`` the runtime the HTTP handlers of this process use."""
    global _current
    _current = rt


def current() -> Runtime:
    if _current is None:
        raise RuntimeError("no pairscreen runtime installed; create the app with create_app()")
    return _current
