"""The typed facade over pluggy: the only module that touches ``pm.hook``.

Core code asks this facade for named components (``plugins.metrics``, ``plugins.strategy(
"accumulation")`` ...) and never calls hooks itself, so every hook has one typed call site.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Generic, TypeVar

import pluggy

from pairscreen.types import (
    ChartRenderer,
    Filter,
    MarketSource,
    Metric,
    Notifier,
    PegEventChange,
    PegSource,
    Scorer,
    Strategy,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


class PluginError(Exception):
    """A plugin broke the contract (a duplicate name, a missing component)."""


@dataclass
class Registry(Generic[T]):
    """Named components of one kind; a second component with the same name is an error."""

    kind: str
    items: dict[str, T] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)

    def add(self, component: T, owner: str) -> None:
        name = getattr(component, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {owner!r} registered a {self.kind} without a name")
        if name in self.items:
            raise PluginError(
                f"{self.kind} {name!r} is registered twice: by {self.owners[name]!r} "
                f"and by {owner!r}"
            )
        self.items[name] = component
        self.owners[name] = owner

    def get(self, name: str) -> T:
        try:
            return self.items[name]
        except KeyError:
            known = ", ".join(sorted(self.items)) or "none"
            raise PluginError(f"no {self.kind} named {name!r} (known: {known})") from None

    def __iter__(self) -> Iterator[T]:
        return iter(self.items.values())

    def __contains__(self, name: object) -> bool:
        return name in self.items

    def __len__(self) -> int:
        return len(self.items)

    def owner(self, name: str) -> str:
        return self.owners[name]


class Plugins:
    """Typed access to everything the loaded plugins contribute."""

    def __init__(self, pm: pluggy.PluginManager):
        self.pm = pm

    def _collect(self, kind: str, hook_name: str) -> Registry:
        registry: Registry = Registry(kind)
        hook = getattr(self.pm.hook, hook_name)
        for impl in hook.get_hookimpls():
            owner = self.pm.get_name(impl.plugin) or repr(impl.plugin)
            for component in impl.function() or ():
                registry.add(component, owner)
        return registry

    @cached_property
    def market_sources(self) -> Registry[MarketSource]:
        return self._collect("market-data source", "pairscreen_register_market_sources")

    @cached_property
    def metrics(self) -> Registry[Metric]:
        registry: Registry[Metric] = self._collect("metric", "pairscreen_register_metrics")
        seen: dict[str, str] = {}
        for metric in registry:
            for f in metric.fields:
                if f.name in seen:
                    raise PluginError(
                        f"metric field {f.name!r} is provided by both {seen[f.name]!r} "
                        f"and {metric.name!r}"
                    )
                seen[f.name] = metric.name
        return registry

    @cached_property
    def filters(self) -> Registry[Filter]:
        return self._collect("screen filter", "pairscreen_register_filters")

    @cached_property
    def strategies(self) -> Registry[Strategy]:
        return self._collect("backtest strategy", "pairscreen_register_strategies")

    @cached_property
    def scorers(self) -> Registry[Scorer]:
        return self._collect("scorer", "pairscreen_register_scorers")

    @cached_property
    def chart_renderers(self) -> Registry[ChartRenderer]:
        return self._collect("chart renderer", "pairscreen_register_chart_renderers")

    @cached_property
    def peg_sources(self) -> Registry[PegSource]:
        return self._collect("peg reference source", "pairscreen_register_peg_sources")

    @cached_property
    def notifiers(self) -> Registry[Notifier]:
        return self._collect("notifier", "pairscreen_register_notifiers")

    def peg_event_changed(self, event: PegEventChange) -> None:
        """Tell every plugin about an opened or closed depeg event; one failure stops none."""
        for impl in self.pm.hook.pairscreen_peg_event_changed.get_hookimpls():
            try:
                impl.function(event=event)
            except Exception:
                log.exception("plugin %s failed on a peg event", self.pm.get_name(impl.plugin))
