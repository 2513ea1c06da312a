"""``plugins``: every loaded plugin, where it came from, what it registers and its options."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pairscreen.bootstrap import load_all_plugins
from pairscreen.cli.common import settings_of
from pairscreen.plugin_system.loader import FRAMEWORK, origins
from pairscreen.plugin_system.registry import Plugins, Registry
from pairscreen.universe import load_universe

# Registry attribute of Plugins -> the key it is listed under, one per component kind.
KINDS: tuple[tuple[str, str], ...] = (
    ("market_sources", "market_sources"),
    ("metrics", "metrics"),
    ("filters", "filters"),
    ("strategies", "strategies"),
    ("scorers", "scorers"),
    ("chart_renderers", "chart_renderers"),
    ("peg_sources", "peg_sources"),
    ("notifiers", "notifiers"),
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser(
        "plugins", help="list the loaded plugins, what each registers and its options"
    )
    listing.add_argument(
        "--json", action="store_true", help="one JSON document on stdout (default: text)"
    )
    listing.set_defaults(handler=_list)


def _list(args: argparse.Namespace) -> None:
    settings = settings_of(args)
    plugins = load_all_plugins(settings, load_universe(settings))
    listed = describe_plugins(plugins)
    if args.json:
        print(json.dumps({"plugins": listed}, indent=2))
        return
    print("\n".join(_text(entry) for entry in listed))


def describe_plugins(plugins: Plugins) -> list[dict[str, Any]]:
    """Per loaded plugin: its name, origin, components by kind, listener and options."""
    where = origins(plugins.pm)
    listeners = set(plugins.peg_event_listeners())
    described: list[dict[str, Any]] = []
    for name in plugins.names():
        entry: dict[str, Any] = {"name": name, "origin": where.get(name, FRAMEWORK)}
        for attribute, key in KINDS:
            registry: Registry[Any] = getattr(plugins, attribute)
            mine = [c for c in registry if registry.owner(c.name) == name]
            if mine:
                entry[key] = [_component(key, c) for c in mine]
        if name in listeners:
            entry["peg_event_listener"] = True
        declared = plugins.declared_options.get(name, ())
        if declared:
            values = plugins.options.get(name, {})
            entry["options"] = [
                {
                    "name": o.name,
                    "type": o.type_name,
                    "default": o.default,
                    "value": values.get(o.name, o.default),
                    "description": o.description,
                }
                for o in declared
            ]
        described.append(entry)
    return described


def _component(kind: str, component: Any) -> dict[str, Any]:
    described: dict[str, Any] = {"name": component.name}
    if kind == "metrics":
        described["fields"] = [f.name for f in component.fields]
    elif kind == "filters":
        described["rules"] = [rule.code for rule in component.rules]
        described["thresholds"] = dict(component.thresholds)
    return described


def _text(entry: dict[str, Any]) -> str:
    lines = [f"{entry['name']}  ({entry['origin']})"]
    for _, key in KINDS:
        for component in entry.get(key, ()):
            kind = key.rstrip("s").replace("_", " ").replace("strategie", "strategy")
            detail = ""
            if "fields" in component:
                detail = ": " + ", ".join(component["fields"])
            elif "rules" in component:
                limits = ", ".join(f"{k}={v}" for k, v in component["thresholds"].items())
                detail = f": rules {', '.join(component['rules'])}; thresholds {limits or 'none'}"
            lines.append(f"  {kind} {component['name']}{detail}")
    if entry.get("peg_event_listener"):
        lines.append("  peg-event listener")
    for option in entry.get("options", ()):
        lines.append(
            f"  option {option['name']} = {option['value']!r} ({option['type']}, default "
            f"{option['default']!r}){': ' + option['description'] if option['description'] else ''}"
        )
    return "\n".join(lines)
