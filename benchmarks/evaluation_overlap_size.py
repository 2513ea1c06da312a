"""Is the evaluation's standard error right, and its test's size 5 %? A cheap check of
``evaluation.statistics.difference`` on simulated daily differences, without the universes
of benchmarks/evaluation_power.py (docs/methodology.md, "Evaluating the rules").

Each simulation draws the days' survivor-minus-rest differences ``D_t`` directly: errors of
variance ``1 / w_t`` (``w_t`` from a day's survivor and other-pair counts) that are
overlapping sums of ``block`` independent steps, as forward windows ``block`` as-of days
long make them (optionally half of each day's error independent of its neighbours, or
Student t(5) steps instead of normal ones, or steps whose volatility switches between calm
and wild regimes), and no true difference. It runs :func:`difference` on them and reports
how far the estimates spread against the stated standard error, the share called evidence by
the one-sided 5 % test (the size; 5 % wanted) and the degrees of freedom used, the size the
test had before the equivalent degrees of freedom (one less than the independent periods,
the demeaning correction), and that of a candidate not adopted, whose variance fits the
overlap model's one scale to the days' squared residuals (``evaluation_power.
fitted_difference``: more degrees of freedom, but it overstates the error wherever the days'
errors are less correlated than whole overlapping windows). Seeds are fixed.

    .venv/bin/python benchmarks/evaluation_overlap_size.py [--sims 2000]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluation_power import fitted_difference  # noqa: E402

from pairscreen.evaluation.statistics import (  # noqa: E402
    EVIDENCE_LEVEL,
    GREATER,
    Observations,
    demeaning_correction,
    difference,
    one_sided_p,
    overlap_reference,
)

# (as-of days, block): the power study's 30 and 90 days at --every 5, and 30 days at --every 1
DESIGNS = ((94, 6), (94, 18), (470, 30))


def observations(gaps: np.ndarray, survivors: np.ndarray, others: np.ndarray) -> Observations:
    """A day's survivors all at ``gaps[t]`` and its other pairs at 0: the day's difference is
    ``gaps[t]`` and its weight ``s r / (s + r)``, as in a real run (days with no survivor
    count 0 have no comparison)."""
    day, values, survivor = [], [], []
    for t, (gap, s, r) in enumerate(zip(gaps, survivors, others, strict=True)):
        day += [t] * int(s + r)
        values += [gap] * int(s) + [0.0] * int(r)
        survivor += [True] * int(s) + [False] * int(r)
    n = len(values)
    return Observations(
        np.asarray(values),
        np.asarray(day),
        np.arange(n),
        np.asarray(survivor),
        gaps.size,
        np.asarray([f"P{i}" for i in range(n)]),
    )


def simulate(
    rng: np.random.Generator,
    days: int,
    block: int,
    independent: float,
    heavy: bool,
    regimes: bool = False,
) -> tuple[float, float, bool, int, bool, bool, int]:
    """One null series: (estimate, standard error, called evidence, degrees of freedom,
    called evidence by the test before, by the fitted-scale candidate, its degrees of
    freedom). ``regimes``: the steps' volatility switches between calm and wild (sd 0.5
    and 2, 30 as-of days each on average), as markets do."""
    survivors = rng.integers(1, 8, days) * (rng.random(days) > 0.05)
    others = rng.integers(10, 60, days)
    weight = np.maximum(survivors, 1) * others / (np.maximum(survivors, 1) + others)

    def steps(n: int) -> np.ndarray:
        if heavy:
            return rng.standard_t(5, n) / math.sqrt(5.0 / 3.0)
        return rng.normal(size=n)

    drawn = steps(days + block - 1)
    if regimes:
        wild = np.cumsum(rng.random(drawn.size) < 1.0 / 30.0) % 2 == 1
        drawn = drawn * np.where(wild, 2.0, 0.5)
    overlapping = np.convolve(drawn, np.ones(block), "valid") / math.sqrt(block)
    error = math.sqrt(1.0 - independent) * overlapping + math.sqrt(independent) * steps(days)
    d = difference(observations(error / np.sqrt(weight), survivors, others), block)
    assert d.estimate is not None and d.standard_error is not None and d.p_value is not None
    assert d.degrees_of_freedom is not None
    both = np.where(survivors > 0, weight, 0.0)
    raw = d.standard_error / math.sqrt(overlap_reference(both, block)[0])
    before = raw * demeaning_correction(d.paired_days, block)
    p_before = one_sided_p(d.estimate, before, d.paired_days // block - 1, GREATER)
    called = d.p_value < EVIDENCE_LEVEL
    gaps = np.where(survivors > 0, error / np.sqrt(weight), 0.0)
    fitted = fitted_difference(gaps, both, float(block))
    assert fitted.p_value is not None and fitted.degrees_of_freedom is not None
    return (
        d.estimate,
        d.standard_error,
        called,
        d.degrees_of_freedom,
        p_before < EVIDENCE_LEVEL,
        fitted.p_value < EVIDENCE_LEVEL,
        fitted.degrees_of_freedom,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=2000, help="series per design")
    args = parser.parse_args()
    print(
        f"{'as-of days':>10} {'block':>5} {'errors':<26} {'sd of estimates':>15} "
        f"{'rms stated se':>13} {'ratio':>6} {'df':>4} {'size (5 % wanted)':>18} "
        f"{'before: df':>10} {'size':>6} {'fitted: df':>10} {'size':>6}"
    )
    cases = [(d, b, 0.0, False, False) for d, b in DESIGNS]
    cases += [(94, 6, 0.5, False, False), (94, 6, 0.0, True, False)]
    cases += [(106, 6, 0.0, False, False), (106, 6, 0.0, False, True)]
    for seed, (days, block, independent, heavy, regimes) in enumerate(cases):
        rng = np.random.default_rng(seed)
        sims = args.sims if days < 200 else max(1, args.sims // 10)
        runs = [simulate(rng, days, block, independent, heavy, regimes) for _ in range(sims)]
        estimates = np.array([r[0] for r in runs])
        rms = math.sqrt(float(np.mean([r[1] ** 2 for r in runs])))
        called = sum(r[2] for r in runs)
        before = sum(r[4] for r in runs) / sims
        half = 1.96 * math.sqrt(called / sims * (1 - called / sims) / sims)
        kind = "overlapping" if not independent else "half independent"
        kind += ", t(5) steps" if heavy else ", normal"
        kind += ", vol regimes" if regimes else ""
        fitted = sum(r[5] for r in runs) / sims
        print(
            f"{days:>10} {block:>5} {kind:<26} {estimates.std():>15.4f} {rms:>13.4f} "
            f"{estimates.std() / rms:>6.3f} {runs[0][3]:>4} "
            f"{called / sims:>9.1%} ± {half:.1%} {days // block - 1:>10} {before:>6.1%} "
            f"{runs[0][6]:>10} {fitted:>6.1%}"
        )


if __name__ == "__main__":
    main()
