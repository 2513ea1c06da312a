"""The commands plugins add (``pairscreen_register_commands``): ``pairscreen <group> <name>``.

A plugin's commands live in a group of their own, so they can never shadow a core command
or each other: a group that is a core command's name stops the command line with one
sentence naming the plugin, before anything runs. They are read only for a command line that
may need them (``--help``, or a command that is not a core one: ``needs_plugin_commands``), so
a core command does not pay for loading every plugin. They are listed by ``pairscreen --help``
like the core's, take the global options, and a command that raises ends in the usual one
line (naming the plugin) with the plugin-failure status.
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

from pairscreen.cli.common import settings_of
from pairscreen.config import Settings
from pairscreen.contracts import Command
from pairscreen.plugin_system.loader import load_plugins
from pairscreen.plugin_system.registry import PluginError, Plugins, blamed


def register_plugin_commands(commands: argparse._SubParsersAction[Any], settings: Settings) -> None:
    """Add every loaded plugin's commands under ``commands``, one group per plugin."""
    plugins = Plugins(load_plugins(settings), settings)
    core = set(commands.choices)
    groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]] = {}
    for owner, command in plugins.commands:
        if command.group in core:
            raise PluginError(
                f"plugin {owner!r} adds the command group {command.group!r}, which is a command "
                "of pairscreen itself; a plugin's commands need a group name of their own"
            )
        if command.group not in groups:
            group = commands.add_parser(
                command.group,
                help=f"commands of the plugin {owner}",
                description=f"Commands of the plugin {owner}.",
            )
            groups[command.group] = group.add_subparsers(
                dest=f"{command.group}_command", metavar="COMMAND", required=True
            )
        parser = groups[command.group].add_parser(
            command.name, help=command.help, description=command.help
        )
        with blamed(owner, f"command '{command.group} {command.name}'"):
            command.add_arguments(parser)
        parser.set_defaults(handler=functools.partial(_run, owner, command))


def _run(owner: str, command: Command, args: argparse.Namespace) -> int:
    settings = settings_of(args)
    with blamed(owner, f"command '{command.group} {command.name}'"):
        code = command.run(args, settings)
    return int(code or 0)
