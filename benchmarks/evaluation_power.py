"""The power study of ``pairscreen evaluate`` (docs/methodology.md, "Evaluating the rules"):
does it call chance evidence, does it see a real edge, and is its ``min_detectable`` true?

Each simulation builds a universe of 30 assets over 1,100 days (tests/support/power_universe)
and runs the evaluation functions ``pairscreen evaluate --every EVERY`` runs, on the
screen's default rules, horizons 30 and 90, over the default range. Scenarios:

* ``random walks``: every pair a random walk; the share called ``evidence`` (either
  horizon) is the false-evidence rate, which must stay at or below 5 %;
* ``planted sd S``: four groups of three assets sharing a trend, each asset with its own OU
  deviation (half-lives 5, 10, 15, 20 days, standard deviation S), among random walks: 12
  truly mean-reverting pairs of 435. The share called ``evidence`` is the power.

For each planted level it prints the mean 30-day difference (the effect the design faces),
the mean stated ``min_detectable`` and the share of 30-day rows called evidence; the
simulated 80 % power point is interpolated between levels (effect against power), or
extrapolated from the level nearest 80 % on the normal power curve, and set beside the
stated ``min_detectable``. Then, per level, the power of the best possible test (one that
knew the estimate's spread), and the power over the band of edges asked about (5 to 8 pp):
pooled over the levels inside it and read off the levels at 5, 6.5 and 8 pp. Seeds are
fixed: simulation ``k`` of a scenario uses seed ``base + k``.

    .venv/bin/python benchmarks/evaluation_power.py [--null 100] [--planted 100]
        [--levels 0.10,0.12,0.135,0.16,0.19] [--every 5] [--processes 2] [--records FILE.jsonl]
        [--range shortest|longest] [--start K]
    .venv/bin/python benchmarks/evaluation_power.py --replay FILE.jsonl
        [--design today|holm|fitted] [--range shortest|longest]

The as-of days run, as ``evaluate``'s default range does, to the last day the shortest
horizon can follow (``--range longest``: the longest, the range before); records of the
first kind replay as the second with ``--replay --range longest`` (the days the longest
horizon can follow are a prefix). ``--design fitted`` replays them with a candidate test not
adopted (:func:`fitted_difference`).

The records (one JSON line per simulated row) are written as the simulations finish, so a
study stopped early leaves every finished simulation on file.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one process = one core
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""

import argparse
import contextlib
import gzip
import itertools
import json
import math
import statistics
import sys
import time
from dataclasses import replace
from datetime import timedelta
from multiprocessing import Pool
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "plugins"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _harness import machine_line  # noqa: E402

from pairscreen.evaluation.dates import as_of_dates  # noqa: E402
from pairscreen.evaluation.statistics import (  # noqa: E402
    GREATER,
    Difference,
    _overlap_standard_error,
    daily_difference,
    demeaning_correction,
    detectable,
    one_sided_p,
    tested_difference,
    with_fixed_sequence,
    with_holm,
)
from tests.support.power_universe import (  # noqa: E402
    HORIZONS,
    LAST_DAY,
    evaluate_universe,
    planted,
    universe,
)

NULL_SEED = 10_000
PLANTED_SEED = 20_000
Z80 = 0.8416212335729143  # normal quantile at 0.80
Z95 = 1.6448536269514722  # normal quantile at 0.95


Run = tuple[float, float | None, float | None, float | None, str, bool, list[dict[str, object]]]


def one(task: tuple[float, int, int, int]) -> Run:
    """One simulation: (level, 30-day estimate, its standard error, its min_detectable, its
    reading, evidence at either horizon). Level 0 is the random-walk universe. The as-of
    days end ``followed`` days before the data (``--range``)."""
    level, seed, every, followed = task
    groups = planted(level) if level > 0 else ()
    u, candles = universe(seed, groups)
    result = evaluate_universe(u, candles, every, followed_days=followed)
    screen = result.results[0]
    rows = screen.horizons
    first = rows[0].difference
    # Each day's survivors and other pairs in the zones: with each row's per-day gaps, any
    # standard error or test can be derived again from the records (``--replay``).
    survivors = [int(day["survivors_in_zones"]) for day in screen.per_date]  # type: ignore[call-overload]
    others = [int(day["in_zones"]) - s for day, s in zip(screen.per_date, survivors, strict=True)]  # type: ignore[call-overload]
    # The as-of days the longest horizon can follow: the study's range before each horizon
    # had its own (a prefix of these days), so ``--replay --range longest`` reads it again.
    common = len(as_of_dates(result.dates[0], LAST_DAY - timedelta(days=max(HORIZONS)), every))
    return (
        level,
        first.estimate,
        first.standard_error,
        first.min_detectable,
        first.reading,
        any(r.difference.reading == "evidence" for r in rows),
        [
            {
                "seed": seed,
                "horizon": r.horizon,
                **r.difference.as_json(),
                "gaps": list(r.per_date),
                "survivor_counts": survivors,
                "other_counts": others,
                "followed_days": followed,
                "common_days": common,
            }
            for r in rows
        ],
    )


def _open_records(path: Path) -> TextIO:
    """A records file to read, gzip-compressed when its name ends in ``.gz`` (the study's
    records kept in benchmarks/records/)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def replayed(
    path: Path, design: str = "today", days: str = "shortest", every: int = 5
) -> list[Run]:
    """The runs of a records file, their p-values, adjustment, ``min_detectable`` and
    readings derived again by today's ``evaluation.statistics`` (``design`` "today") from
    each row's days (its per-day differences and group counts; older records: its estimate,
    standard error and degrees of freedom), or by the test before the fixed sequence and the
    equivalent degrees of freedom (``design`` "holm": Holm over both horizons, one degree of
    freedom less than the independent periods, the demeaning correction). A row the
    observation rules refused stays refused: they never read the outcomes. A study run
    before a change of the test is read as the changed test would read it, without
    simulating again. ``days`` "longest" reads records whose horizons each had their own
    range as if every horizon had stopped where the longest can follow (:func:`_cut`)."""
    rows: dict[tuple[float, int], list[dict[str, Any]]] = {}
    with _open_records(path) as records:
        for line in records:
            row = json.loads(line)
            if days == "longest":
                row = _cut(row)
            rows.setdefault((row["level"], row["seed"]), []).append(row)
    runs: list[Run] = []
    for (level, seed), mine in rows.items():
        mine.sort(key=lambda r: r["horizon"])
        diffs = [
            _difference(r)
            if design == "today"
            else _fitted(r, every)
            if design == "fitted"
            else _before(r)
            for r in mine
        ]
        tested = [i for i, d in enumerate(diffs) if not d.too_few and d.p_value is not None]
        adjust = with_holm if design == "holm" else with_fixed_sequence
        for i, d in zip(tested, adjust([diffs[i] for i in tested]), strict=True):
            diffs[i] = d
        first = diffs[0]
        runs.append(
            (
                level,
                first.estimate,
                first.standard_error,
                first.min_detectable,
                first.reading,
                any(d.reading == "evidence" for d in diffs),
                [
                    {"seed": seed, "horizon": r["horizon"], **d.as_json()}
                    for r, d in zip(mine, diffs, strict=True)
                ],
            )
        )
    return runs


def _cut(row: dict[str, Any]) -> dict[str, Any]:
    """A row of a run whose as-of days ran to the last the shortest horizon can follow, cut
    to the days the longest can follow (``common_days``, a prefix): the range every horizon
    had before. Its observation rules are applied again from the counts (at least 30
    survivor observations, 8 periods of ``block_days`` days with survivors and with other
    pairs); the rule on one pair's share needs the pairs and keeps the whole run's
    verdict."""
    if "common_days" not in row or row["common_days"] >= len(row["gaps"]):
        return row
    keep = row["common_days"]
    cut = {
        **row,
        "gaps": row["gaps"][:keep],
        "survivor_counts": row["survivor_counts"][:keep],
        "other_counts": row["other_counts"][:keep],
        "recut": True,
    }
    by_counts = _refused_by_counts(cut)
    by_share = row["reading"] == "too_few_observations" and not _refused_by_counts(row)
    cut["reading"] = "too_few_observations" if by_counts or by_share else "no_evidence"
    return cut


def _refused_by_counts(row: dict[str, Any]) -> bool:
    """Whether the observation rules on counts refuse a row: fewer than 30 survivor
    observations, or fewer than 8 periods of ``block_days`` days holding a survivor or an
    other pair (days without the row's outcome hold none)."""
    block = row["block_days"]
    known = [g is not None for g in row["gaps"]]
    sides = (row["survivor_counts"], row["other_counts"])
    periods = [
        len({t // block for t, (n, k) in enumerate(zip(side, known, strict=True)) if n and k})
        for side in sides
    ]
    observed = sum(n for n, k in zip(sides[0], known, strict=True) if k)
    return observed < 30 or min(periods) < 8


def _days(row: dict[str, Any]) -> tuple[Any, Any]:
    """A row's per-day differences and weights ``s r / (s + r)`` (0 without both groups)."""
    import numpy as np

    survivors = np.asarray(row["survivor_counts"], dtype=float)
    others = np.asarray(row["other_counts"], dtype=float)
    gaps = np.asarray([np.nan if g is None else g for g in row["gaps"]], dtype=float)
    both = np.isfinite(gaps) & (survivors > 0) & (others > 0)
    weight = np.where(both, survivors * others / np.maximum(survivors + others, 1.0), 0.0)
    return np.where(both, gaps, 0.0), weight


def fitted_difference(gap: Any, weight: Any, span: float) -> Difference:
    """A candidate test (``--design fitted``): the same weighted mean of the days'
    differences, its variance from the overlap model with one scale fitted to the days'
    squared residuals (``sum w_t r_t^2``, lag 0 only) instead of the flat kernel's
    ``block - 1`` estimated autocovariances. Model: errors of variance ``c / w_t``
    correlated ``1 - k / span`` at ``k`` as-of days apart (``span = horizon / every``).
    Unbiased under the model; Satterthwaite's degrees of freedom of the quadratic form."""
    import numpy as np

    paired = weight > 0
    w = weight[paired]
    g = gap[paired]
    t = np.flatnonzero(paired).astype(float)
    share = w / w.sum()
    estimate = float(share @ g)
    lag = np.abs(np.subtract.outer(t, t))
    scale = 1.0 / np.sqrt(w)
    sigma = np.clip(1.0 - lag / span, 0.0, None) * np.outer(scale, scale)
    n = w.size
    residual = np.eye(n) - np.outer(np.ones(n), share)  # r = M e
    quadratic = residual.T @ np.diag(w) @ residual
    a_sigma = quadratic @ sigma
    mean = float(np.trace(a_sigma))
    variance_unit = float(share @ sigma @ share)
    r = g - estimate
    se = math.sqrt(float(w @ (r * r)) / mean * variance_unit)
    df = max(1, math.floor(mean * mean / float(np.sum(a_sigma * a_sigma.T)) + 0.5))
    return tested_difference(estimate, se, df, math.ceil(span), n)


def _fitted(row: dict[str, Any], every: int) -> Difference:
    """A recorded row read by :func:`fitted_difference`; refused rows stay refused."""
    gaps, weight = _days(row)
    refused = row["reading"] == "too_few_observations"
    if not (weight > 0).sum() // row["block_days"] >= 2:
        return replace(daily_difference(gaps, weight, row["block_days"]), too_few=refused)
    return replace(fitted_difference(gaps, weight, row["horizon"] / every), too_few=refused)


def _before(row: dict[str, Any]) -> Difference:
    """A row with days as the test before the fixed sequence read it: the flat-kernel error
    with the demeaning correction, one degree of freedom less than the independent periods
    (its Holm adjustment over both horizons is applied by the caller)."""
    gaps, weight = _days(row)
    estimate = float((weight * gaps).sum() / weight.sum())
    paired = int((weight > 0).sum())
    block = row["block_days"]
    se = _overlap_standard_error(weight * (gaps - estimate) / weight.sum(), block)
    se *= demeaning_correction(paired, block)
    df = paired // block - 1
    return Difference(
        estimate,
        None,
        None,
        se,
        detectable(se, df, 1),
        block,
        0,
        one_sided_p(estimate, se, df, GREATER),
        too_few=row["reading"] == "too_few_observations",
        degrees_of_freedom=df,
    )


def _difference(row: dict[str, Any]) -> Difference:
    """A recorded row as today's test reads it: from its days when recorded (the estimate
    must be the recorded one), else from its estimate, standard error and degrees of
    freedom. Rows recorded before ``paired_days`` existed
    hold the standard error without the demeaning correction: it is applied here with the
    fewest days their degrees of freedom allow, ``block x (df + 1)`` (the most allow one
    block more, less a day; on the study's rows both give the same readings)."""
    if "gaps" in row:
        gaps, weight = _days(row)
        today = daily_difference(gaps, weight, row["block_days"])
        if not row.get("recut"):
            assert today.estimate is not None and row["estimate"] is not None
            assert math.isclose(today.estimate, row["estimate"], rel_tol=1e-9, abs_tol=1e-12)
        return replace(today, too_few=row["reading"] == "too_few_observations")
    low, high = row["ci95"] if row["ci95"] is not None else (None, None)
    estimate, se, df = row["estimate"], row["standard_error"], row["degrees_of_freedom"]
    tested = estimate is not None and se is not None and df is not None
    if tested and "paired_days" not in row:
        se *= demeaning_correction(row["block_days"] * (df + 1), row["block_days"])
    return Difference(
        estimate,
        low,
        high,
        se,
        detectable(se, df, 1) if tested else None,
        row["block_days"],
        0,
        one_sided_p(estimate, se, df, GREATER) if tested else None,
        too_few=row["reading"] == "too_few_observations",
        degrees_of_freedom=df,
    )


def _done(path: Path) -> set[tuple[float, int]]:
    """The (level, seed) of every simulation a records file holds."""
    with path.open(encoding="utf-8") as records:
        return {(row["level"], row["seed"]) for row in map(json.loads, records)}


def share(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} = {sum(flags) / len(flags):.0%}" if flags else "-"


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact 95 % interval of a share of ``k`` in ``n``."""
    from scipy.stats import beta

    low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return low, high


def band(runs: list[Run], levels: list[float], low: float = 0.05, high: float = 0.08) -> None:
    """Power over the band of edges the study is asked about (survivors reverting 5 to 8 pp
    more at 30 days): the pooled share called evidence over the levels whose mean difference
    lies in the band, and the power at its ends and middle read off the levels (linear
    between the two levels around each effect; ``-`` outside the levels run)."""
    curve = []
    for level in levels:
        mine = [r for r in runs if r[0] == level]
        effects = [r[1] for r in mine if r[1] is not None]
        if effects:
            called = [r[4] == "evidence" for r in mine]
            curve.append((statistics.fmean(effects), sum(called), len(called)))
    curve.sort()
    inside = [(k, n) for mean, k, n in curve if low <= mean <= high]
    if inside:
        k, n = sum(c for c, _ in inside), sum(n for _, n in inside)
        print(
            f"levels with a mean difference of {low * 100:g} to {high * 100:g} pp: {k}/{n} = "
            f"{k / n:.1%} evidence ({len(inside)} level{'s' if len(inside) > 1 else ''})"
        )
    readings = []
    for effect in (low, (low + high) / 2, high):
        power = None
        for (e0, k0, n0), (e1, k1, n1) in itertools.pairwise(curve):
            if e0 <= effect <= e1:
                p0, p1 = k0 / n0, k1 / n1
                power = p0 + (effect - e0) * (p1 - p0) / (e1 - e0)
        readings.append(f"{effect * 100:g} pp: {'-' if power is None else f'{power:.0%}'}")
    print("power read off the levels at " + ", ".join(readings))


def power_point(levels: list[tuple[float, float, float]]) -> float | None:
    """The effect at 80 % power from (mean effect, power, critical z) per planted level:
    interpolated between two levels that bracket 80 %, else from the level nearest 80 % on
    the normal power curve ``power = Phi(effect / se - z)``, i.e.
    ``effect x (z + z80) / (z + Phi^-1(power))``."""
    from statistics import NormalDist

    ordered = sorted(levels)
    for (e0, p0, _), (e1, p1, _) in itertools.pairwise(ordered):
        if p0 <= 0.8 <= p1 and p1 > p0:
            return e0 + (0.8 - p0) * (e1 - e0) / (p1 - p0)
    usable = [lv for lv in ordered if 0.0 < lv[1] < 1.0]
    if not usable:
        return None
    effect, power, z = min(usable, key=lambda lv: abs(lv[1] - 0.8))
    return effect * (z + Z80) / (z + NormalDist().inv_cdf(power))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--null", type=int, default=100, help="random-walk simulations")
    parser.add_argument("--planted", type=int, default=100, help="simulations per level")
    parser.add_argument(
        "--levels", default="0.10,0.12,0.135,0.16,0.19", help="OU deviation sds to plant"
    )
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument(
        "--range",
        choices=("shortest", "longest"),
        default="shortest",
        help="the last as-of day: the last the shortest horizon can follow (each horizon "
        "its own range, the default) or the longest (the range before); with --replay: "
        "read records of the first kind as the second",
    )
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument(
        "--start",
        type=int,
        default=0,
        help="skip simulations 0 … START-1 of each scenario (done by an earlier, stopped run)",
    )
    parser.add_argument(
        "--records", type=Path, help="also write every row's difference, one JSON line each"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="append to --records, skipping the simulations already in it (a study stopped "
        "and continued, or given another level)",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        help="simulate nothing: read the runs of this records file with today's test",
    )
    parser.add_argument(
        "--design",
        choices=("today", "holm", "fitted"),
        default="today",
        help="with --replay: today's test, the one before (Holm over both horizons), or the "
        "candidate whose variance fits the overlap model's scale (fitted_difference)",
    )
    args = parser.parse_args()
    if args.replay is not None:
        runs = replayed(args.replay, args.design, args.range, args.every)
        levels = sorted({run[0] for run in runs if run[0] > 0})
        print(
            f"{len(runs)} simulations read from {args.replay} (--every {args.every}, "
            f"{args.design}'s test, as-of days to the last the {args.range} horizon can "
            "follow)"
        )
        summary(runs, levels)
        return
    levels = [float(v) for v in args.levels.split(",") if v.strip()]
    followed = min(HORIZONS) if args.range == "shortest" else max(HORIZONS)
    tasks = [(0.0, NULL_SEED + k, args.every, followed) for k in range(args.start, args.null)]
    tasks += [
        (lv, PLANTED_SEED + k, args.every, followed)
        for lv in levels
        for k in range(args.start, args.planted)
    ]
    if args.resume and args.records is not None and args.records.exists():
        done = _done(args.records)
        tasks = [task for task in tasks if (task[0], task[1]) not in done]
    # Simulation k of every scenario before simulation k + 1 of any: a study stopped early
    # (its records are written as they come) still covers every scenario alike.
    tasks.sort(key=lambda task: task[1] - (NULL_SEED if task[0] == 0 else PLANTED_SEED))
    start = time.perf_counter()
    runs: list[Run] = []
    with contextlib.ExitStack() as stack:
        mode = "a" if args.resume else "w"
        out = None if args.records is None else stack.enter_context(args.records.open(mode))
        pool = stack.enter_context(Pool(args.processes))
        for run in pool.imap(one, tasks, chunksize=1):
            runs.append(run)
            if out is not None:
                out.writelines(json.dumps({"level": run[0], **row}) + "\n" for row in run[6])
                out.flush()
            print(
                f"{len(runs)}/{len(tasks)} in {time.perf_counter() - start:.0f} s", file=sys.stderr
            )
    took = time.perf_counter() - start
    print(machine_line())
    print(
        f"{len(tasks)} simulations (30 assets, 1,100 days, --every {args.every}, horizons 30 "
        f"and 90, as-of days to the last the {args.range} can follow, default rules) in "
        f"{took:.0f} s, {args.processes} processes\n"
    )
    summary(runs, levels)


def summary(runs: list[Run], levels: list[float]) -> None:
    """The table: per scenario the 30-day difference, the stated ``min_detectable`` and the
    share called evidence (with its 95 % Clopper-Pearson interval), then the 80 % power
    point against the stated size."""
    print(
        f"{'scenario':<18}{'sims':>5} {'30 d difference pp, mean (sd)':>30} "
        f"{'min_detectable':>15} {'evidence 30 d':>16} {'evidence any h':>16}"
    )
    points: list[tuple[float, float, float]] = []
    stated_all: list[float] = []
    false_share = (0, 0)
    for level in [0.0, *levels]:
        mine = [r for r in runs if r[0] == level]
        effects = [r[1] for r in mine if r[1] is not None]
        tested = [(r[2], r[3]) for r in mine if r[2] is not None and r[3] is not None]
        at30 = [r[4] == "evidence" for r in mine]
        anywhere = [r[5] for r in mine]
        name = "random walks" if level == 0 else f"planted sd {level:g}"
        mean = statistics.fmean(effects) if effects else math.nan
        spread = statistics.stdev(effects) if len(effects) > 1 else math.nan
        stated = statistics.fmean(md for _se, md in tested) if tested else math.nan
        print(
            f"{name:<18}{len(mine):>5} {mean * 100:>+20.2f} ({spread * 100:.2f}) "
            f"{stated * 100:>15.2f} {share(at30):>16} {share(anywhere):>16}"
        )
        if level == 0:
            false_share = (sum(anywhere), len(anywhere))
        elif tested:
            z = statistics.fmean(md / se for se, md in tested) - Z80
            points.append((mean, sum(at30) / len(at30), z))
            stated_all += [md for _se, md in tested]
    point = power_point(points)
    stated = statistics.fmean(stated_all) if stated_all else math.nan
    ratio = stated / point if point else math.nan
    print(
        f"\nsimulated 80 % power point of the 30-day row: "
        f"{'-' if point is None else f'{point * 100:.2f} pp'}; stated min_detectable "
        f"(planted runs): {stated * 100:.2f} pp; ratio stated / simulated {ratio:.2f}"
    )
    for level in levels:
        mine = [r[4] == "evidence" for r in runs if r[0] == level]
        if mine:
            low, high = clopper_pearson(sum(mine), len(mine))
            print(
                f"power at 30 d, planted sd {level:g}: {sum(mine) / len(mine):.1%} "
                f"(95 % interval {low:.1%} to {high:.1%})"
            )
    for level in levels:
        effects = [r[1] for r in runs if r[0] == level and r[1] is not None]
        if len(effects) > 1:
            mean, spread = statistics.fmean(effects), statistics.stdev(effects)
            best = statistics.NormalDist().cdf(mean / spread - Z95)
            print(
                f"best possible at planted sd {level:g}: the estimates spread {spread * 100:.2f} "
                f"pp around {mean * 100:+.2f}, so a test knowing that spread calls "
                f"{best:.0%} evidence; 80 % needs a mean of {(Z95 + Z80) * spread * 100:.2f} pp"
            )
    band(runs, levels)
    called, sims = false_share
    if sims:
        low, high = clopper_pearson(called, sims)
        print(
            f"false evidence on random walks: {called}/{sims} = {called / sims:.1%} (95 % "
            f"interval {low:.1%} to {high:.1%}; at most 5 % wanted)"
        )


if __name__ == "__main__":
    main()
