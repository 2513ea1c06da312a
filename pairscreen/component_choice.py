"""Which components a process runs: one choice per ``[components]`` entry, resolved once.

The universe file chooses them in ``[components]``; the settings (one per entry, declared in
:data:`~pairscreen.config.COMPONENTS`: ``PAIRSCREEN_MARKET_SOURCE``, ``PAIRSCREEN_FILTER``,
``PAIRSCREEN_STRATEGY`` ... and their keyword forms) override it; the built-ins are the
fallback. The composition root resolves the choice into the settings and the universe it
hands down, so every reader of ``settings.strategy`` or ``universe.market_source`` sees a
name and never this order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pairscreen.config import COMPONENTS, ComponentChoice, Settings
from pairscreen.universe import Universe


def choose_components(settings: Settings, universe: Universe) -> Settings:
    """``settings`` with each component the core reads from them named: the setting, else
    the universe's ``[components]`` choice, else the built-in. A resolved ``settings`` comes
    back equal. (The market source and the filter are resolved into the universe instead:
    :func:`with_chosen_components`.)"""
    names: dict[str, Any] = {
        c.attribute: chosen(settings, universe, c)[0] for c in COMPONENTS if c.read_from_settings
    }
    return dataclasses.replace(settings, **names)


def with_chosen_components(settings: Settings, universe: Universe) -> Universe:
    """``universe`` with each choice a setting overrides replaced by the setting's (the
    universe is where the core reads the market source and the filter)."""
    given: dict[str, Any] = {c.attribute: getattr(settings, c.attribute) for c in COMPONENTS}
    return dataclasses.replace(universe, **{name: value for name, value in given.items() if value})


def chosen(settings: Settings, universe: Universe, choice: ComponentChoice) -> tuple[str, str]:
    """The component ``choice`` names, and what chose it, as a start-up error says it:
    ``the universe's [components] strategy``, else the setting that overrides it
    (``PAIRSCREEN_STRATEGY=x``, also when ``x`` is the built-in: that is where to change it).
    """
    given: str = getattr(settings, choice.attribute)
    from_file: str = getattr(universe, choice.attribute)
    if not given and from_file:
        return from_file, f"the universe's [components] {choice.key}"
    value = given or choice.builtin
    return value, f"{choice.env}={value}"
