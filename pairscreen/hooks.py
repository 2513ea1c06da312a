"""The typed facade over pluggy: the only module that touches ``pm.hook``.

Core code asks this facade for named components (``plugins.metrics``, ``plugins.strategies.get(
"accumulation")`` ...) and never calls hooks itself, so every hook has one typed call site.

Every hook is called through pluggy, one implementing plugin at a time: for each plugin, a
subset hook caller holds that plugin's implementation and every wrapper of the hook, so
pluggy's calling rules hold (an implementation may take fewer arguments than the spec,
``wrapper=True`` and ``hookwrapper=True`` implementations wrap each plugin's call, tracing
and ``add_hookcall_monitoring`` see every call). Calling per plugin is what lets a registry
name the plugin behind each component, and lets one failing ``peg_event_changed``
implementation be logged without stopping the others.
"""

from __future__ import annotations

import logging
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import Any, Generic, TypeVar

import pluggy

from pairscreen.config import Settings
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
    """A plugin broke the contract (a duplicate name, a missing component, a wrong type)."""


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The public attributes and methods a Protocol declares, for naming what is missing."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in (object, typing.Protocol, typing.Generic):
            continue
        names.update(vars(base).get("__annotations__", {}))
        names.update(vars(base))
    return tuple(sorted(n for n in names if not n.startswith("_")))


@dataclass
class Registry(Generic[T]):
    """Named components of one kind, each checked against the kind's Protocol when added.

    A second component with the same name is an error naming both plugins.
    """

    kind: str
    protocol: type
    items: dict[str, T] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)

    def add(self, component: object, owner: str) -> None:
        if not isinstance(component, self.protocol):
            missing = [m for m in protocol_members(self.protocol) if not hasattr(component, m)]
            raise PluginError(
                f"plugin {owner!r} registered {component!r} as a {self.kind}, but it is not a "
                f"{self.protocol.__name__} (missing: {', '.join(missing) or 'nothing named'})"
            )
        name = getattr(component, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {owner!r} registered a {self.kind} without a name")
        if name in self.items:
            raise PluginError(
                f"{self.kind} {name!r} is registered twice: by {self.owners[name]!r} "
                f"and by {owner!r}"
            )
        self.items[name] = typing.cast(T, component)
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


def plugin_name(pm: pluggy.PluginManager, plugin: object) -> str:
    """The name a plugin is shown by: its registered name, else where it is defined.

    pluggy names a plugin registered without a name and without ``__name__`` (an instance)
    by its ``id()``, which tells a reader nothing; such a plugin is shown by its module and
    class instead.
    """
    name = pm.get_name(plugin)
    if name and name != str(id(plugin)):
        return name
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    kind = plugin if isinstance(plugin, type) else type(plugin)
    return f"{kind.__module__}.{kind.__qualname__}"


def component_type(hook: pluggy.HookCaller) -> type:
    """The component a ``register`` hook returns a list of, read from its spec's annotation."""
    if hook.spec is None:
        raise PluginError(f"{hook.name} has no hook specification")
    try:
        returned = typing.get_type_hints(hook.spec.function).get("return")
    except NameError as exc:
        raise PluginError(f"{hook.name}: its return annotation does not resolve: {exc}") from None
    args = typing.get_args(returned)
    if typing.get_origin(returned) is not list or len(args) != 1 or not isinstance(args[0], type):
        raise PluginError(f"{hook.name} is not specified as returning a list of components")
    try:
        isinstance(None, args[0])
    except TypeError:  # a Protocol without @runtime_checkable cannot check a component
        raise PluginError(
            f"{hook.name} returns {args[0].__name__}, which cannot check components: "
            "mark it @runtime_checkable"
        ) from None
    return args[0]


class Plugins:
    """Typed access to everything the loaded plugins contribute.

    ``settings`` are handed to the register hooks that ask for them (``settings`` in an
    implementation's signature), so plugins are configured without reading the environment.
    """

    def __init__(self, pm: pluggy.PluginManager, settings: Settings):
        self.pm = pm
        self.settings = settings

    def _per_plugin(self, hook_name: str) -> Iterator[tuple[str, pluggy.HookCaller]]:
        """One hook caller per implementing plugin, in registration order, with the wrappers.

        Each caller holds that plugin's implementation and every wrapper of the hook, so a
        wrapper sees (and may change) each plugin's answer.
        """
        hook: pluggy.HookCaller = getattr(self.pm.hook, hook_name)
        impls = hook.get_hookimpls()
        wrapping = {id(i.plugin) for i in impls if i.wrapper or i.hookwrapper}
        plain = {id(i.plugin): i.plugin for i in impls if not (i.wrapper or i.hookwrapper)}
        for plugin_id, plugin in plain.items():
            others = [p for i, p in plain.items() if i != plugin_id and i not in wrapping]
            yield plugin_name(self.pm, plugin), self.pm.subset_hook_caller(hook_name, others)

    def _collect(self, kind: str, hook_name: str) -> Registry[Any]:
        registry: Registry[Any] = Registry(kind, component_type(getattr(self.pm.hook, hook_name)))
        for owner, call in self._per_plugin(hook_name):
            try:
                answers = call(settings=self.settings)
            except Exception as exc:
                raise PluginError(f"plugin {owner!r} failed in {hook_name}: {exc}") from exc
            for answer in answers:
                for component in _components(answer, owner, kind):
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
        for owner, call in self._per_plugin("pairscreen_peg_event_changed"):
            try:
                call(event=event)
            except Exception:
                log.exception("plugin %s failed on a peg event", owner)


def _components(answer: object, owner: str, kind: str) -> Iterable[object]:
    """One plugin's answer to a ``register`` hook: a list (or other iterable) of components."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise PluginError(f"plugin {owner!r} answered {answer!r} where a list of {kind}s belongs")
    return answer
