"""``screen export``: write the latest published screen to a file, as CSV or JSON.

A command of the ``screen`` group, kept in its own module: it adds itself to the group that
``pairscreen.cli.screen`` creates. The files are the API's bodies: JSON is ``/screen/latest``
as published, CSV is its ``text/csv`` table (one row per survivor).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pairscreen.cli.common import open_runtime
from pairscreen.db.proxy import database
from pairscreen.wording import plural


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    screen = commands.choices["screen"]
    group = next(a for a in screen._actions if isinstance(a, argparse._SubParsersAction))
    export = group.add_parser("export", help="write the latest published screen to FILE")
    export.add_argument(
        "--format", choices=("csv", "json"), default="csv", help="file format (default csv)"
    )
    export.add_argument("file", metavar="FILE", help="where to write it ('-' for stdout)")
    export.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> None:
    from pairscreen.screen_views.export import screen_csv

    rt = open_runtime(args)
    with database.connection_context():
        screen = rt.screens.latest()
    body = screen_csv(screen) if args.format == "csv" else screen.payload
    if args.file == "-":
        sys.stdout.write(body)
        return
    path = Path(args.file)
    path.write_text(body, encoding="utf-8", newline="")
    survivors = json.loads(screen.payload)["n_survivors"]
    counted = plural(survivors, "survivor")
    print(f"wrote the screen of {screen.key[1]} ({counted}) to {path} ({args.format})")
