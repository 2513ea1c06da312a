"""Helpers the command modules share: settings, database, runtime, errors."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from pairscreen.bootstrap import build_runtime
from pairscreen.cli import exits
from pairscreen.cli.hints import program
from pairscreen.config import (
    FLAG,
    Settings,
    declaration,
    declarations,
    default_text,
    load_settings,
)
from pairscreen.db.connection import init_database
from pairscreen.runtime import Runtime


class CommandError(Exception):
    """A command cannot go on; the message is printed as the one-line error and the command
    exits with ``exit_code`` (see :mod:`pairscreen.cli.exits`)."""

    def __init__(self, message: str, exit_code: int = exits.USAGE):
        super().__init__(message)
        self.exit_code = exit_code


def add_setting_options(
    parser: argparse.ArgumentParser, *names: str, repeated: bool = False
) -> None:
    """The flags of the named settings, with the help, variable and default they declare.

    A flag left out stays None, so the environment (then the default) decides. ``repeated``
    adds a global option again to a command: there it sets the value only when given, so it
    neither hides nor resets the one given before the command.
    """
    for name in names:
        declared = declaration(name)
        if declared.flag is None:
            raise ValueError(f"setting {name!r} has no command-line flag")
        default = argparse.SUPPRESS if repeated else None
        help_ = f"{declared.help} (default {default_text(name)}) [{declared.env}]"
        if declared.parser is FLAG:
            parser.add_argument(
                declared.flag,
                dest=name,
                action="store_const",
                const="1",
                default=default,
                help=help_,
            )
        else:
            metavar = declared.parser.metavar or declared.flag.lstrip("-").upper().replace("-", "_")
            parser.add_argument(
                declared.flag, dest=name, metavar=metavar, default=default, help=help_
            )


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings of this command: its flags, else the environment, else the defaults."""
    flags = {
        f.name: getattr(args, f.name)
        for f, declared in declarations()
        if declared.flag is not None and getattr(args, f.name, None) is not None
    }
    return load_settings(flags=flags)


def require_database(settings: Settings) -> None:
    """Refuse to read an SQLite database that does not exist.

    Connecting would create an empty one, and a command would then fail on it ("no user with
    e-mail") or report nothing, when the real cause is a wrong ``--data-dir`` or
    ``--database-url``. Only ``db upgrade``, ``data sync`` and ``demo`` create a database.
    """
    url = settings.database_url
    if not url.startswith("sqlite:///"):
        return
    path = url.removeprefix("sqlite:///")
    if path and path != ":memory:" and not Path(path).expanduser().exists():
        demo, upgrade = shlex.join([*program(), "demo"]), shlex.join([*program(), "db", "upgrade"])
        raise CommandError(
            f"there is no database at {path}: create one with '{demo}' (the demo) or "
            f"'{upgrade}' (empty), or point --data-dir or --database-url at yours",
            exits.NOT_FOUND,
        )


def open_database(args: argparse.Namespace) -> Settings:
    """Bind this command's existing database (migrated to the current schema)."""
    settings = settings_of(args)
    require_database(settings)
    init_database(settings.database_url)
    return settings


def open_runtime(args: argparse.Namespace, *, create: bool = False) -> Runtime:
    """The runtime on this command's database; ``create`` allows a database not there yet."""
    settings = settings_of(args)
    if not create:
        require_database(settings)
    return build_runtime(settings)
