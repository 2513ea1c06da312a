"""Throughput of the built-in metric and strategy plugins against pairscan-rmr, side by side.

Builds a panel of 4,950 pairs x 900 days of random (mean-reverting and random-walk) ratios,
times every built-in metric plus both 360-day accumulation legs on it in one process (BLAS
limited to one thread, so "one process" means one core), then times pairscan-rmr's
``is_mean_reverting`` + ``current_signal`` + both ``walk_forward_backtest`` legs on a sample
of pairs, checks that the two agree on that sample, and prints pairs/s, the ratio, the peak
RSS, each metric's share of the time per pair, and the engine time of one live snapshot (a
panel of one pair). ``--processes 2`` also
runs the panel split across two worker processes (the screen's chunked executor does the
same).

    .venv/bin/python benchmarks/engine_speed.py [--pairs 4950] [--days 900] [--sample 20]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process = one core, BLAS included
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import importlib.util
import itertools
import multiprocessing
import statistics
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
if importlib.util.find_spec("pairscreen_plugins") is None:
    raise SystemExit("run from a pairscreen checkout")

from pairscreen_plugins.metrics import (  # noqa: E402
    bands,
    cointegration,
    correlation,
    half_life,
    mean_reversion,
    range_stats,
    volume,
)
from pairscreen_plugins.strategies import accumulation  # noqa: E402

from pairscreen import PairPanel  # noqa: E402

BT_DAYS = 360
METRICS = [
    m
    for mod in (bands, mean_reversion, range_stats, volume, half_life, cointegration, correlation)
    for m in mod.pairscreen_register_metrics()
]
STRATEGY = accumulation.AccumulationStrategy()


def build_panel(pairs: int, days: int, seed: int) -> PairPanel:
    """Half mean-reverting (AR(1) log-ratio), half random-walk ratios; legs with 4 % vol.

    Filled day by day into the final arrays, so building it needs no more memory than the
    panel itself (the peak RSS below is then the plugins' own).
    """
    rng = np.random.default_rng(seed)
    phi = np.where(np.arange(pairs) % 2 == 0, rng.uniform(0.9, 0.99, pairs), 1.0)
    vol = rng.uniform(0.03, 0.05, pairs)
    offset = rng.normal(0.0, 1.0, pairs)
    close_a = np.empty((pairs, days))
    close_b = np.empty((pairs, days))
    volume_a = np.empty((pairs, days))
    volume_b = np.empty((pairs, days))
    lr = rng.normal(0.0, 1.0, pairs) * vol
    log_b = np.full(pairs, np.log(30.0))
    for t in range(days):
        if t:
            lr = phi * lr + rng.normal(0.0, 1.0, pairs) * vol
            log_b += rng.normal(0.0, 0.04, pairs)
        close_b[:, t] = np.exp(log_b)
        close_a[:, t] = close_b[:, t] * np.exp(lr + offset)
        volume_a[:, t] = rng.lognormal(15, 0.5, pairs)
        volume_b[:, t] = rng.lognormal(15, 0.5, pairs)
    dates = np.tile(np.datetime64("2025-06-30") - np.arange(days)[::-1], (pairs, 1))
    names = tuple(f"P{i}" for i in range(pairs))
    return PairPanel(names, names, dates, close_a, close_b, volume_a, volume_b)


def run_plugins(panel: PairPanel) -> dict[str, np.ndarray]:
    """Every metric and both backtest legs: the per-pair work of a screen."""
    out: dict[str, np.ndarray] = {}
    for metric in METRICS:
        out.update(metric.compute(panel))
    for leg in ("A", "B"):
        batch = STRATEGY.run(panel, bt_days=BT_DAYS, start_leg=leg)
        out[f"growth_{leg}"] = batch.growth_pct
        out[f"trades_{leg}"] = batch.n_trades
    return out


def shares(panel: PairPanel, repeat: int) -> list[tuple[str, float]]:
    """Best-of-``repeat`` seconds of each metric and of both strategy legs, run in the
    screen's order on a fresh panel each time (the first metric pays for the log-ratio, the
    band metric for the percentiles it caches)."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        fresh = replace(panel)
        for metric in METRICS:
            t0 = time.perf_counter()
            metric.compute(fresh)
            elapsed = time.perf_counter() - t0
            best[metric.name] = min(best.get(metric.name, elapsed), elapsed)
        t0 = time.perf_counter()
        for leg in ("A", "B"):
            STRATEGY.run(fresh, bt_days=BT_DAYS, start_leg=leg)
        elapsed = time.perf_counter() - t0
        best["accumulation (both legs)"] = min(
            best.get("accumulation (both legs)", elapsed), elapsed
        )
    return list(best.items())


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: unlike ru_maxrss it does not inherit a parent's peak
    across fork + exec, so spawned workers report their own)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rows_worker(args: tuple[int, int, int, int, int]) -> tuple[float, float]:
    """One worker's share of the screen: its own rows only, built in the worker."""
    _, days, seed, start, stop = args
    panel = build_panel(stop - start, days, seed + start)
    t0 = time.perf_counter()
    run_plugins(panel)
    return time.perf_counter() - t0, peak_rss_mb()


def run_reference(panel: PairPanel, rows: np.ndarray) -> tuple[float, dict[int, dict[str, float]]]:
    import pairscan_rmr as rmr

    numbers: dict[int, dict[str, float]] = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in rows:
            a, b = panel.close_a[i], panel.close_b[i]
            verdict = rmr.is_mean_reverting(a[-540:], b[-540:])
            signal = rmr.current_signal(np.log(a / b)[-541:])
            legs = [
                rmr.walk_forward_backtest(x[-900:], y[-900:], lookback_days=540)
                for x, y in ((a, b), (b, a))
            ]
            numbers[int(i)] = {
                "adf_pvalue": verdict.adf_pvalue,
                "range_width": verdict.range_width,
                "touches_low": verdict.low_touches,
                "touches_high": verdict.high_touches,
                "position": signal.position,
                "growth_A": 100 * (legs[0].final_value_in_a / 100 - 1),
                "growth_B": 100 * (legs[1].final_value_in_a / 100 - 1),
                "trades_A": legs[0].n_trades,
                "trades_B": legs[1].n_trades,
            }
    return time.perf_counter() - t0, numbers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4950)
    parser.add_argument("--days", type=int, default=900)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--processes", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    panel = build_panel(args.pairs, args.days, args.seed)
    rss_before = peak_rss_mb()
    sample = np.linspace(0, args.pairs - 1, args.sample).astype(int)
    # Interleaved, best of each: both sides see the same machine (other load comes and goes).
    times, ref_times = [], []
    for _ in range(args.repeat):
        fresh = replace(panel)  # no cached log-ratios or bands between runs
        t0 = time.perf_counter()
        ours = run_plugins(fresh)
        times.append(time.perf_counter() - t0)
        del fresh
        ref_time, ref = run_reference(panel, sample)
        ref_times.append(ref_time)
    rss_peak = peak_rss_mb()
    best = min(times)
    ref_time = min(ref_times)
    mismatches = [
        (int(i), field)
        for i in sample
        for field, value in ref[int(i)].items()
        if not (
            ours[field][i] == value
            or (field == "adf_pvalue" and abs(ours[field][i] - value) <= 1e-9)
        )
    ]

    ours_rate = args.pairs / best
    ref_rate = args.sample / ref_time
    print(f"panel: {args.pairs} pairs x {args.days} days, bt = {BT_DAYS}, both legs, all metrics")
    runs = ", ".join(f"{t:.2f}" for t in times)
    print(f"plugins, one process: {best:.2f} s best of {args.repeat} ({runs})")
    print(f"  -> {ours_rate:,.0f} pairs/s")
    ref_runs = ", ".join(f"{t:.2f}" for t in ref_times)
    print(
        f"pairscan-rmr, {args.sample} pairs: {ref_time:.2f} s best of {args.repeat} ({ref_runs})"
        f" -> {ref_rate:.2f} pairs/s"
    )
    print(f"ratio (per pair, one process each, best vs best): {ours_rate / ref_rate:,.0f}x")
    print(f"identical numbers on the sample: {mismatches or 'yes'}")
    print(
        f"peak RSS of this process: {rss_peak:.0f} MB (panel and imports {rss_before:.0f} MB; "
        "pairscan-rmr's runs and statsmodels included)"
    )
    parts = shares(panel, args.repeat)
    total = sum(t for _, t in parts)
    print("time per pair by plugin (one process, best of each):")
    for name, seconds in parts:
        print(
            f"  {name:<26} {1e6 * seconds / args.pairs:8.1f} us/pair  "
            f"{100 * seconds / total:5.1f} %"
        )
    print(f"  {'total':<26} {1e6 * total / args.pairs:8.1f} us/pair")
    one_pair = build_panel(1, args.days, args.seed)
    snapshot_ms = []
    for _ in range(50):
        fresh = replace(one_pair)
        t0 = time.perf_counter()
        run_plugins(fresh)
        snapshot_ms.append((time.perf_counter() - t0) * 1000)
    print(
        f"one /pair computation (a panel of one pair, every metric, both legs): "
        f"median {statistics.median(snapshot_ms):.2f} ms of 50 (target <= 5 ms)"
    )
    spawn = multiprocessing.get_context("spawn")  # fresh workers: their RSS is their own
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        alone, alone_rss = pool.submit(
            _rows_worker, (args.pairs, args.days, args.seed, 0, args.pairs)
        ).result()
    print(
        f"the screen alone in a fresh process: {alone:.2f} s, peak RSS {alone_rss:.0f} MB "
        "(panel included)"
    )

    if args.processes > 1:
        bounds = np.linspace(0, args.pairs, args.processes + 1).astype(int)
        jobs = [
            (args.pairs, args.days, args.seed, int(lo), int(hi))
            for lo, hi in itertools.pairwise(bounds)
        ]
        with ProcessPoolExecutor(args.processes, mp_context=spawn) as pool:
            list(pool.map(_rows_worker, jobs))  # warm-up: imports, page faults
            t0 = time.perf_counter()
            results = list(pool.map(_rows_worker, jobs))
            wall = time.perf_counter() - t0
        compute = max(r[0] for r in results)
        worker_rss = max(r[1] for r in results)
        print(
            f"{args.processes} processes: {args.pairs / compute:,.0f} pairs/s "
            f"(slowest worker's compute {compute:.2f} s; wall incl. panel build {wall:.2f} s), "
            f"peak worker RSS {worker_rss:.0f} MB"
        )


if __name__ == "__main__":
    main()
