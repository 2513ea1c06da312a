"""The ``pairscreen`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function; add a
module to ``COMMAND_GROUPS`` to add commands. Every command exits non-zero with a one-line
plain error on bad input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from pairscreen.access.accounts import AccountError
from pairscreen.cli.common import CommandError as CommandError
from pairscreen.cli.common import add_setting_options, settings_of
from pairscreen.errors import ServiceError
from pairscreen.hooks import PluginError
from pairscreen.logs import configure_logging
from pairscreen.universe import UniverseError

COMMAND_GROUPS: tuple[str, ...] = (
    "pairscreen.cli.serving",
    "pairscreen.cli.data",
    "pairscreen.cli.export",
    "pairscreen.cli.accounts",
    "pairscreen.cli.pegs",
    "pairscreen.cli.notify",
)

USER_ERRORS = (AccountError, UniverseError, PluginError, ValueError, ServiceError, OSError)


GLOBAL_SETTINGS = ("data_dir", "universe_path", "database_url", "log_format")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pairscreen",
        description="Screen asset pairs, backtest coin accumulation, watch depegs, serve the API.",
    )
    add_setting_options(parser, *GLOBAL_SETTINGS)
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_GROUPS:
        importlib.import_module(module).register(commands)
    for command in _commands(parser):
        add_setting_options(command, *GLOBAL_SETTINGS, repeated=True)
    return parser


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that end a command line (``users list``, ``serve``), which also take the
    global options, so that ``pairscreen users list --data-dir X`` works as well."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            children = list({id(p): p for p in action._name_parser_map.values()}.values())
            for child in children:
                found.extend(_commands(child) or [child])
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        configure_logging(
            settings_of(args).log_format, logging.INFO if args.verbose else logging.WARNING
        )
        return int(args.handler(args) or 0)
    except CommandError as exc:
        print(f"pairscreen: error: {exc}", file=sys.stderr)
        return 2
    except USER_ERRORS as exc:
        message = getattr(exc, "message", None) or str(exc)
        print(f"pairscreen: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
