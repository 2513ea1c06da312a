"""What the pair-trading metrics cost the screen, side by side.

Runs the screen's unit of work (``evaluate_chunk``: metrics, the ``default`` filter, score and
both backtest legs of the survivors) over a 4,950 x 900-day panel in chunks of 250, in one
process (BLAS on one thread), three ways:

* every metric on every pair (the screen before descriptive metrics were deferred);
* this engine: the metrics no active rule reads (the pair-trading ones, ``hurst_rs``,
  ``volume``) on the survivors only;
* without the three pair-trading metrics at all (the screen before they existed).

Then each metric alone on every pair (its ``compute`` over the same chunks), and both backtest
legs of each built-in strategy over 360 days, in microseconds per pair.

Then the cointegration tests alone, per pair, on the same panel: one Engle-Granger order (the
metric before it was symmetric), both orders, the Johansen trace test (its own metric, run on
the survivors alone), and the whole ``cointegration`` metric (both orders, run on every tested
pair since its p-value gets a q-value); and the Benjamini-Hochberg q-values of 2,000,000
p-values (the screen's second stage).

``--calendar trading`` keeps only the weekdays of the 900 calendar days (about 643 closes),
as for crypto x equity pairs: every window is then a calendar span holding fewer closes than
days, and the backtest's bands differ in length from day to day (the ragged path).

    .venv/bin/python benchmarks/metric_cost.py [--pairs 4950] [--repeat 3] [--calendar trading]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process = one core, BLAS included
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("PAIRSCREEN_LOAD_PLUGINS", "")  # the built-ins only

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins", ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from engine_speed import build_panel  # noqa: E402

from pairscreen import Filter, Metric, PairPanel, Strategy  # noqa: E402
from pairscreen.config import load_settings  # noqa: E402
from pairscreen.engine import screen_chunks  # noqa: E402
from pairscreen.engine.filtering import FilterChoice  # noqa: E402
from pairscreen.plugin_system.loader import load_plugins  # noqa: E402
from pairscreen.plugin_system.registry import Plugins  # noqa: E402

CHUNK = 250
NEW = {"half_life", "cointegration", "return_correlation"}
Split = Callable[[Plugins, Filter, object], tuple[list[Metric], list[Metric]]]


def jobs(panel: PairPanel, choice: FilterChoice) -> list[screen_chunks.ChunkJob]:
    out = []
    for start in range(0, panel.n_pairs, CHUNK):
        sub = panel.rows(np.arange(start, min(start + CHUNK, panel.n_pairs)))
        out.append(
            screen_chunks.ChunkJob(
                sub,
                np.full(sub.n_pairs, int(sub.day_offsets[0]) + 1),  # calendar days of history
                np.zeros(sub.n_pairs, dtype=bool),
                choice,
                "accumulation",
                "score",
                360,
            )
        )
    return out


def weekdays(panel: PairPanel) -> PairPanel:
    """The panel without its Saturdays and Sundays (an exchange's calendar)."""
    day = panel.dates[0].astype("datetime64[D]").astype(np.int64)
    keep = (day - 4) % 7 < 5  # 1970-01-05 was a Monday
    return replace(
        panel,
        dates=panel.dates[:, keep],
        close_a=panel.close_a[:, keep],
        close_b=panel.close_b[:, keep],
        volume_a=panel.volume_a[:, keep],
        volume_b=panel.volume_b[:, keep],
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4950)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calendar", choices=("daily", "trading"), default="daily")
    args = parser.parse_args(argv)
    settings = load_settings()
    plugins = Plugins(load_plugins(settings), settings)
    default = plugins.filters.get("default")
    choice = FilterChoice("default", MappingProxyType(dict(default.thresholds)))
    panel = build_panel(args.pairs, 900, 1)
    if args.calendar == "trading":
        panel = weekdays(panel)
    deferred = screen_chunks.split_metrics

    def everything(p: Plugins, f: Filter, t: object) -> tuple[list[Metric], list[Metric]]:
        deciding, describing = deferred(p, f, t)  # type: ignore[arg-type]
        return deciding + describing, []

    def without_new(p: Plugins, f: Filter, t: object) -> tuple[list[Metric], list[Metric]]:
        deciding, describing = deferred(p, f, t)  # type: ignore[arg-type]
        return [m for m in deciding + describing if m.name not in NEW], []

    ways: list[tuple[str, Split]] = [
        ("every metric on every pair", everything),
        ("this engine (descriptive metrics on survivors)", deferred),  # type: ignore[list-item]
        ("without the pair-trading metrics", without_new),
    ]
    print(
        f"{args.pairs} pairs x 900 days ({panel.n_days} closes, {args.calendar}), "
        f"chunks of {CHUNK}, one process, best of {args.repeat}"
    )
    for label, split in ways:
        screen_chunks.split_metrics = split  # type: ignore[assignment]
        best = float("inf")
        for _ in range(args.repeat):
            work = jobs(panel, choice)
            t0 = time.perf_counter()
            results = [screen_chunks.evaluate_chunk(plugins, job) for job in work]
            best = min(best, time.perf_counter() - t0)
        survivors = sum(r.survivors.size for r in results)
        print(
            f"  {label:<48} {1e6 * best / args.pairs:6.0f} us/pair  "
            f"{args.pairs / best:8,.0f} pairs/s  ({survivors} survivors)"
        )
    screen_chunks.split_metrics = deferred
    per_metric(plugins, panel, args.repeat)
    per_strategy(plugins, panel, args.repeat)
    cointegration_cost(panel, args.repeat)


def _best_per_pair(run: Callable[[PairPanel], object], panel: PairPanel, repeat: int) -> float:
    """Best of ``repeat`` runs of ``run`` over every chunk of fresh panels, in µs per pair."""
    best = float("inf")
    for _ in range(repeat):
        chunks = [
            panel.rows(np.arange(start, min(start + CHUNK, panel.n_pairs)))
            for start in range(0, panel.n_pairs, CHUNK)
        ]
        t0 = time.perf_counter()
        for chunk in chunks:
            run(chunk)
        best = min(best, time.perf_counter() - t0)
    return 1e6 * best / panel.n_pairs


def per_metric(plugins: Plugins, panel: PairPanel, repeat: int) -> None:
    print("each metric alone on every pair (a fresh panel per chunk: no shared cache)")
    for metric in plugins.metrics:
        cost = _best_per_pair(metric.compute, panel, repeat)
        print(f"  {metric.name:<48} {cost:6.1f} us/pair")


def per_strategy(plugins: Plugins, panel: PairPanel, repeat: int) -> None:
    print("both backtest legs, 360 days")
    for name in plugins.strategies.items:
        strategy = plugins.strategies.get(name)

        def legs(chunk: PairPanel, strategy: Strategy = strategy) -> None:
            for leg in ("A", "B"):
                strategy.run(chunk, bt_days=360, start_leg=leg)  # type: ignore[arg-type]

        print(f"  {name:<48} {_best_per_pair(legs, panel, repeat):6.1f} us/pair")


def cointegration_cost(panel: PairPanel, repeat: int) -> None:
    """Per-pair cost of the cointegration tests, in chunks of ``CHUNK`` as the screen runs them."""
    from pairscreen_plugins.metrics._log_prices import window_logs
    from pairscreen_plugins.metrics.cointegration import CointegrationMetric, engle_granger
    from pairscreen_plugins.metrics.johansen import johansen_trace

    from pairscreen.engine.fdr import QValues

    chunks = [
        panel.rows(np.arange(start, min(start + CHUNK, panel.n_pairs)))
        for start in range(0, panel.n_pairs, CHUNK)
    ]
    logs = [window_logs(chunk) for chunk in chunks]
    metric = CointegrationMetric()
    parts: list[tuple[str, Callable[[], object]]] = [
        ("one Engle-Granger order (A on B)", lambda: [engle_granger(a, b) for a, b in logs]),
        (
            "both Engle-Granger orders",
            lambda: [(engle_granger(a, b), engle_granger(b, a)) for a, b in logs],
        ),
        ("Johansen trace", lambda: [johansen_trace(a, b) for a, b in logs]),
        ("the cointegration metric (all of it)", lambda: [metric.compute(c) for c in chunks]),
    ]
    print("cointegration tests alone, per pair:")
    for label, run in parts:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t0)
        print(f"  {label:<48} {1e6 * best / panel.n_pairs:6.0f} us/pair")
    pvalues = np.random.default_rng(0).uniform(size=2_000_000)
    t0 = time.perf_counter()
    table = QValues.of(pvalues)
    table.lookup(pvalues[:100_000])
    print(
        f"  BH q-values of 2,000,000 p-values (+ 100,000 lookups) {time.perf_counter() - t0:.2f} s"
    )


if __name__ == "__main__":
    main()
