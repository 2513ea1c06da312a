"""What ``/assets`` costs on an intraday universe: summing up each asset's stored bars
(:func:`pairscreen.market.bar_history.bar_histories`, one grouped query and each asset's last
block) against reading every closed bar (what the list did before), each in a fresh process.

Fills a SQLite database (``bar_storage.py``'s) with ``--assets`` random-walk assets of hourly
bars over each of ``--days`` (lengths of history, comma-separated, to show how the cost grows
with it), then times each way and reads its process's peak memory (``ru_maxrss``, which
includes the interpreter and numpy, about 55 MB). The answers are compared: both must give the same
summary.

    .venv/bin/python benchmarks/assets_bars.py [--assets 500] [--days 365,730]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bar_storage
import numpy as np
from _harness import machine_line

ROOT = Path(__file__).resolve().parents[1]
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""
FIRST_DAY = np.datetime64("2022-01-01", "D")  # bar_storage.fill's first bar opens then

MEASURE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import numpy as np
from pairscreen.contracts.bars import BAR_SIZES
from pairscreen.db.connection import database, init_database
from pairscreen.market.bar_history import bar_histories
from pairscreen.market.bar_store import load_bars
hour = BAR_SIZES["1h"]
init_database({url!r})
until = {until}
with database.connection_context():
    started = time.perf_counter()
    if {way!r} == "summary":
        got = bar_histories(hour, until)
        rows = {{
            t: (str(h.first_day), h.days, str(h.last_close), h.latest_close)
            for t, h in got.items()
        }}
    else:
        rows = {{}}
        for t, c in load_bars(hour, until=until).items():
            days = np.unique((c.dates - np.timedelta64(1, "s")).astype("datetime64[D]"))
            rows[t] = (str(days[0]), len(days), str(c.dates[-1]), float(c.close[-1]))
    seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "peak_mb": peak, "rows": rows}}))
"""


def fill(url: str, assets: int, days: int) -> int:
    """``assets`` x ``days`` of hourly bars from 2022-01-01 (``bar_storage.py``'s database,
    daily candles beside them); returns the last bar's close time, epoch seconds."""
    bar_storage.fill(url, assets, days, with_volume=False)
    return int(FIRST_DAY.astype("datetime64[s]").astype(np.int64)) + days * 86_400


def measure(url: str, until: int, way: str) -> dict:  # type: ignore[type-arg]
    code = MEASURE.format(root=str(ROOT), url=url, until=until, way=way)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=500)
    parser.add_argument("--days", default="365,730")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    print(
        f"{'history':>10} {'bars':>12} | {'summary s':>9} {'MB':>6} | "
        f"{'every bar s':>11} {'MB':>6} | ratio s"
    )
    for days in [int(d) for d in args.days.split(",")]:
        with tempfile.TemporaryDirectory(prefix="pairscreen-assets-bench-") as tmp:
            url = f"sqlite:///{Path(tmp) / 'bars.sqlite3'}"
            started = time.perf_counter()
            until = fill(url, args.assets, days)
            print(
                f"  (filled {args.assets} x {days} days in {time.perf_counter() - started:.0f} s)"
            )
            summary = measure(url, until, "summary")
            every = measure(url, until, "every")
            if summary["rows"] != every["rows"]:
                raise SystemExit("the two ways disagree")
            print(
                f"{days:>6} days {args.assets * days * 24:>12,} | {summary['seconds']:>9.3f} "
                f"{summary['peak_mb']:>6.0f} | {every['seconds']:>11.3f} "
                f"{every['peak_mb']:>6.0f} | {every['seconds'] / summary['seconds']:>6.0f}x"
            )


if __name__ == "__main__":
    main()
