"""Survivors against the rest: summaries and a difference whose interval respects both the
days and the pairs.

Observations of one as-of day share that day's market move, and with horizons longer than
the step between days consecutive days share most of their forward window; observations of
one pair repeat from day to day (a pair that stays in a zone and survives screen after screen
counts many times). Treating either as independent makes a difference look significant. The
interval is therefore a two-way bootstrap (Owen's "pigeonhole" bootstrap): each resample
draws whole as-of days in moving blocks of ``ceil(horizon / every)`` consecutive days *and*
whole pairs (Poisson weights with mean one, drawn once per pair per resample), and weighs
each observation by its day's count times its pair's count. It is conservative (its variance
counts the residual noise twice), which is the safe side for a claim of evidence.

The p-value is two-sided from the bootstrap standard error (``erfc(|d| / se / sqrt 2)``); when
several rule sets and horizons are compared, :func:`holm` adjusts the family. The minimum
detectable difference (2.8 bootstrap standard errors: 80 % power at the 5 % level) says what
size of effect the design can resolve at all.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

RESAMPLES = 2000
SEED = 20260101  # fixed: the same evaluation always prints the same interval
DETECTABLE_SE = 2.8  # z(0.975) + z(0.80)
PAIR_CHUNK = 2048  # pairs per bootstrap pass: bounds memory at resamples x chunk floats

# Below these a difference is "too few observations", never evidence.
MIN_SURVIVOR_OBSERVATIONS = 30
MIN_INDEPENDENT_DAYS = 8
MAX_TOP_PAIR_SHARE = 0.25
EVIDENCE_LEVEL = 0.05  # Holm-adjusted p below this, and enough observations: evidence

EVIDENCE = "evidence"
NO_EVIDENCE = "no_evidence"
TOO_FEW = "too_few_observations"


@dataclass(frozen=True)
class Observations:
    """Every outcome of one measure at one horizon, pooled over the days: its value, the index
    of its as-of day (0 … days-1, in order), of its pair, and whether it is a survivor's."""

    values: np.ndarray
    day: np.ndarray
    pair: np.ndarray
    survivor: np.ndarray
    days: int
    pair_names: np.ndarray  # pair index -> "A/B"


@dataclass(frozen=True)
class GroupSummary:
    """Outcomes of one group (survivors or the rest) pooled over the days, and how much
    independent evidence they hold."""

    n: int
    mean: float | None
    median: float | None
    hit_rate: float | None  # share of outcomes above zero
    independent_days: int  # blocks of ``block_days`` consecutive as-of days with an outcome
    distinct_pairs: int
    top_pair: str | None  # its most frequent pair
    top_pair_share: float | None  # that pair's share of its outcomes

    def as_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "mean": self.mean,
            "median": self.median,
            "hit_rate": self.hit_rate,
            "independent_days": self.independent_days,
            "distinct_pairs": self.distinct_pairs,
            "top_pair": self.top_pair,
            "top_pair_share": self.top_pair_share,
        }


@dataclass(frozen=True)
class Difference:
    """Survivors' mean minus the rest's, with a 95 % two-way bootstrap interval, its p-value
    and, once the whole run is known, the Holm-adjusted p-value and the reading."""

    estimate: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    min_detectable: float | None
    block_days: int  # as-of days per bootstrap block
    resamples: int
    p_value: float | None = None
    p_holm: float | None = None
    too_few: bool = True  # set by the caller from the observation rules

    @property
    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    @property
    def reading(self) -> str:
        """``too_few_observations``, ``evidence`` (Holm p below 5 %) or ``no_evidence``."""
        if self.too_few or self.estimate is None:
            return TOO_FEW
        if self.p_holm is not None and self.p_holm < EVIDENCE_LEVEL and self.excludes_zero:
            return EVIDENCE
        return NO_EVIDENCE

    def as_json(self) -> dict[str, object]:
        return {
            "estimate": self.estimate,
            "ci95": [self.low, self.high] if self.low is not None else None,
            "standard_error": self.standard_error,
            "min_detectable": self.min_detectable,
            "block_days": self.block_days,
            "resamples": self.resamples,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "reading": self.reading,
        }


def summarise(obs: Observations, side: bool, block_days: int) -> GroupSummary:
    """The summary of the survivors (``side`` True) or of the rest."""
    mask = obs.survivor == side
    values = obs.values[mask]
    if values.size == 0:
        return GroupSummary(0, None, None, None, 0, 0, None, None)
    block = max(1, block_days)
    counts = np.bincount(obs.pair[mask])
    top = int(counts.argmax())
    return GroupSummary(
        int(values.size),
        float(values.mean()),
        float(np.median(values)),
        float((values > 0).mean()),
        int(np.unique(obs.day[mask] // block).size),
        int((counts > 0).sum()),
        str(obs.pair_names[top]),
        float(counts[top] / values.size),
    )


def shortfalls(survivors: GroupSummary, rest: GroupSummary, block_days: int) -> list[str]:
    """Why a difference is too few observations to be evidence: one sentence per reason,
    none when it may be read as evidence."""
    out: list[str] = []
    if survivors.n < MIN_SURVIVOR_OBSERVATIONS:
        out.append(
            f"only {survivors.n} survivor observations (fewer than "
            f"{MIN_SURVIVOR_OBSERVATIONS}): too few observations to call the difference evidence"
        )
    for name, group in (("survivor", survivors), ("other-pair", rest)):
        if group.n and group.independent_days < MIN_INDEPENDENT_DAYS:
            out.append(
                f"the {name} observations fall in only {group.independent_days} independent "
                f"periods of {block_days} as-of days (fewer than {MIN_INDEPENDENT_DAYS}): "
                "too few observations, they mostly share the same market moves"
            )
    share = survivors.top_pair_share
    if share is not None and share > MAX_TOP_PAIR_SHARE:
        out.append(
            f"one pair, {survivors.top_pair}, is {share:.0%} of the survivor observations "
            f"(more than {MAX_TOP_PAIR_SHARE:.0%}): too few observations, the result is "
            "mostly about that pair"
        )
    return out


def difference(
    obs: Observations,
    block_days: int,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Difference:
    """Pooled mean of the survivors' values minus that of the rest, the interval from
    ``resamples`` day-block x pair resamples."""
    days = obs.days
    block = max(1, min(block_days, days)) if days else max(1, block_days)
    surv = obs.survivor
    n_s, n_r = int(surv.sum()), int((~surv).sum())
    if days == 0 or n_s == 0 or n_r == 0:
        return Difference(None, None, None, None, None, block, resamples)
    estimate = float(obs.values[surv].mean() - obs.values[~surv].mean())
    rng = np.random.default_rng(seed)
    day_weights = _day_block_counts(rng, days, block, resamples)
    totals = _weighted_totals(rng, obs, day_weights)
    sum_s, cnt_s, sum_r, cnt_r = totals
    usable = (cnt_s > 0) & (cnt_r > 0)
    if usable.sum() < 2:
        return Difference(estimate, None, None, None, None, block, resamples)
    draws = sum_s[usable] / cnt_s[usable] - sum_r[usable] / cnt_r[usable]
    low, high = np.percentile(draws, [2.5, 97.5])
    se = float(draws.std(ddof=1))
    p = math.erfc(abs(estimate) / se / math.sqrt(2.0)) if se > 0 else None
    return Difference(
        estimate, float(low), float(high), se, DETECTABLE_SE * se, block, resamples, p
    )


def _day_block_counts(
    rng: np.random.Generator, days: int, block: int, resamples: int
) -> np.ndarray:
    """(resamples, days): how often each as-of day is drawn by a moving-block resample."""
    blocks = math.ceil(days / block)
    starts = rng.integers(0, days - block + 1, size=(resamples, blocks))
    picked = (starts[:, :, None] + np.arange(block)).reshape(resamples, -1)[:, :days]
    counts = np.zeros((resamples, days))
    np.add.at(counts, (np.arange(resamples)[:, None], picked), 1.0)
    return counts


def _weighted_totals(
    rng: np.random.Generator, obs: Observations, day_weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per resample: the weighted sum and count of the survivors' and of the rest's values,
    weight = day count x pair weight. Pairs are taken in chunks so memory stays bounded."""
    resamples, days = day_weights.shape
    pairs, local = np.unique(obs.pair, return_inverse=True)
    out = [np.zeros(resamples) for _ in range(4)]
    for start in range(0, pairs.size, PAIR_CHUNK):
        width = min(PAIR_CHUNK, pairs.size - start)
        inside = (local >= start) & (local < start + width)
        cols = local[inside] - start
        day = obs.day[inside]
        pair_weights = rng.poisson(1.0, size=(resamples, width)).astype(float)
        for k, side in enumerate((True, False)):
            mask = obs.survivor[inside] == side
            sums = np.zeros((days, width))
            counts = np.zeros((days, width))
            np.add.at(sums, (day[mask], cols[mask]), obs.values[inside][mask])
            np.add.at(counts, (day[mask], cols[mask]), 1.0)
            out[2 * k] += ((day_weights @ sums) * pair_weights).sum(axis=1)
            out[2 * k + 1] += ((day_weights @ counts) * pair_weights).sum(axis=1)
    return out[0], out[1], out[2], out[3]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (the order is kept): the k-th
    smallest is multiplied by ``m - k + 1``, then made non-decreasing and capped at one."""
    m = len(p_values)
    order = np.argsort(np.asarray(p_values, dtype=float), kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[index])))
        adjusted[index] = running
    return [float(v) for v in adjusted]


def with_holm(differences: Sequence[Difference]) -> list[Difference]:
    """Each difference with ``p_holm`` adjusted over those of the family that have a
    p-value (the others keep ``None``)."""
    tested = [i for i, d in enumerate(differences) if d.p_value is not None]
    adjusted = holm([differences[i].p_value for i in tested])  # type: ignore[misc]
    out = list(differences)
    for i, p in zip(tested, adjusted, strict=True):
        out[i] = replace(out[i], p_holm=p)
    return out


def stability(survivor_sets: Sequence[np.ndarray]) -> float | None:
    """Mean share of a day's survivors that survive again at the next day (days with
    survivors and a next day only); None when no such day."""
    shares = [
        float((now & after).sum() / now.sum())
        for now, after in itertools.pairwise(survivor_sets)
        if now.sum()
    ]
    return float(np.mean(shares)) if shares else None


def negated(diff: Difference) -> Difference:
    """The difference of the negated outcomes (same resamples, same p-values)."""

    def neg(value: float | None) -> float | None:
        return None if value is None else -value

    return replace(diff, estimate=neg(diff.estimate), low=neg(diff.high), high=neg(diff.low))
