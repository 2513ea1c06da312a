"""Helpers the command modules share: settings, database, runtime."""

from __future__ import annotations

import argparse

from pairscreen.bootstrap import build_runtime
from pairscreen.config import Settings, load_settings
from pairscreen.db.connection import init_database
from pairscreen.runtime import Runtime


def settings_of(args: argparse.Namespace) -> Settings:
    return load_settings(
        data_dir=args.data_dir, database_url=args.database_url, universe=args.universe
    )


def open_database(args: argparse.Namespace) -> Settings:
    settings = settings_of(args)
    init_database(settings.database_url)
    return settings


def open_runtime(args: argparse.Namespace) -> Runtime:
    return build_runtime(settings_of(args))
