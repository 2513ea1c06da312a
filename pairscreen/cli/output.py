"""How list commands print: a table with headers on a terminal, ``--json`` for scripts.

Piped without ``--json``, a list prints one tab-separated line per row, without a header,
so ``cut`` and ``awk`` keep working on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

Row = Mapping[str, Any]


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document (a list of objects) for scripts (default: a table on a "
        "terminal, tab-separated lines elsewhere)",
    )


def print_rows(
    args: argparse.Namespace,
    headers: Sequence[str],
    rows: Sequence[Row],
    cells: Callable[[Row], Sequence[str]],
    *,
    plain: Callable[[Row], str] | None = None,
) -> None:
    """``rows`` as JSON (``--json``), else each row's ``cells`` under ``headers`` on a
    terminal, else ``plain(row)`` (by default the cells joined by tabs) per line."""
    if args.json:
        print(json.dumps(list(rows), indent=2, ensure_ascii=False))
        return
    if sys.stdout.isatty():
        table = Table(*headers, box=None, header_style="bold", pad_edge=False)
        for row in rows:
            table.add_row(*cells(row))
        console = Console(file=sys.stdout)
        if rows:
            console.print(table)
        else:
            console.print("(none)", highlight=False)
        return
    for row in rows:
        print(plain(row) if plain else "\t".join(cells(row)))


def text(value: object) -> str:
    """A cell: ``-`` for nothing."""
    return "-" if value is None or value == "" else str(value)
