"""Helpers the command modules share: settings, database, runtime."""

from __future__ import annotations

import argparse

from pairscreen.bootstrap import build_runtime
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


def add_setting_options(parser: argparse.ArgumentParser, *names: str) -> None:
    """The flags of the named settings, with the help, variable and default they declare.

    A flag left out stays None, so the environment (then the default) decides.
    """
    for name in names:
        declared = declaration(name)
        if declared.flag is None:
            raise ValueError(f"setting {name!r} has no command-line flag")
        help_ = f"{declared.help} (default {default_text(name)}) [{declared.env}]"
        if declared.parser is FLAG:
            parser.add_argument(
                declared.flag, dest=name, action="store_const", const="1", default=None, help=help_
            )
        else:
            metavar = declared.parser.metavar or declared.flag.lstrip("-").upper().replace("-", "_")
            parser.add_argument(declared.flag, dest=name, metavar=metavar, default=None, help=help_)


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings of this command: its flags, else the environment, else the defaults."""
    flags = {
        f.name: getattr(args, f.name)
        for f, declared in declarations()
        if declared.flag is not None and getattr(args, f.name, None) is not None
    }
    return load_settings(flags=flags)


def open_database(args: argparse.Namespace) -> Settings:
    settings = settings_of(args)
    init_database(settings.database_url)
    return settings


def open_runtime(args: argparse.Namespace) -> Runtime:
    return build_runtime(settings_of(args))
