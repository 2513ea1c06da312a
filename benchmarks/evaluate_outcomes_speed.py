"""Time of ``pairscreen evaluate --every 1`` with both outcomes on a 1,326-pair universe (52
assets): a real run of ``--days`` consecutive as-of days, the figure for 1,000 days
extrapolated from it beside, or measured with ``--full``.

Writes the factor-model universe of ``evaluate_speed.py`` (52 assets in one sector), syncs it
into a fresh SQLite database, then times, with horizons 30 and 90, the screen's rules and
each rule left out (as the CLI runs them), on ``--processes`` workers (0: one per core, the
CLI's default):

* ``--outcome reversion`` (the replay of the verdicts and the forward moves);
* ``--outcome strategy`` (the same, plus the strategy traded from every day for every in-zone
  pair);
* ``--outcome strategy --portfolio 10 --max-per-asset 3`` (plus the picks and 200 null draws).

The as-of days cost about the same each (every day screens the same pairs), so each
configuration runs on ``--days`` / 2 and on ``--days`` days; the difference is the cost of
a further day, and the figure for 1,000 days is the longer run plus that cost for each day
left. With ``--full`` the 1,000 days are run and measured instead. Each run's ``evaluate
--json`` body is printed as a digest, so two versions of the code can be compared for
identical results. The machine line says on what (the machine may be shared: its load
average is printed before and after).

    .venv/bin/python benchmarks/evaluate_outcomes_speed.py [--days 100] [--full] [--processes 0]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""

import argparse
import hashlib
import json
import sys
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins", ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import generated_runtime, machine_line, timed_evaluate  # noqa: E402
from evaluate_speed import LAST_DAY, write_universe  # noqa: E402

from pairscreen.config import load_settings  # noqa: E402
from pairscreen.evaluation.dates import as_of_dates  # noqa: E402
from pairscreen.evaluation.portfolio import PortfolioSpec  # noqa: E402
from pairscreen.evaluation.report import as_json  # noqa: E402
from pairscreen.evaluation.rule_sets import rule_sets  # noqa: E402

HORIZONS = (30, 90)
TARGET_DAYS = 1000
CONFIGURATIONS: dict[str, dict[str, object]] = {
    "reversion": {},
    "strategy": {"outcome": "strategy"},
    "strategy + portfolio 10/3": {"outcome": "strategy", "portfolio": PortfolioSpec(10, 3)},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=52)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--full", action="store_true", help=f"run all {TARGET_DAYS} days")
    parser.add_argument("--processes", type=int, default=0)
    parser.add_argument("--only", choices=list(CONFIGURATIONS), action="append")
    args = parser.parse_args()
    longest = TARGET_DAYS if args.full else args.days
    n_days = load_settings().window_days + longest + max(HORIZONS) + 30
    with generated_runtime("outcomes", lambda f: write_universe(f, args.assets, n_days)) as rt:
        run(rt, args, longest)


def run(rt, args: argparse.Namespace, longest: int) -> None:  # type: ignore[no-untyped-def]
    last = LAST_DAY - timedelta(days=max(HORIZONS))
    dates = as_of_dates(last - timedelta(days=longest - 1), last, 1)
    sets = rule_sets(rt.plugins, rt.universe, [])
    print(machine_line())
    print(
        f"{len(rt.universe.assets)} assets, as-of days every 1 day up to {last}, horizons "
        f"{','.join(map(str, HORIZONS))}, {len(sets)} rule sets, strategy "
        f"{rt.settings.strategy}, processes {args.processes or os.cpu_count()}",
        flush=True,
    )
    for label in args.only or CONFIGURATIONS:
        options = {**CONFIGURATIONS[label], "processes": args.processes}
        runs = (longest,) if args.full else (longest // 2, longest)
        took, digest, pairs = {}, "", 0
        for n in runs:
            took[n], result = timed_evaluate(rt, sets, dates[-n:], HORIZONS, 1, **options)
            body = json.dumps(as_json(result), allow_nan=False, sort_keys=True)
            digest, pairs = hashlib.sha256(body.encode()).hexdigest()[:16], result.n_pairs
        load = f"load {os.getloadavg()[0]:.2f}"
        if args.full:
            print(
                f"{label:<26} {pairs} pairs: {took[longest] / 60:5.1f} min measured for "
                f"{longest} days ({took[longest] / longest:.3f} s a day), {load}; json {digest}",
                flush=True,
            )
            continue
        half = longest // 2
        per_day = (took[longest] - took[half]) / (longest - half)
        whole = took[longest] + per_day * (TARGET_DAYS - longest)
        print(
            f"{label:<26} {pairs} pairs: {took[longest]:6.1f} s for {longest} days, "
            f"{took[half]:.1f} s for {half}; {per_day:.3f} s per further day -> "
            f"{whole / 60:.1f} min for {TARGET_DAYS} days, {load}; json {digest}",
            flush=True,
        )


if __name__ == "__main__":
    main()
