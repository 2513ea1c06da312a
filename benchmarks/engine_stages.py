"""Where the engine's time per pair goes, stage by stage, this checkout against a baseline.

Builds the synthetic universe of ``benchmarks/scale.py`` in memory (``--assets`` assets,
1,100 days, the closes rounded as its csv files write them), takes ``--blocks`` evenly spaced
blocks of 2,000 of its screened pairs, cuts them into the tasks each checkout's screen hands
a worker (its ``CHUNK_PAIRS``), and runs them through the screen's worker code in one
process (BLAS on one thread, so one process is one core), in fresh processes: one with the
pinned ``--baseline`` commit (its tree extracted with ``git archive``), one with this
checkout, alternated over ``--rounds`` rounds so that a busy spell of a shared machine
slows both, and each cost kept at its lowest. Each process prints, per screened pair, in
core (CPU) microseconds:

* ``whole``: ``evaluate_pairs``, the worker's unit of work, end to end (best of ``--repeat``);
* the same work stage by stage: alignment (calendar matrix to panels), each metric that
  decides survival on every pair, the filter, each descriptive metric on the survivors,
  both backtest legs on the survivors, the score, serialisation (the survivors' JSON);
* ``floor``: the bare numpy work each pair needs, batched over the chunk: both legs' logs
  and the log-ratio, one sort of its band window, the cross products of the two
  Engle-Granger regressions and the lag products (one row of its Gram matrix) of each of
  the three ADF fits (the ratio's and both residuals');

then both side by side with the ratio, the engine's ratio to the floor, and whether every
number is bit-identical (a digest of every published byte of the chunks: metrics, p-values,
scores, both legs, the survivors' JSON).

With ``--without PLUGIN`` the two sides are this checkout without that plugin
(``PAIRSCREEN_DISABLE_PLUGINS``) and with it, instead of the baseline and this: the plugin's
metric is then its own stage on one side, and the last lines say what it adds to the whole
core time per pair; the numbers both sides publish for every pair must be bit-identical.
``--kalman-fit mle`` runs the ``kalman`` metric with ``fit = "mle"``.

    .venv/bin/python benchmarks/engine_stages.py [--assets 1000] [--blocks 5] [--repeat 3]
                                                 [--rounds 3]
                                                 [--baseline 91d0fd2 | --without PLUGIN]
                                                 [--kalman-fit fixed|mle]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process = one core, BLAS included
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("PAIRSCREEN_LOAD_PLUGINS", "")  # the built-ins only

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "91d0fd2"  # main before the engine work of issue 26
BLOCK = 4000  # pairs sampled together (the largest task of either checkout)
DAYS = 1100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5, help="blocks of 4,000 pairs timed")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="runs of both checkouts, alternated (a busy moment hits both), best kept",
    )
    parser.add_argument("--baseline", default=BASELINE, help="commit to compare with")
    parser.add_argument(
        "--without",
        metavar="PLUGIN",
        help="compare this checkout without this plugin to this checkout with it",
    )
    parser.add_argument(
        "--kalman-fit", choices=("fixed", "mle"), default="fixed", help="the kalman fit option"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the checkout a child measures
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.assets, args.blocks, args.repeat, args.kalman_fit)))
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _harness import machine_line

    print(machine_line())
    print(
        f"{args.assets} assets x {DAYS} days (benchmarks/scale.py's universe), "
        f"{args.blocks} blocks of {BLOCK} pairs, one process each, best of {args.repeat} "
        f"passes in each of {args.rounds} alternated rounds"
    )
    if args.without:
        runs = [
            (run_child(ROOT, args, disabled=args.without), run_child(ROOT, args))
            for _ in range(args.rounds)
        ]
        without = best_of([b for b, _ in runs])
        report_plugin(args.without, without, best_of([a for _, a in runs]))
        return
    with tempfile.TemporaryDirectory(prefix="pairscreen-baseline-") as tmp:
        baseline = Path(tmp)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        runs = [(run_child(baseline, args), run_child(ROOT, args)) for _ in range(args.rounds)]
    before = best_of([b for b, _ in runs])
    after = best_of([a for _, a in runs])
    report(args.baseline, before, after)


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One checkout's runs as one: each cost at its lowest (the run least disturbed by the
    rest of the machine); the numbers must be the same in every run."""
    if len({(r["digest"], json.dumps(r["fields"], sort_keys=True)) for r in runs}) != 1:
        raise SystemExit("one checkout gave different numbers in two runs")
    best = dict(runs[0])
    best["stages"] = {k: min(r["stages"][k] for r in runs) for k in runs[0]["stages"]}
    best["stage sum"] = sum(best["stages"].values())
    for key in ("whole", "floor"):
        best[key] = min(r[key] for r in runs)
    return best


def run_child(root: Path, args: argparse.Namespace, disabled: str = "") -> dict[str, Any]:
    """This script's measurement in a fresh process importing the code under ``root``, with
    the plugin ``disabled`` switched off."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "plugins")])}
    if disabled:
        env["PAIRSCREEN_DISABLE_PLUGINS"] = disabled
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(root)]
    cmd += ["--assets", str(args.assets), "--blocks", str(args.blocks)]
    cmd += ["--repeat", str(args.repeat), "--kalman-fit", args.kalman_fit]
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def report(commit: str, before: dict[str, Any], after: dict[str, Any]) -> None:
    pairs, survivors = after["pairs"], after["survivors"]
    print(
        f"{pairs} pairs, {survivors} survivors, tasks of {before['task']} (baseline) and "
        f"{after['task']} (this) pairs; core us per screened pair"
    )
    print(f"  {'stage':<34} {'baseline':>9} {'this':>9} {'ratio':>7}")
    for name, cost in after["stages"].items():
        old = before["stages"].get(name, float("nan"))
        print(f"  {name:<34} {old:9.1f} {cost:9.1f} {old / cost if cost else 0:7.2f}")
    for name in ("stage sum", "whole"):
        old, new = before[name], after[name]
        print(f"  {name:<34} {old:9.1f} {new:9.1f} {old / new:7.2f}")
    print(
        f"  {'floor (bare numpy)':<34} {before['floor']:9.1f} {after['floor']:9.1f}   "
        f"engine / floor: baseline {before['whole'] / before['floor']:.1f}x, "
        f"this {after['whole'] / after['floor']:.1f}x"
    )
    print(
        f"whole per core: baseline {1e6 / before['whole']:,.0f} pairs/s, "
        f"this {1e6 / after['whole']:,.0f} pairs/s (baseline {commit}: {before['code']})"
    )
    # Every pair's deciding metrics, on the fields both checkouts compute for every pair.
    common = sorted(set(before["fields"]) & set(after["fields"]))
    for side in (before, after):
        whole = hashlib.sha256(side["digest"].encode())
        for name in common:
            whole.update(side["fields"][name].encode())
        side["digest"] = whole.hexdigest()
    only = sorted(set(before["fields"]) ^ set(after["fields"]))
    if only:
        print(f"every pair's in one checkout only (survivors' compared): {', '.join(only)}")
    same = before["digest"] == after["digest"]
    print(f"bit-identical to the baseline: {'yes' if same else 'NO'} ({after['digest'][:16]})")
    if not same:
        raise SystemExit("the numbers differ from the baseline's")


def report_plugin(plugin: str, without: dict[str, Any], with_: dict[str, Any]) -> None:
    """Both sides of ``--without``, stage by stage, and what the plugin adds per pair."""
    print(
        f"{with_['pairs']} pairs, {with_['survivors']} survivors, tasks of {with_['task']} "
        f"pairs; core us per screened pair, without and with {plugin}"
    )
    print(f"  {'stage':<34} {'without':>9} {'with':>9} {'ratio':>7}")
    for name in [*with_["stages"], *(n for n in without["stages"] if n not in with_["stages"])]:
        old, new = without["stages"].get(name), with_["stages"].get(name)
        shown = [f"{v:9.1f}" if v is not None else f"{'-':>9}" for v in (old, new)]
        ratio = f"{new / old:7.2f}" if old and new is not None else f"{'-':>7}"
        print(f"  {name:<34} {shown[0]} {shown[1]} {ratio}")
    for name in ("stage sum", "whole"):
        old, new = without[name], with_[name]
        print(f"  {name:<34} {old:9.1f} {new:9.1f} {new / old:7.2f}")
    added = with_["whole"] / without["whole"] - 1
    print(f"{plugin} adds {100 * added:.1f} % to the whole core time per screened pair")
    own = sum(v for k, v in with_["stages"].items() if k not in without["stages"])
    print(
        f"its own stage: {own:.1f} us per screened pair, {100 * own / without['whole']:.1f} % "
        f"of the whole without it; {own * with_['pairs'] / max(with_['survivors'], 1):.1f} us "
        "per survivor it runs on"
    )
    common = sorted(set(without["fields"]) & set(with_["fields"]))
    same = all(without["fields"][n] == with_["fields"][n] for n in common)
    same &= without["survivors"] == with_["survivors"]
    print(
        f"every pair's deciding numbers and the survivors bit-identical without and with it: "
        f"{'yes' if same else 'NO'}"
    )
    if not same:
        raise SystemExit("the plugin changed numbers it should not touch")


# --------------------------------------------------------------------------- the child


def synthetic_candles(n_assets: int, folder: Path) -> tuple[dict[str, Any], str]:
    """The scale universe's candles as its csv files (in ``folder``) hold them, and its
    universe.toml."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import numpy as np
    from scale import write_universe

    from pairscreen import Candles

    universe = write_universe(folder, n_assets, DAYS)
    candles = {}
    for path in sorted((folder / "prices").glob("*.csv")):
        rows = path.read_text().split()[1:]
        cols = list(zip(*(row.split(",") for row in rows), strict=True))
        candles[path.stem] = Candles(
            path.stem,
            np.array(cols[0], dtype="datetime64[D]"),
            np.array([float(v) for v in cols[1]]),
            np.array([float(v) for v in cols[2]]),
        )
    return candles, str(universe)


def measure(n_assets: int, n_blocks: int, repeat: int, kalman_fit: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pairscreen-stages-") as tmp:
        return _measure(n_assets, n_blocks, repeat, Path(tmp), kalman_fit)


def _measure(
    n_assets: int, n_blocks: int, repeat: int, folder: Path, kalman_fit: str
) -> dict[str, Any]:
    import numpy as np

    candles, universe_path = synthetic_candles(n_assets, folder)
    if kalman_fit != "fixed" and "kalman" not in os.environ.get("PAIRSCREEN_DISABLE_PLUGINS", ""):
        with open(universe_path, "a", encoding="utf-8") as universe:
            table = "[plugins.kalman]"
            universe.write(f'\n{table}\nfit = "{kalman_fit}"\n')
    os.environ["PAIRSCREEN_UNIVERSE"] = universe_path
    import pairscreen
    from pairscreen.bootstrap import check_setup
    from pairscreen.config import load_settings
    from pairscreen.engine.allocator import reuse_large_blocks
    from pairscreen.engine.calendar import CandleMatrix
    from pairscreen.engine.filtering import choose_filter
    from pairscreen.screening.pair_chunks import ScreenSpec, evaluate_pairs
    from pairscreen.screening.screen import CHUNK_PAIRS, SCREEN_BT_DAYS

    reuse_large_blocks()  # as every screen worker does before its first chunk (both checkouts)
    settings = load_settings()
    plugins, universe = check_setup(settings)[:2]  # later checkouts add the filter choice
    try:  # the strategy and scorer the universe's [components] (or the built-ins) choose
        from pairscreen.component_choice import choose_components

        settings = choose_components(settings, universe)
    except ImportError:  # a checkout from before [components] named them in the settings
        pass
    assets = tuple(universe.assets)
    matrix = CandleMatrix.of(candles, [a.ticker for a in assets])
    spec = ScreenSpec(
        matrix=matrix,
        assets=assets,
        depegs=tuple(() for _ in assets),
        screen_filter=choose_filter(plugins, universe),
        strategy=settings.strategy,
        scorer=settings.scorer,
        bt_days=SCREEN_BT_DAYS,
        window_days=settings.window_days,
        min_history_days=settings.min_history_days,
        costs=universe.costs,
    )
    ia, ib = universe.screened_pair_indices()
    step = max(ia.shape[0] // n_blocks, BLOCK)
    starts = range(0, ia.shape[0], step)[:n_blocks]
    tasks = [
        (ia[s : s + CHUNK_PAIRS], ib[s : s + CHUNK_PAIRS])
        for block in starts
        for s in range(block, min(block + BLOCK, ia.shape[0]), CHUNK_PAIRS)
    ]
    pairs = sum(int(t[0].shape[0]) for t in tasks)
    evaluate_pairs(plugins, spec, tasks[0])  # warm-up: lazy imports, first-call costs
    whole = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        outcomes = [evaluate_pairs(plugins, spec, task) for task in tasks]
        whole = min(whole, time.process_time() - t0)
    # Whatever the tasks' size: the counts summed, each p-value family and the survivors
    # sorted, every pair's deciding metrics in pair order.
    digest = hashlib.sha256()
    rejected: Counter[str] = Counter()
    for outcome in outcomes:
        rejected.update(outcome.rejected)
    digest.update(json.dumps(sorted(rejected.items())).encode())
    unpack = survivor_unpacker()
    for name in sorted(outcomes[0].pvalues):
        family = np.concatenate([part for o in outcomes for part in o.pvalues[name]])
        digest.update(name.encode() + np.sort(family).tobytes())
    for entry in sorted(entry for o in outcomes for entry in o.survivors):
        digest.update(same_spelling(unpack(entry[3])) + repr(entry[:3] + entry[4:]).encode())
    stages: dict[str, float] = {}
    best_stages: dict[str, float] = {}
    per_pair: dict[str, list[tuple[int, int, bytes]]] = {}
    for _ in range(repeat):
        stages.clear()
        stage_pass(plugins, spec, tasks, stages, per_pair if not best_stages else None)
        for name, seconds in stages.items():
            best_stages[name] = min(best_stages.get(name, float("inf")), seconds)
    # Per field, so that a field one checkout computes for every pair and the other for the
    # survivors alone (then in their JSON above) is compared where both have it.
    fields = {
        name: hashlib.sha256(name.encode() + b"".join(v for _, _, v in sorted(values))).hexdigest()
        for name, values in sorted(per_pair.items())
    }
    survivors = sum(len(o.survivors) for o in outcomes)
    costs = {name: 1e6 * s / pairs for name, s in best_stages.items()}
    return {
        "code": str(Path(pairscreen.__file__).resolve().parents[1]),
        "task": CHUNK_PAIRS,
        "pairs": pairs,
        "survivors": survivors,
        "whole": 1e6 * whole / pairs,
        "stages": costs,
        "stage sum": sum(costs.values()),
        "floor": 1e6 * floor(spec, tasks, repeat) / pairs,
        "digest": digest.hexdigest(),
        "fields": fields,
    }


def survivor_unpacker() -> Callable[[bytes], bytes]:
    """How the checkout under measure packs a survivor, undone: zstd since issue 26's
    serialisation work (``screening/`` then ``screen_store/``), zlib before."""
    import importlib

    for where in ("pairscreen.screen_store.survivor_blobs", "pairscreen.screening.survivor_blobs"):
        try:  # the module moved from screening/ to screen_store/ with issue 34
            codec = importlib.import_module(where).SurvivorCodec()
            break
        except ImportError:
            continue
    else:
        return zlib.decompress
    return lambda blob: codec.unpack(blob).encode()


def same_spelling(text: bytes) -> bytes:
    """A survivor's JSON as ``json.dumps`` spells it: every number parsed back to its double
    and written again, so two checkouts whose encoders spell a float differently (``1e-05``
    and ``0.00001``) compare equal exactly when every number is the same double."""
    value = json.loads(text)
    return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()


def stage_pass(plugins, spec, tasks, seconds, values) -> None:  # type: ignore[no-untyped-def]
    """The steps of ``evaluate_pairs`` one by one, each timed (CPU) into ``seconds``; the
    metrics every pair gets go into ``values`` (when given), per field as (A, B, bytes)."""
    import numpy as np

    from pairscreen.engine import screen_chunks
    from pairscreen.engine.evaluate import compute_metrics, run_legs
    from pairscreen.engine.filtering import filter_reasons
    from pairscreen.engine.screen_chunks import ChunkResult, split_metrics

    def slices(panel):  # type: ignore[no-untyped-def]
        """The panels the checkout's screen runs its deciding metrics on (slices of a big
        task's panel, each with its own cache shared by the metrics, where it slices)."""
        rows = getattr(screen_chunks, "DECIDE_ROWS", None)
        if rows is None:
            return [panel]
        return [
            screen_chunks.row_slice(panel, start, start + rows)
            for start in range(0, panel.n_pairs, rows)
        ]

    def decide(parts, metric):  # type: ignore[no-untyped-def]
        computed = [compute_metrics(plugins, part, [metric], strict=True) for part in parts]
        values = {
            name: np.concatenate([c.values[name] for c in computed]) for name in computed[0].values
        }
        return type(computed[0])(values, computed[0].fields, computed[0].missing)

    from pairscreen import FilterContext
    from pairscreen.screening.pair_chunks import add_result, chunk_jobs

    def timed(name: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        value = call(*args, **kwargs)
        seconds[name] = seconds.get(name, 0.0) + time.process_time() - t0
        return value

    for task in tasks:
        outcome, groups = timed("alignment", chunk_jobs, spec, task)
        for group in groups:
            job = group.job
            screen_filter = plugins.filters.get(job.screen_filter.name)
            deciding, describing = split_metrics(
                plugins, screen_filter, job.screen_filter.thresholds
            )
            metrics = None
            # Where panels are cut from the matrix on demand, cutting them is alignment too.
            parts = timed("alignment", slices, job.panel)
            for metric in deciding:
                name = f"metric {metric.name}"
                part = timed(name, decide, parts, metric)
                if metrics is None:
                    metrics = part
                else:
                    metrics.values.update(part.values)
                    metrics.fields.update(part.fields)
            if values is not None:
                for name, column in metrics.values.items():
                    values.setdefault(name, []).extend(
                        (int(a), int(b), column[k : k + 1].tobytes())
                        for k, (a, b) in enumerate(zip(group.ia, group.ib, strict=True))
                    )
            context = FilterContext(
                job.history_days, job.depegged, job.screen_filter.thresholds, job.depegged_legs
            )
            reasons = timed("filter", filter_reasons, screen_filter, metrics, context)
            keep = np.flatnonzero([not r for r in reasons])
            if keep.size == 0:
                continue
            survivors = timed("alignment", job.panel.rows, keep)
            strategy = plugins.strategies.get(job.strategy)
            name = "backtests (both legs, survivors)"
            legs = timed(name, run_legs, strategy, survivors, job.bt_days)
            order = [f.name for m in plugins.metrics for f in m.fields]
            for metric in describing:
                name = f"survivors' {metric.name}"
                later = timed(name, compute_metrics, plugins, survivors, [metric], strict=True)
                metrics = metrics.with_rows(job.panel.n_pairs, keep, later, order)
            kept_values = {k: v[keep] for k, v in metrics.values.items()}
            scorer = plugins.scorers.get(job.scorer)
            scores = np.asarray(timed("score", scorer.score, kept_values), dtype=float)
            carried = (survivors,) if "survivor_panel" in ChunkResult.__dataclass_fields__ else ()
            result = ChunkResult(metrics, reasons, keep, scores, legs, *carried)
            extra = () if _old_add_result(add_result) else (screen_filter,)
            timed("serialisation", add_result, spec, outcome, group, result, *extra)


def _old_add_result(add_result: Callable[..., Any]) -> bool:
    """Whether ``add_result`` predates the verdict log (no ``screen_filter`` argument)."""
    import inspect

    return "screen_filter" not in inspect.signature(add_result).parameters


def floor(spec, tasks, repeat) -> float:  # type: ignore[no-untyped-def]
    """Best CPU seconds of the bare numpy work of every pair of ``tasks`` (see the module
    doc), on panels already aligned."""
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    from pairscreen.screening.pair_chunks import chunk_jobs

    panels = [  # 500 rows at most, whatever the checkout's task size: the same work arrays
        g.job.panel.rows(np.arange(start, min(start + 500, g.job.panel.n_pairs)))
        for task in tasks
        for g in chunk_jobs(spec, task)[1]
        for start in range(0, g.job.panel.n_pairs, 500)
    ]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for panel in panels:
            log_a, log_b = np.log(panel.close_a), np.log(panel.close_b)
            ratio = log_a - log_b
            np.sort(ratio[:, -spec.window_days - 1 : -1], axis=1)
            legs = np.stack([log_a[:, -spec.window_days :], log_b[:, -spec.window_days :]], 1)
            for _ in range(2):  # the two Engle-Granger regressions
                np.matmul(legs, legs.transpose(0, 2, 1))
            window = ratio[:, -spec.window_days :]
            lags = 19  # statsmodels' maximum ADF lag for a 540-day window
            n = window.shape[1] - lags - 1
            shifted = sliding_window_view(window, n, axis=1)  # (pairs, lags + 2, n), no copy
            for _ in range(3):  # the ADF of the ratio and of both Engle-Granger residuals
                np.matmul(shifted, window[:, -n:, None])  # the lag products of one fit
        best = min(best, time.process_time() - t0)
    return best


if __name__ == "__main__":
    main()
