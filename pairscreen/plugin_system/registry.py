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
import re
import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import Any, Generic, TypeVar

import pluggy

from pairscreen.config import Settings
from pairscreen.contracts import (
    ChartRenderer,
    Command,
    Filter,
    MarketSource,
    Metric,
    Notifier,
    PegEventChange,
    PegSource,
    PluginOption,
    Scorer,
    Strategy,
)
from pairscreen.contracts.options import OptionValue
from pairscreen.plugin_system.builtins import current_name
from pairscreen.plugin_system.channel_kinds import ChannelKinds
from pairscreen.plugin_system.failures import OutOfContract as OutOfContract
from pairscreen.plugin_system.failures import PluginError as PluginError
from pairscreen.plugin_system.failures import PluginFailed as PluginFailed
from pairscreen.plugin_system.failures import blamed as blamed
from pairscreen.plugin_system.option_values import checked, declaration_problem, from_text, shown

log = logging.getLogger(__name__)

T = TypeVar("T")
COMMAND_NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}$")


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
    implementation's signature), so plugins are configured without reading the environment;
    ``tables`` are the universe's ``[plugins.<name>]`` tables, each plugin's own given to its
    hooks as ``options`` once checked against the options it declares.
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        settings: Settings,
        tables: Mapping[str, Mapping[str, Any]] | None = None,
    ):
        self.pm = pm
        self.settings = settings
        self.tables: Mapping[str, Mapping[str, Any]] = {
            current_name(name, f"[plugins.{name}]"): table for name, table in (tables or {}).items()
        }

    def names(self) -> list[str]:
        """Every loaded plugin's name, in registration order."""
        return [plugin_name(self.pm, p) for _, p in self.pm.list_name_plugin() if p is not None]

    @cached_property
    def declared_options(self) -> dict[str, tuple[PluginOption, ...]]:
        """Each plugin's declared options (``pairscreen_plugin_options``), by plugin name."""
        found: dict[str, tuple[PluginOption, ...]] = {}
        for owner, call in self._per_plugin("pairscreen_plugin_options"):
            with blamed(owner, "pairscreen_plugin_options"):
                answers = call()
            declared = tuple(o for answer in answers for o in _components(answer, owner, "option"))
            for option in declared:
                problem = declaration_problem(option)
                if problem is not None:
                    raise PluginError(f"plugin {owner!r} declared {option!r}: {problem}")
            found[owner] = typing.cast(tuple[PluginOption, ...], declared)
        return found

    @cached_property
    def options(self) -> dict[str, dict[str, OptionValue]]:
        """Each plugin's options: its declared defaults, its table's values over them, and
        an option's environment variable (``env``, when set and not empty) over both.

        Raises :class:`PluginError` for a table of no loaded plugin, a key the plugin does
        not declare, or a value of the wrong type.
        """
        loaded = self.names()
        unknown = sorted(set(self.tables) - set(loaded))
        if unknown:
            raise PluginError(
                f"[plugins.{unknown[0]}]: no plugin named {unknown[0]!r} is loaded "
                f"(see 'pairscreen plugins' for the names)"
            )
        values: dict[str, dict[str, OptionValue]] = {}
        for name in loaded:
            declared = {o.name: o for o in self.declared_options.get(name, ())}
            table = dict(self.tables.get(name, {}))
            extra = sorted(set(table) - set(declared))
            if extra:
                known = ", ".join(declared) or "none"
                raise PluginError(
                    f"[plugins.{name}] {extra[0]}: not an option of plugin {name!r} "
                    f"(its options: {known})"
                )
            values[name] = {
                key: self._option_value(name, option, table.get(key, option.default))
                for key, option in declared.items()
            }
        return values

    def _option_value(self, plugin: str, option: PluginOption, value: object) -> OptionValue:
        text = self.settings.plugin_variable(option.env) if option.env else None
        if option.env and text is not None:
            return from_text(option.env, option, text)
        return checked(f"[plugins.{plugin}]", option, value)

    def shown_options(self, plugin: str) -> list[tuple[PluginOption, object, object]]:
        """Each declared option of ``plugin`` with its value and default as a listing shows
        them: a secret's hidden."""
        values = self.options.get(plugin, {})
        return [
            (o, shown(o, values.get(o.name, o.default)), shown(o, o.default))
            for o in self.declared_options.get(plugin, ())
        ]

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

    def _registered(self, owner: str, call: Any, hook_name: str) -> list[Any]:
        """One plugin's answers to a register hook, called with the settings and its options;
        a plugin that raises is named in one sentence."""
        try:
            answers: list[Any] = call(settings=self.settings, options=self.options.get(owner, {}))
        except Exception as exc:
            raise PluginError(f"plugin {owner!r} failed in {hook_name}: {exc}") from exc
        return answers

    def _collect(self, kind: str, hook_name: str) -> Registry[Any]:
        registry: Registry[Any] = Registry(kind, component_type(getattr(self.pm.hook, hook_name)))
        for owner, call in self._per_plugin(hook_name):
            for answer in self._registered(owner, call, hook_name):
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

    @cached_property
    def channel_kinds(self) -> ChannelKinds:
        """The channel kinds users may choose: the notifiers that declare one."""
        notifiers = self.notifiers
        return ChannelKinds.of(notifiers, notifiers.owner)

    @cached_property
    def commands(self) -> list[tuple[str, Command]]:
        """Every plugin's commands with the plugin's name, in registration order.

        A group belongs to one plugin and holds a command name once; a malformed command is
        a :class:`PluginError` naming the plugin.
        """
        hook_name = "pairscreen_register_commands"
        found: list[tuple[str, Command]] = []
        groups: dict[str, str] = {}
        seen: set[tuple[str, str]] = set()
        for owner, call in self._per_plugin(hook_name):
            for answer in self._registered(owner, call, hook_name):
                for command in _components(answer, owner, "command"):
                    if not isinstance(command, Command) or not all(
                        isinstance(n, str) and COMMAND_NAME.match(n)
                        for n in (command.group, command.name)
                    ):
                        raise PluginError(
                            f"plugin {owner!r} registered {command!r} as a command; a command "
                            "is a Command (e.g. a CommandSpec) whose group and name are lowercase "
                            "words (letters, digits, '-')"
                        )
                    if groups.setdefault(command.group, owner) != owner:
                        raise PluginError(
                            f"the command group {command.group!r} is taken by plugin "
                            f"{groups[command.group]!r}; plugin {owner!r} must use its own"
                        )
                    if (command.group, command.name) in seen:
                        raise PluginError(
                            f"plugin {owner!r} registers the command "
                            f"'{command.group} {command.name}' twice"
                        )
                    seen.add((command.group, command.name))
                    found.append((owner, command))
        return found

    def hook_names(self) -> list[str]:
        """Every hook the framework specifies, by name."""
        return sorted(
            name
            for name, caller in vars(self.pm.hook).items()
            if isinstance(caller, pluggy.HookCaller) and caller.spec is not None
        )

    def implemented_hooks(self) -> dict[str, list[str]]:
        """Each loaded plugin's name and the hooks it implements, by name."""
        return {
            plugin_name(self.pm, plugin): sorted(
                caller.name for caller in self.pm.get_hookcallers(plugin) or ()
            )
            for _, plugin in self.pm.list_name_plugin()
            if plugin is not None
        }

    def peg_event_listeners(self) -> list[str]:
        """The plugins that implement ``pairscreen_peg_event_changed``, by name."""
        return [owner for owner, _ in self._per_plugin("pairscreen_peg_event_changed")]

    def peg_event_changed(self, event: PegEventChange) -> None:
        """Tell every plugin about an opened or closed depeg event; one failure stops none."""
        for owner, call in self._per_plugin("pairscreen_peg_event_changed"):
            try:
                call(event=event)
            except Exception as exc:
                # one line a person reads; the traceback only at INFO (``--verbose``)
                log.warning(
                    "plugin %s failed on a peg event: %s: %s", owner, type(exc).__name__, exc
                )
                log.info("plugin %s failed on a peg event", owner, exc_info=True)


def _components(answer: object, owner: str, kind: str) -> Iterable[object]:
    """One plugin's answer to a ``register`` hook: a list (or other iterable) of components."""
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise PluginError(f"plugin {owner!r} answered {answer!r} where a list of {kind}s belongs")
    return answer
