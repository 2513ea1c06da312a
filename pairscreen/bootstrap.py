"""The composition root: settings in, a :class:`~pairscreen.runtime.Runtime` out.

The one place that knows the framework's own hook implementations (the depeg alert fan-out)
and wires them in beside the loaded plugins, so that :mod:`pairscreen.runtime` stays a plain
container that domain modules can name without importing one another in a circle.
"""

from __future__ import annotations

from pairscreen.config import Settings
from pairscreen.db.connection import connect, init_database
from pairscreen.engine.filtering import choose_filter
from pairscreen.engine.required_fields import check_required_fields
from pairscreen.hooks import Plugins
from pairscreen.notify.depeg_alerts import DepegAlertsPlugin
from pairscreen.plugins import load_plugins
from pairscreen.runtime import Runtime
from pairscreen.universe import load_universe


def build_runtime(
    settings: Settings, *, migrate: bool = True, extra_plugins: tuple[object, ...] = ()
) -> Runtime:
    """Bind the database (migrating it unless ``migrate`` is false), load plugins and universe."""
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
