"""Command lines printed as hints, written so that they run as printed.

A newcomer copies hints such as ``users list`` or ``keys rotate`` from the terminal. The
executable is often not on the PATH (``.venv/bin/pairscreen``), and a hint without the global
options that chose the database would read another database, so a hint names the program the
way it was started and repeats the options that reach this command's database.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from pairscreen.config import Settings, declaration, load_settings

# The settings that choose which data a command reads, in the order their flags depend on
# each other (the database URL's default comes from the data dir).
LOCATION_SETTINGS = ("data_dir", "universe_path", "database_url")


def program() -> list[str]:
    """The words that start pairscreen the way this process was started."""
    argv0 = sys.argv[0] if sys.argv else ""
    if not Path(argv0).name.startswith("pairscreen"):  # python -m pairscreen, or a test run
        return [_path_text(Path(sys.executable)), "-m", "pairscreen"]
    if os.sep not in argv0:  # found on the PATH, so it is found again
        return [argv0]
    return [_path_text(Path(argv0))]


def _path_text(path: Path) -> str:
    """The bare name when the PATH finds this very file, else its path from the cwd."""
    found = shutil.which(path.name)
    absolute = path.absolute()
    if found and Path(found).absolute() == absolute:
        return path.name
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def command_line(settings: Settings, *words: str) -> str:
    """``pairscreen [global options] WORDS`` reaching the data dir, universe and database of
    ``settings`` when run in this environment (options the environment already gives are
    left out)."""
    flags: dict[str, str] = {}
    options: list[str] = []
    for name in LOCATION_SETTINGS:
        wanted = getattr(settings, name)
        if wanted is None or getattr(load_settings(flags=flags), name) == wanted:
            continue
        flag = declaration(name).flag
        assert flag is not None, name  # every location setting has a flag
        flags[name] = str(wanted)
        options += [flag, str(wanted)]
    return shlex.join([*program(), *options, *words])
