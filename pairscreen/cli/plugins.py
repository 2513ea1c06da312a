"""``plugins``: the loaded plugins, where each came from, its version, the hooks it implements,
what it registers and its options. Built-ins (and the framework's own listener) are listed
with ``--all`` only, as a plugin author looks for theirs; ``--hook`` keeps the implementers of
one hook."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pairscreen.bootstrap import load_configured_plugins
from pairscreen.cli.common import CommandError, settings_of
from pairscreen.contracts import ChannelNotifier
from pairscreen.plugin_system.hookspecs import PROJECT_NAME
from pairscreen.plugin_system.loader import BUILT_IN, FRAMEWORK, origins, versions
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
    listing.add_argument(
        "--all",
        action="store_true",
        dest="all_plugins",
        help="the built-in plugins and the framework's own listener too (default: only the "
        "entry-point and local ones)",
    )
    listing.add_argument(
        "--hook",
        metavar="NAME",
        help="only the plugins implementing this hook, e.g. pairscreen_register_notifiers or "
        "register_notifiers (default: every plugin)",
    )
    listing.set_defaults(handler=_list)


def _list(args: argparse.Namespace) -> None:
    settings = settings_of(args)
    plugins, _ = load_configured_plugins(settings, load_universe(settings))
    hook = None if args.hook is None else hook_named(plugins, args.hook)
    listed = describe_plugins(plugins, hook=hook, everything=args.all_plugins)
    if args.json:
        print(json.dumps({"plugins": listed}, indent=2))
        return
    if not listed:
        which = f"implementing {hook}" if hook else "loaded"
        more = "" if args.all_plugins else " besides the built-ins (--all lists them)"
        print(f"no plugins {which}{more}")
        return
    print("\n".join(_text(entry) for entry in listed))


def hook_named(plugins: Plugins, name: str) -> str:
    """The hook ``name`` stands for (the ``pairscreen_`` prefix may be left out)."""
    known = plugins.hook_names()
    full = name if name.startswith(f"{PROJECT_NAME}_") else f"{PROJECT_NAME}_{name}"
    if full not in known:
        raise CommandError(f"--hook {name}: no such hook; the hooks are {', '.join(known)}")
    return full


def describe_plugins(
    plugins: Plugins, *, hook: str | None = None, everything: bool = True
) -> list[dict[str, Any]]:
    """Per loaded plugin: its name, origin, version, hooks, components by kind, listener,
    commands and options; the built-ins unless ``everything``, and only the implementers of
    ``hook`` when one is given."""
    where = origins(plugins.pm)
    version = versions(plugins.pm)
    hooks = plugins.implemented_hooks()
    listeners = set(plugins.peg_event_listeners())
    # Every plugin's components are registered, the hidden built-ins' too: a bad option in
    # any [plugins.NAME] table stops the listing as it stops every other command.
    registries: dict[str, Registry[Any]] = {attr: getattr(plugins, attr) for attr, _ in KINDS}
    commands: dict[str, list[str]] = {}
    for owner, command in plugins.commands:
        commands.setdefault(owner, []).append(f"{command.group} {command.name}")
    described: list[dict[str, Any]] = []
    for name in plugins.names():
        origin = where.get(name, FRAMEWORK)
        if not everything and origin in (BUILT_IN, FRAMEWORK):
            continue
        if hook is not None and hook not in hooks.get(name, ()):
            continue
        entry: dict[str, Any] = {
            "name": name,
            "origin": origin,
            "version": version.get(name),
            "hooks": hooks.get(name, []),
        }
        for attribute, key in KINDS:
            registry = registries[attribute]
            mine = [c for c in registry if registry.owner(c.name) == name]
            if mine:
                entry[key] = [_component(key, c) for c in mine]
        if name in listeners:
            entry["peg_event_listener"] = True
        if name in commands:
            entry["commands"] = commands[name]
        declared = plugins.shown_options(name)
        if declared:
            entry["options"] = [
                {
                    "name": o.name,
                    "type": o.type_name,
                    "default": default,
                    "value": value,
                    "description": o.description,
                    **({"secret": True} if o.secret else {}),
                    **({"env": o.env} if o.env else {}),
                }
                for o, value, default in declared
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
    elif kind == "notifiers" and isinstance(component, ChannelNotifier):
        spec = component.channel
        described["channel"] = {
            "label": spec.label,
            "secret": spec.secret,
            "self_service": spec.self_service,
        }
    return described


def _text(entry: dict[str, Any]) -> str:
    lines = [f"{entry['name']}  ({entry['origin']})"]
    for _, key in KINDS:
        for component in entry.get(key, ()):
            kind = key.rstrip("s").replace("_", " ").replace("strategie", "strategy")
            detail = ""
            if "fields" in component:
                detail = ": " + ", ".join(component["fields"])
            elif "channel" in component:
                channel = component["channel"]
                setter = "users set it" if channel["self_service"] else "the operator sets it"
                detail = (
                    f": channel kind ({channel['label']}, secret {channel['secret']}, {setter})"
                )
            elif "rules" in component:
                limits = ", ".join(f"{k}={v}" for k, v in component["thresholds"].items())
                detail = f": rules {', '.join(component['rules'])}; thresholds {limits or 'none'}"
            lines.append(f"  {kind} {component['name']}{detail}")
    if entry.get("peg_event_listener"):
        lines.append("  peg-event listener")
    for command in entry.get("commands", ()):
        lines.append(f"  command pairscreen {command}")
    for option in entry.get("options", ()):
        env = f", env {option['env']}" if "env" in option else ""
        lines.append(
            f"  option {option['name']} = {option['value']!r} ({option['type']}, default "
            f"{option['default']!r}{env})"
            f"{': ' + option['description'] if option['description'] else ''}"
        )
    if entry.get("version"):
        lines.append(f"  version {entry['version']}")
    lines.append(f"  hooks: {', '.join(entry['hooks']) or 'none'}")
    return "\n".join(lines)
