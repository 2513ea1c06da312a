"""Time of ``pairscreen evaluate --every 1`` with both outcomes on a 1,326-pair universe (52
assets), measured on a few as-of days and extrapolated to 1,000.

Writes the factor-model universe of ``evaluate_speed.py`` (52 assets in one sector), syncs it
into a fresh SQLite database, then times on the same ``--days`` consecutive as-of days and
horizons 30 and 90, with the screen's rules and each rule left out (as the CLI runs them):

* ``--outcome reversion`` (the replay of the verdicts and the forward moves);
* ``--outcome strategy`` (the same, plus the strategy traded from every day for every in-zone
  pair);
* ``--outcome strategy --portfolio 10 --max-per-asset 3`` (plus the picks and 200 null draws).

The as-of days cost about the same each (every day screens the same pairs), but the first one
also replays the 6 days before it (the persistence rule's previous screens; later days reuse
them): so each configuration runs on 2 days and on all ``--days``, and the figure for 1,000
days is the 2-day time plus 998 times the cost of a further day. The machine line says on
what (the machine is shared: its load average is printed).

    .venv/bin/python benchmarks/evaluate_outcomes_speed.py [--assets 52] [--days 10]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""

import argparse
import platform
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins", ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from evaluate_speed import LAST_DAY, write_universe  # noqa: E402

from pairscreen.bootstrap import build_runtime  # noqa: E402
from pairscreen.config import load_settings  # noqa: E402
from pairscreen.db.connection import database  # noqa: E402
from pairscreen.evaluation.dates import as_of_dates  # noqa: E402
from pairscreen.evaluation.portfolio import PortfolioSpec  # noqa: E402
from pairscreen.evaluation.rule_sets import rule_sets  # noqa: E402
from pairscreen.evaluation.run import evaluate  # noqa: E402
from pairscreen.evaluation.verdicts import Market  # noqa: E402
from pairscreen.market.sync import sync_candles  # noqa: E402
from pairscreen.pegs.status import active_depegs  # noqa: E402

HORIZONS = (30, 90)
TARGET_DAYS = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=52)
    parser.add_argument("--days", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pairscreen-outcomes-bench-") as tmp:
        folder = Path(tmp)
        defaults = load_settings()
        n_days = defaults.window_days + args.days + max(HORIZONS) + 30
        universe = write_universe(folder, args.assets, n_days)
        settings = load_settings(
            data_dir=folder, database_url=f"sqlite:///{folder / 'bench.sqlite3'}", universe=universe
        )
        rt = build_runtime(settings)
        sync_candles(rt.universe, rt.plugins)
        with database.connection_context():
            run(rt, args)


def run(rt, args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    settings = rt.settings
    last = LAST_DAY - timedelta(days=max(HORIZONS))
    dates = as_of_dates(last - timedelta(days=args.days - 1), last, 1)
    strategy = rt.plugins.strategies.get(settings.strategy)
    sets = rule_sets(rt.plugins, rt.universe, [])
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}; {len(dates)} as-of days every 1 day, horizons "
        f"{','.join(map(str, HORIZONS))}, {len(sets)} rule sets, strategy {strategy.name}"
    )
    for label, extra in (
        ("reversion", {}),
        ("strategy", {"outcome": "strategy"}),
        ("strategy + portfolio 10/3", {"outcome": "strategy", "portfolio": PortfolioSpec(10, 3)}),
    ):
        market = Market.of(
            rt.universe,
            rt.candles.get(),
            window_days=settings.window_days,
            min_history_days=settings.min_history_days,
            scorer=settings.scorer if "portfolio" in extra else None,
        )
        took = {}
        for n in (2, len(dates)):  # the difference leaves out what does not grow with days
            started = time.perf_counter()
            evaluate(
                rt.plugins,
                market,
                sets,
                dates[:n],
                HORIZONS,
                every_days=1,
                fee=float(getattr(strategy, "fee", 0.0)),
                depegs_at=active_depegs,
                costs=rt.universe.costs,
                strategy=strategy,
                **extra,  # type: ignore[arg-type]
            )
            took[n] = time.perf_counter() - started
        per_day = (took[len(dates)] - took[2]) / (len(dates) - 2)
        print(
            f"{label:<26} {len(market.pairs)} pairs: {took[len(dates)]:6.1f} s for "
            f"{len(dates)} days, {took[2]:.1f} s for 2; {per_day:.2f} s per further as-of day "
            f"-> {(took[2] + per_day * (TARGET_DAYS - 2)) / 60:.1f} min for {TARGET_DAYS} days"
        )


if __name__ == "__main__":
    main()
