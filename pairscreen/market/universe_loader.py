"""Which universe a process screens: the configured file, else the built-in demo universe."""

from __future__ import annotations

from importlib import resources

from pairscreen.config import Settings
from pairscreen.universe import Universe, load_universe_file

DEMO_UNIVERSE_RESOURCE = "demo_universe.toml"


def load_universe(settings: Settings) -> Universe:
    """The universe at ``settings.universe_path``, or the packaged demo universe when None.

    Raises :class:`~pairscreen.universe.UniverseError` for a missing or malformed file.
    """
    if settings.universe_path is not None:
        return load_universe_file(settings.universe_path)
    return load_demo_universe()


def load_demo_universe() -> Universe:
    """The built-in demo universe (``pairscreen/demo_universe.toml``, shipped as package data)."""
    resource = resources.files("pairscreen").joinpath(DEMO_UNIVERSE_RESOURCE)
    with resources.as_file(resource) as path:
        return load_universe_file(path)
