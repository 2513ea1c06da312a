"""The composition root: settings in, a :class:`~pairscreen.runtime.Runtime` out.

The one place that knows the framework's own hook implementations (the depeg alert fan-out)
and wires them in beside the loaded plugins, so that :mod:`pairscreen.runtime` stays a plain
container that domain modules can name without importing one another in a circle.
"""

from __future__ import annotations

from pairscreen.component_choice import choose_components, with_chosen_components
from pairscreen.config import Settings
from pairscreen.db.connection import connect, init_database
from pairscreen.engine.component_checks import check_components
from pairscreen.engine.filtering import FilterChoice
from pairscreen.market.source_options import settle_market_options
from pairscreen.notify.depeg_alerts import DepegAlertsPlugin
from pairscreen.pegs.source_options import settle_peg_source_options
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.registry import Plugins
from pairscreen.runtime import Runtime
from pairscreen.universe import Universe, load_universe


def build_runtime(
    settings: Settings,
    *,
    migrate: bool = True,
    extra_plugins: tuple[object, ...] = (),
    universe: Universe | None = None,
) -> Runtime:
    """Load plugins and universe (``universe`` instead of ``settings.universe_path`` when
    given: the test kit's plugin options), check every chosen component, then bind the
    database (migrating it unless ``migrate`` is false).

    The checks come first: a misspelt strategy or a broken rule fails here in one sentence,
    before anything is migrated, served or written.
    """
    plugins, universe, screen_filter = check_setup(
        settings, extra_plugins=extra_plugins, universe=universe
    )
    if migrate:
        init_database(settings.database_url)
    else:
        connect(settings.database_url)
    return Runtime(plugins.settings, plugins, universe, screen_filter)


def check_setup(
    settings: Settings,
    *,
    extra_plugins: tuple[object, ...] = (),
    universe: Universe | None = None,
) -> tuple[Plugins, Universe, FilterChoice]:
    """The plugins, the universe (loaded from the settings unless given) and its screen
    filter, every chosen component checked; touches no database.

    A command that writes before it builds its runtime (``demo`` clears its folder) calls
    this first.
    """
    if universe is None:
        universe = load_universe(settings)
    plugins, universe = load_configured_plugins(settings, universe, extra_plugins=extra_plugins)
    return plugins, universe, check_components(plugins, universe, settings)


def load_configured_plugins(
    settings: Settings, universe: Universe, *, extra_plugins: tuple[object, ...] = ()
) -> tuple[Plugins, Universe]:
    """:func:`load_all_plugins` for the universe whose market source and filter are the
    settings' when they override them, with the market and peg sources' options in their plugins'
    tables (a former ``[market]`` or ``[peg_sources.X]`` table moved there, with its notice),
    and the universe whose ``market_options`` and ``peg_source_options`` are those tables."""
    universe = with_chosen_components(settings, universe)
    plugins = load_all_plugins(settings, universe, extra_plugins=extra_plugins)
    plugins, universe = settle_market_options(plugins, universe)
    return settle_peg_source_options(plugins, universe)


def load_all_plugins(
    settings: Settings, universe: Universe, *, extra_plugins: tuple[object, ...] = ()
) -> Plugins:
    """Every plugin a process runs with, unchecked: the loaded ones, the framework's own hook
    implementations (the depeg alerts), then the caller's. ``pairscreen plugins`` lists
    exactly these. Their settings name the strategy, scorer and chart renderer chosen
    (``component_choice``): the runtime and every register hook see the resolved names."""
    pm = load_plugins(settings, extra=(DepegAlertsPlugin(), *extra_plugins))
    return Plugins(pm, choose_components(settings, universe), universe.plugin_options)
