"""What start-up costs: fresh processes, side by side with a bare interpreter.

Every CLI command, forked screen worker and server process pays for importing the package,
building the runtime (settings, database, every built-in plugin registered and checked,
universe) before it does any work. This prints, from one run, the median wall time of each
start-up path in a fresh interpreter and its overhead over ``python -c pass`` on the same
machine, then which heavy libraries each path imported (none should: a computation imports
what it needs when it runs).

    .venv/bin/python benchmarks/startup.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import machine_line, prepare

HEAVY = ("scipy.stats", "statsmodels", "pandas", "matplotlib", "arch", "connexion")
BUDGET_S = 0.3  # start-up allowed over a bare interpreter

PATHS = {
    "python -c pass (bare interpreter)": "pass",
    "import pairscreen": "import pairscreen",
    "runtime for screen run (plugins, universe, db)": (
        "from pairscreen.config import load_settings\n"
        "from pairscreen.bootstrap import build_runtime\n"
        "import pairscreen.screening.screen, pairscreen.engine.executors\n"
        "rt = build_runtime(load_settings())\n"
        "len(rt.plugins.metrics); len(rt.plugins.chart_renderers); len(rt.plugins.notifiers)"
    ),
    "pairscreen --help": (
        "import sys\nfrom pairscreen.cli import main\nsys.argv = ['pairscreen', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    ),
    "pairscreen users list": (
        "import sys\nfrom pairscreen.cli import main\nsys.argv = ['pairscreen', 'users', 'list']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    ),
}


def time_script(script: str, env: dict[str, str], repeat: int) -> tuple[float, list[str]]:
    """Median wall seconds of ``script`` in a fresh interpreter; the heavy modules it left."""
    probe = (
        f"{script}\nimport sys\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    seconds = []
    heavy = ""
    for _ in range(repeat + 1):  # the first run warms the file cache, not counted
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        )
        seconds.append(time.perf_counter() - start)
        heavy = next(
            (line[6:] for line in done.stdout.splitlines() if line.startswith("HEAVY:")), ""
        )
    return statistics.median(seconds[1:]), [m for m in heavy.split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pairscreen-startup-bench-") as tmp:
        print("preparing a demo database ...", flush=True)
        url, _key, _pairs = prepare(Path(tmp))
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "PAIRSCREEN_DATA_DIR": tmp,
            "PAIRSCREEN_LOAD_PLUGINS": "",
        }
        print(machine_line())
        print(f"median of {args.repeat} fresh processes each\n")
        print(f"{'start-up path':<48} {'wall':>8} {'over bare':>10}  heavy imports")
        bare = 0.0
        for label, script in PATHS.items():
            seconds, heavy = time_script(script, env, args.repeat)
            bare = bare or seconds
            over = seconds - bare
            mark = "" if over <= BUDGET_S else f"  (over the {BUDGET_S:.1f} s budget)"
            print(
                f"{label:<48} {seconds * 1000:6.0f} ms {over * 1000:7.0f} ms  "
                f"{', '.join(heavy) or 'none'}{mark}"
            )


if __name__ == "__main__":
    main()
