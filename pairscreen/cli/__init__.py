"""The ``pairscreen`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function; add a
module to ``COMMAND_GROUPS`` to add commands. Plugins add theirs, each in a group of its own
(``cli/plugin_commands.py``). Every command exits non-zero with a one-line plain error on
bad input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import peewee

from pairscreen.access.accounts import AccountError, AccountNotFound
from pairscreen.cli import exits
from pairscreen.cli.common import CommandError as CommandError
from pairscreen.cli.common import add_setting_options, settings_of
from pairscreen.cli.plugin_commands import register_plugin_commands
from pairscreen.cli.storage_errors import STORAGE_ERRORS, storage_line
from pairscreen.config import Settings, declaration, load_settings
from pairscreen.errors import MissingExtra, ServiceError
from pairscreen.logs import configure_logging
from pairscreen.plugin_system.registry import PluginError, PluginFailed
from pairscreen.universe import UniverseError

COMMAND_GROUPS: tuple[str, ...] = (
    "pairscreen.cli.serving",
    "pairscreen.cli.data",
    "pairscreen.cli.screen",  # before the commands that join its group (export)
    "pairscreen.cli.export",
    "pairscreen.cli.accounts",
    "pairscreen.cli.pegs",
    "pairscreen.cli.notify",
    "pairscreen.cli.evaluate",
    "pairscreen.cli.plugins",
)

# Wrong input or configuration: the usage status.
USER_ERRORS = (AccountError, UniverseError, PluginError, ValueError)


GLOBAL_SETTINGS = ("data_dir", "universe_path", "database_url", "log_format")


def build_parser(
    settings: Settings | None = None, *, argv: Sequence[str] | None = None
) -> argparse.ArgumentParser:
    """The whole command line: the core's groups, then the loaded plugins' commands (found
    with ``settings``, by default the environment's: only it says which plugins load).

    Given the ``argv`` it will parse, the plugins' commands are added only when it may
    need them (:func:`needs_plugin_commands`): loading every plugin to build a command line
    that names a core command would cost each ``pairscreen`` run the plugins' load time."""
    parser = OneLineParser(
        prog="pairscreen",
        description="Screen asset pairs, backtest coin accumulation, watch depegs, serve the API.",
    )
    add_setting_options(parser, *GLOBAL_SETTINGS)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log more (default: warnings and errors only)"
    )
    _add_quiet(parser, default=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_GROUPS:
        importlib.import_module(module).register(commands)
    if argv is None or needs_plugin_commands(argv, set(commands.choices)):
        register_plugin_commands(commands, settings or load_settings())
    for command in _commands(parser):
        add_setting_options(command, *GLOBAL_SETTINGS, repeated=True)
        _add_quiet(command, default=argparse.SUPPRESS)
    return parser


def needs_plugin_commands(argv: Sequence[str], core: set[str]) -> bool:
    """Whether parsing ``argv`` may need the plugins' commands: it asks for help (which
    lists them), or its command is not one of the ``core`` ones (a plugin's group, or a
    typo whose error lists the plugins' groups too)."""
    if any(word in ("-h", "--help") for word in argv):
        return True
    word = command_word(argv)
    return word is not None and word not in core


def command_word(argv: Sequence[str]) -> str | None:
    """The first word of ``argv`` that is neither a global option nor its value."""
    taking_value = {declaration(name).flag for name in GLOBAL_SETTINGS}
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None)
        if word.startswith("-"):
            if word in taking_value:
                next(words, None)  # its value
            continue
        return word
    return None


def _add_quiet(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default,
        help="no progress bars or progress lines (default: shown, on stderr)",
    )


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line, as every other error, with where to read the usage."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)  # for error()
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.exit(
            exits.USAGE, f"{self.prog}: error: {self._plain(message)} (see {self.prog} --help)\n"
        )

    def _plain(self, message: str) -> str:
        """argparse names a missing command before an option it does not know (``pairscreen
        --bogus`` said a COMMAND is required), and a missing subcommand by its internal name
        (``screen_command``): name the unknown option, and the subcommands to choose from."""
        if not message.startswith("the following arguments are required"):
            return message
        unknown = [
            word
            for word in getattr(self, "_given", [])
            if word.startswith("-") and word.split("=")[0] not in self._option_string_actions
        ]
        if unknown:
            return f"unrecognized arguments: {' '.join(unknown)}"
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and action.metavar is None:
                choices = ", ".join(action.choices or ())
                message = message.replace(action.dest, f"a command (one of: {choices})")
        return message


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
    try:
        parser = build_parser(argv=sys.argv[1:] if argv is None else argv)
    except Exception as exc:  # a plugin that cannot load, or adds a command it may not
        code, message = _failure(exc)
        print(f"pairscreen: error: {message}", file=sys.stderr)
        return code
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed on one line
        return int(exc.code or 0)
    try:
        configure_logging(
            settings_of(args).log_format, logging.INFO if args.verbose else logging.WARNING
        )
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a reader gone away is noticed here, not at the exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return exits.CLOSED_PIPE
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except Exception as exc:
        storage = storage_line(exc, args) if isinstance(exc, STORAGE_ERRORS) else None
        code, message = (exits.FAILURE, storage) if storage else _failure(exc)
        if isinstance(exc, PluginFailed):
            logging.getLogger("pairscreen.cli").info("where the plugin failed:\n%s", exc.trace)
        elif code == exits.FAILURE:
            logging.getLogger("pairscreen.cli").info("the error in full", exc_info=exc)
        print(f"pairscreen: error: {message}", file=sys.stderr)
        return code


def _failure(exc: Exception) -> tuple[int, str]:
    """The exit status and the one-line message of a command's error."""
    message = " ".join((getattr(exc, "message", None) or str(exc)).split())
    if isinstance(exc, CommandError):
        return exc.exit_code, message
    if isinstance(exc, PluginFailed):
        return exits.PLUGIN_FAILED, f"{message} (run again with --verbose for the traceback)"
    if isinstance(exc, AccountNotFound):
        return exits.NOT_FOUND, message
    if isinstance(exc, ServiceError):
        status = {404: exits.NOT_FOUND, 409: exits.USAGE, 400: exits.USAGE}
        return status.get(exc.status_code, exits.FAILURE), message
    if isinstance(exc, MissingExtra):
        return exits.MISSING_EXTRA, message
    if isinstance(exc, peewee.ImproperlyConfigured) and "postgres" in message.lower():
        return exits.MISSING_EXTRA, (
            "a postgresql:// database needs the PostgreSQL driver (psycopg2), which is not "
            "installed: pip install 'pairscreen[postgres]'"
        )
    if isinstance(exc, peewee.OperationalError | peewee.InterfaceError):
        return exits.FAILURE, f"database error: {message}"
    if isinstance(exc, USER_ERRORS):
        return exits.USAGE, message
    if isinstance(exc, OSError):
        return exits.FAILURE, message
    return exits.FAILURE, (
        f"unexpected {type(exc).__name__}: {message} (run again with --verbose for details)"
    )


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
