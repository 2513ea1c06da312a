"""A plugin's own settings: what it declares for its ``[plugins.<name>]`` table."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PluginOption"]

OptionValue = bool | int | float | str


@dataclass(frozen=True)
class PluginOption:
    """One setting a plugin takes from its own ``[plugins.<name>]`` table of the universe file.

    ``default`` gives the type too: a value of another type is refused at start-up (a whole
    number is accepted where the default is a float). The plugin's register hooks get the
    values, defaults filled in, as ``options``.
    """

    name: str
    default: OptionValue
    description: str = ""

    @property
    def type_name(self) -> str:
        return {bool: "boolean", int: "integer", float: "number", str: "string"}[type(self.default)]
