"""Every component a process will use, resolved and checked before it serves or writes.

A misspelt strategy, a renderer no plugin registers, a rule without ``explain``: each would
otherwise surface in the first request that reaches it (a 500) or the first pair that fails
the rule. :func:`check_components` looks each one up in the loaded plugins and checks it
against its contract, raising one
:class:`~pairscreen.plugin_system.registry.PluginError` whose sentence names the plugin (or
the setting) and what is wrong. The checks are generic: any registered component of any kind
is checked the same way, so new metrics, rules and strategies need no change here.
"""

from __future__ import annotations

from typing import Any

from pairscreen.component_choice import chosen
from pairscreen.config import COMPONENTS, Settings
from pairscreen.contracts import FilterRule
from pairscreen.engine.filtering import FilterChoice, choose_filter
from pairscreen.engine.required_fields import check_required_fields
from pairscreen.plugin_system.registry import PluginError, Plugins, Registry, protocol_members
from pairscreen.universe import Universe


def check_components(plugins: Plugins, universe: Universe, settings: Settings) -> FilterChoice:
    """Resolve every chosen component and check every filter's rules; the screen's filter
    with its thresholds. ``settings`` are the ones given (not yet resolved), so an error can
    say whether a setting or the universe chose the missing component. Raises
    ``PluginError`` (or ``UniverseError`` for a bad threshold)."""
    len(plugins.options)  # every [plugins.<name>] table checked against the declared options
    for screen_filter in plugins.filters:
        check_rules(plugins, screen_filter.name)
    for declared in COMPONENTS:  # each chosen one exists before the filter is looked into
        value, chosen_by = chosen(settings, universe, declared)
        registry: Registry[Any] = getattr(plugins, declared.registry)
        _chosen(registry, value, chosen_by)
    choice = choose_filter(plugins, universe)
    check_required_fields(plugins, choice.name)
    for asset in universe.assets:
        for source in asset.peg.sources if asset.peg is not None else ():
            _chosen(plugins.peg_sources, source, f"the peg sources of {asset.ticker}")
    for source in universe.peg_source_options:
        _chosen(plugins.peg_sources, source, f"the universe's [peg_sources.{source}] table")
    len(plugins.notifiers)  # collected (and each one checked) now, not at the first delivery
    len(plugins.channel_kinds.names)  # a badly declared channel kind stops the start too
    return choice


def _chosen(registry: Registry[Any], name: str, chosen_by: str) -> None:
    if name not in registry:
        known = ", ".join(sorted(registry.items)) or "none is loaded"
        raise PluginError(f"{chosen_by}: no {registry.kind} named {name!r} (known: {known})")


def check_rules(plugins: Plugins, filter_name: str) -> None:
    """Every rule of the filter has the members a :class:`FilterRule` declares, callable
    where they are methods, so a rule never fails on its first rejected pair instead."""
    screen_filter = plugins.filters.get(filter_name)
    owner = plugins.filters.owner(filter_name)
    where = f"plugin {owner!r}: screen filter {filter_name!r}"
    try:
        rules = tuple(screen_filter.rules)
    except TypeError:
        raise PluginError(f"{where} has rules that are not a sequence of rules") from None
    for index, rule in enumerate(rules):
        label = f"rule {getattr(rule, 'code', None) or f'#{index + 1}'!r}"
        missing = [m for m in protocol_members(FilterRule) if not hasattr(rule, m)]
        if missing:
            raise PluginError(f"{where}: {label} has no {', '.join(missing)}")
        for method in ("check", "explain", "inputs_for"):
            if hasattr(rule, method) and not callable(getattr(rule, method)):
                raise PluginError(f"{where}: {label}: {method} is not a method")
        inputs = rule.inputs
        if isinstance(inputs, str) or not all(isinstance(name, str) for name in inputs):
            raise PluginError(f"{where}: {label}: inputs must be a tuple of field names")
