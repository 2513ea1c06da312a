"""Which strategy, scorer and chart renderer a process runs: one choice, resolved once.

The universe file chooses them in ``[components]``; the settings (``PAIRSCREEN_STRATEGY``,
``PAIRSCREEN_SCORER``, ``PAIRSCREEN_CHART_RENDERER`` and their keyword forms) override it;
the built-ins are the fallback. The composition root resolves the choice into the settings it
hands down, so every reader of ``settings.strategy`` sees a name and never this order.
"""

from __future__ import annotations

import dataclasses

from pairscreen.config import COMPONENT_DEFAULTS, Settings, declaration
from pairscreen.universe import Universe


def choose_components(settings: Settings, universe: Universe) -> Settings:
    """``settings`` with each overridable component named: the setting, else the universe's
    ``[components]`` choice, else the built-in. A resolved ``settings`` comes back equal."""
    return dataclasses.replace(
        settings,
        strategy=chosen(settings, universe, "strategy")[0],
        scorer=chosen(settings, universe, "scorer")[0],
        chart_renderer=chosen(settings, universe, "chart_renderer")[0],
    )


def chosen(settings: Settings, universe: Universe, name: str) -> tuple[str, str]:
    """The component ``name`` (``"strategy"``, ...) names, and what chose it, as a start-up
    error says it: ``the universe's [components] strategy``, else the setting that overrides
    it (``PAIRSCREEN_STRATEGY=x``, also when ``x`` is the default: that is where to change it).
    """
    given: str = getattr(settings, name)
    from_file: str = getattr(universe, name)
    if not given and from_file:
        return from_file, f"the universe's [components] {name}"
    value = given or COMPONENT_DEFAULTS[name]
    return value, f"{declaration(name).env}={value}"
