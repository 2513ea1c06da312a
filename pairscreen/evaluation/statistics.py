"""Survivors against the rest: summaries and a paired difference whose interval respects
the days.

Every outcome of one as-of day shares that day's market move, and with horizons longer than
the step between days consecutive days share most of their forward window. The comparison
is therefore made within each day first: ``D_t``, the survivors' mean outcome minus that of
the other pairs in the same zones on day ``t``, in which the day's common move cancels. The
estimate averages the ``D_t`` (weighted by how precisely each is known), and its standard
error sums the autocovariances of the days' errors up to ``ceil(horizon / every) - 1``
as-of days apart (the flat kernel: the forward windows of days that far apart overlap, so
their errors are a moving average of that order). Every day can then be an as-of day: a
denser grid adds information instead of repeating it uncounted.

The test is one-sided: the question is whether the rules' survivors revert *more* than the
other pairs in their zones, so the whole 5 % goes to that side (``alternative`` "greater";
a measure that is the negated reversion, holding the other leg, tests "less"). A two-sided
test spent half of it on the opposite finding (the rules pick pairs that revert less), which
is not the claim under test, and needed a difference about 15 % larger to be seen as often
(with 14 degrees of freedom, 2.14 + 0.87 standard errors instead of 1.76 + 0.87). The 95 %
interval stays two-sided: it describes the differences the data allow, a worse selection
included.

The p-value and the interval use Student's t with the degrees of freedom the flat-kernel
estimate of the variance actually has (:func:`overlap_reference`, Satterthwaite's
equivalent degrees of freedom under the overlap model, rounded, about two thirds of the
independent periods): with a few dozen periods the estimated standard error is itself
uncertain, and a reference with more degrees of freedom than it holds calls chance evidence
more often than it states (up to 6 % with one less than the periods, in simulated
series). Pairs that repeat from day to day are not treated as independent draws (that
double-counted the noise and hid real edges); a result carried by one pair is refused by the
concentration rule of :func:`shortfalls` instead.

:func:`holm` adjusts a family of p-values, :func:`with_fixed_sequence` tests the screen's
own horizons in a fixed order (the shortest first, each at the full 5 % while the ones before
it are evidence); ``min_detectable`` is the true difference the design calls evidence with
80 % power at the level its family leaves the test.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

POWER = 0.80  # the power min_detectable is stated at
METHOD = "paired_day_difference_overlap_hac"
GREATER = "greater"  # the alternative: survivors revert more than the rest
LESS = "less"

# Below these a difference is "too few observations", never evidence.
MIN_SURVIVOR_OBSERVATIONS = 30
MIN_INDEPENDENT_DAYS = 8
MAX_TOP_PAIR_SHARE = 0.25
EVIDENCE_LEVEL = 0.05  # adjusted p below this, and enough observations: evidence
HOLM = "holm"  # adjustments of ``p_holm``: Holm's step-down over the family
FIXED_SEQUENCE = "fixed_sequence"  # each test at the full level while the earlier are evidence

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
    """Survivors' mean minus the rest's, with a 95 % interval (Student's t), its p-value
    and, once the whole run is known, the Holm-adjusted p-value and the reading."""

    estimate: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    min_detectable: float | None
    block_days: int  # as-of days whose forward windows overlap (the error's lags, plus one)
    resamples: int  # 0: the error is computed, not resampled (kept for readers of the JSON)
    p_value: float | None = None
    p_holm: float | None = None
    too_few: bool = True  # set by the caller from the observation rules
    degrees_of_freedom: int | None = None  # the error's equivalent degrees of freedom, rounded
    family: int = 1  # comparisons its adjustment covers
    alternative: str = GREATER  # the side the one-sided p-value tests
    paired_days: int = 0  # as-of days with both groups: the days the estimate averages
    adjustment: str = HOLM  # how ``p_holm`` was adjusted over the family

    @property
    def reading(self) -> str:
        """``too_few_observations``, ``evidence`` (Holm-adjusted one-sided p below 5 %, so
        the estimate is on the side of the alternative) or ``no_evidence``."""
        if self.too_few or self.estimate is None:
            return TOO_FEW
        if self.p_holm is not None and self.p_holm < EVIDENCE_LEVEL:
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
            "method": METHOD,
            "degrees_of_freedom": self.degrees_of_freedom,
            "family": self.family,
            "alternative": self.alternative,
            "paired_days": self.paired_days,
            "adjustment": self.adjustment,
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


def shortfalls(
    survivors: GroupSummary, rest: GroupSummary, block_days: int, points: str = "as-of days"
) -> list[str]:
    """Why a difference is too few observations to be evidence: one sentence per reason,
    none when it may be read as evidence; ``points`` names the as-of points (``as-of
    closes`` on an intraday universe)."""
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
                f"periods of {block_days} {points} (fewer than {MIN_INDEPENDENT_DAYS}): "
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


def difference(obs: Observations, block_days: int) -> Difference:
    """The paired within-day difference, its standard error and its test.

    Each as-of day with both groups gives ``D_t`` = survivors' mean minus the rest's mean;
    the estimate is their average weighted by ``w_t = n_s n_r / (n_s + n_r)`` (the precision
    of ``D_t`` when outcomes share a day effect and otherwise scatter alike). Its standard
    error sums the autocovariances of the days' errors up to ``block_days - 1`` as-of days
    apart (``block_days`` covers the horizon: how far forward windows overlap)."""
    days = obs.days
    block = max(1, min(block_days, days)) if days else max(1, block_days)
    day_s, day_r = _day_means(obs)
    counts_s, counts_r = day_s[1], day_r[1]
    both = (counts_s > 0) & (counts_r > 0)
    weight = np.where(both, counts_s * counts_r / np.maximum(counts_s + counts_r, 1), 0.0)
    return daily_difference(np.where(both, day_s[0] - day_r[0], 0.0), weight, block)


def daily_difference(gap: np.ndarray, weight: np.ndarray, block: int) -> Difference:
    """:func:`difference` from its days: ``gap`` the survivors' mean minus the rest's per
    as-of day and ``weight`` its ``w_t`` (0 on days without both groups), ``block`` as-of
    days whose forward windows overlap. The power study replays its records with it."""
    mean = overlap_mean(gap, weight, block)
    if mean is None:
        return Difference(None, None, None, None, None, block, 0)
    estimate, se, df, paired = mean
    if se is None or df is None:
        return Difference(estimate, None, None, None, None, block, 0, paired_days=paired)
    return tested_difference(estimate, se, df, block, paired)


def tested_difference(estimate: float, se: float, df: int, block: int, paired: int) -> Difference:
    """A difference with its standard error and degrees of freedom, tested: the two-sided
    95 % interval and the one-sided p-value (Student's t), and its ``min_detectable`` at the
    full 5 %. The power study's candidate designs build theirs with it too."""
    half = _t_quantile(1.0 - EVIDENCE_LEVEL / 2.0, df) * se
    return Difference(
        estimate,
        estimate - half,
        estimate + half,
        se,
        detectable(se, df, 1),
        block,
        0,
        one_sided_p(estimate, se, df, GREATER),
        degrees_of_freedom=df,
        paired_days=paired,
    )


def overlap_mean(
    values: np.ndarray, weight: np.ndarray, block: int
) -> tuple[float, float | None, int | None, int] | None:
    """The ``weight``-weighted mean of one value per as-of day (weight 0: no value that day),
    its overlap-aware standard error and that error's equivalent degrees of freedom, and the
    days with a value; None without any. The error sums the autocovariances of the days'
    weighted errors up to ``block - 1`` days apart (:func:`_overlap_standard_error`), scaled
    to be unbiased under the overlap model, with Satterthwaite's degrees of freedom
    (:func:`overlap_reference`); both None with fewer than two periods of ``block`` days."""
    if values.size == 0 or not (weight > 0).any():
        return None
    values = np.where(weight > 0, values, 0.0)
    estimate = float((weight * values).sum() / weight.sum())
    paired = int((weight > 0).sum())
    if paired // block < 2:
        return estimate, None, None, paired
    se = _overlap_standard_error(weight * (values - estimate) / weight.sum(), block)
    if not se > 0:
        return estimate, None, None, paired
    factor, equivalent = overlap_reference(weight, block)
    se *= math.sqrt(factor)
    df = max(1, math.floor(equivalent + 0.5))  # the nearest whole number: an integer field
    return estimate, se, df, paired


def overlap_reference(weight: np.ndarray, block: int) -> tuple[float, float]:
    """The factor that makes the flat-kernel variance unbiased, and its equivalent degrees
    of freedom, under the overlap model: ``D_t`` errors of variance ``1 / w_t`` whose
    correlation falls linearly to zero at ``block`` as-of days apart (forward windows
    sharing ``block - k`` of their ``block`` steps). ``weight`` holds ``w_t`` on the day
    grid (0 on days without both groups).

    The estimated variance is a quadratic form ``e' A e`` of the days' errors (their
    residuals from the estimate, summed by the flat kernel). Its mean ``tr(A S)`` falls
    short of the estimate's variance ``w' S w`` (the residuals are measured from the
    estimated mean: about the share :func:`demeaning_correction` states); the factor is
    their ratio. Its spread gives Satterthwaite's degrees of freedom
    ``tr(A S)^2 / tr(A S A S)``: with 94 as-of days in blocks of 6 about 10, not the 14
    independent periods less one, since the flat kernel's lags are themselves estimated.
    Simulated ``D_t`` series of this model, of partly independent and of heavier-tailed
    errors (benchmarks/evaluation_overlap_size.py) keep the one-sided 5 % test at 3.7 to
    4.8 % (with 14 degrees of freedom: 3.9 to 6.0 %). The work is ``O(T^2)`` for ``T`` days."""
    days = weight.size
    share = weight / weight.sum()
    paired = weight > 0
    scale = np.where(paired, 1.0 / np.sqrt(np.where(paired, weight, 1.0)), 0.0)
    lag = np.abs(np.subtract.outer(np.arange(days), np.arange(days)))
    covariance = np.clip(1.0 - lag / block, 0.0, None) * np.outer(scale, scale)
    # influence = B e with B = diag(share) - share share' (the residuals, weighted)
    b_cov = share[:, None] * covariance - np.outer(share, share @ covariance)
    kernel_b_cov = _band_sum(b_cov, block - 1)
    a_cov = share[:, None] * kernel_b_cov - np.outer(share, share @ kernel_b_cov)
    mean = float(np.trace(a_cov))
    if not mean > 0:
        return 1.0, float(max(1, days // block - 1))
    variance = float(share @ covariance @ share)
    spread = float(np.sum(a_cov * a_cov.T))
    return variance / mean, mean * mean / spread


def _band_sum(matrix: np.ndarray, lags: int) -> np.ndarray:
    """Row ``i`` of the result sums rows ``i - lags`` … ``i + lags`` of ``matrix`` (the flat
    kernel's band of ones times ``matrix``), by cumulative sums."""
    days = matrix.shape[0]
    running = np.vstack([np.zeros((1, matrix.shape[1])), np.cumsum(matrix, axis=0)])
    rows = np.arange(days)
    out: np.ndarray = (
        running[np.minimum(rows + lags + 1, days)] - running[np.maximum(rows - lags, 0)]
    )
    return out


def demeaning_correction(days: int, block: int) -> float:
    """The factor that undoes the small-sample bias of the flat-kernel sum: the days' errors
    are measured from the estimated mean, which takes from each of the ``2 (block - 1) + 1``
    autocovariances summed about the variance of that mean, so the sum falls short by a share
    ``(2 block - 1) / days`` of itself; the standard error is scaled by
    ``sqrt(days / (days - 2 block + 1))``: 6 % at the power study's size (94 as-of days,
    blocks of 6). :func:`overlap_reference` computes the factor exactly (and agrees within
    half a percent there); this approximation reads records of studies that stored the
    uncorrected error."""
    summed = 2 * block - 1
    return math.sqrt(days / (days - summed)) if days > summed else 1.0


def _overlap_standard_error(influence: np.ndarray, block: int) -> float:
    """The standard error of a weighted mean of daily differences whose forward windows
    overlap for ``block`` consecutive as-of days: ``influence`` holds each day's share of
    the estimate's error (``w_t (D_t - estimate) / sum w``, 0 on days without both groups).

    Overlapping windows make the days' errors a moving average of order ``block - 1``, whose
    variance is exactly the sum of the autocovariances up to that lag (the flat kernel).
    A block bootstrap of ``block`` days weights them down linearly (Bartlett) and so
    understated the error by about a fifth (random walks were called evidence twice as
    often as stated). When the flat sum is not positive, which a short sample can give,
    Bartlett weights over twice the lags are used: never negative, and nearly unbiased."""
    lags = min(block - 1, influence.size - 1)
    covariances = [float(influence @ influence)]
    covariances += [
        float(influence[:-k] @ influence[k:]) for k in range(1, 2 * lags + 2) if k < influence.size
    ]
    flat = covariances[0] + 2.0 * sum(covariances[1 : lags + 1])
    if flat > 0:
        return math.sqrt(flat)
    width = 2 * lags + 2
    tapered = covariances[0] + 2.0 * sum(
        (1.0 - k / width) * c for k, c in enumerate(covariances[1:width], start=1)
    )
    return math.sqrt(max(tapered, 0.0))


def detectable(se: float, df: int, family: int) -> float:
    """The smallest true difference this design calls evidence 4 times in 5: the one-sided
    critical value at ``EVIDENCE_LEVEL / family`` (Holm's first step, a bound for the later
    ones; ``family`` 1 for a test at the full level, as in a fixed sequence) plus the 80 %
    quantile, both of Student's t with ``df``, times the standard error."""
    critical = _t_quantile(1.0 - EVIDENCE_LEVEL / family, df)
    return float((critical + _t_quantile(POWER, df)) * se)


def one_sided_p(estimate: float, se: float, df: int, alternative: str) -> float:
    """The p-value of ``estimate / se`` against Student's t with ``df``, on the side of
    ``alternative`` (``greater``: the chance of a statistic at least this large)."""
    from scipy.special import stdtr

    statistic = estimate / se
    return float(stdtr(df, -statistic if alternative == GREATER else statistic))


def _day_means(obs: Observations) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per as-of day, for survivors then the rest: (mean value, count); mean 0 where none."""
    out = []
    for side in (True, False):
        mask = obs.survivor == side
        count = np.bincount(obs.day[mask], minlength=obs.days).astype(float)
        total = np.bincount(obs.day[mask], weights=obs.values[mask], minlength=obs.days)
        out.append((np.divide(total, count, out=np.zeros(obs.days), where=count > 0), count))
    return tuple(out)


def _t_quantile(probability: float, df: int) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, probability))


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
    p-value (the others keep ``None``), its ``family`` size, and ``min_detectable`` at the
    level the family leaves it."""
    tested = [i for i, d in enumerate(differences) if d.p_value is not None]
    adjusted = holm([differences[i].p_value for i in tested])  # type: ignore[misc]
    family = max(1, len(tested))
    out = list(differences)
    for i, p in zip(tested, adjusted, strict=True):
        d = out[i]
        assert d.standard_error is not None and d.degrees_of_freedom is not None
        out[i] = replace(
            d,
            p_holm=p,
            family=family,
            min_detectable=detectable(d.standard_error, d.degrees_of_freedom, family),
        )
    return out


def with_fixed_sequence(differences: Sequence[Difference]) -> list[Difference]:
    """The differences that have a p-value tested in the order given (the first is the
    primary comparison), each at the full 5 % level while every one before it is evidence
    (the fixed-sequence procedure: the family-wise error stays 5 %, since no later test can
    be evidence unless the first, tested alone at 5 %, is). Its adjusted p-value, filled in
    ``p_holm``, is the largest raw p-value up to and including its own; ``min_detectable``
    is at the full level (for a later comparison, once those before it are evidence)."""
    tested = [i for i, d in enumerate(differences) if d.p_value is not None]
    family = max(1, len(tested))
    out = list(differences)
    running = 0.0
    for i in tested:
        d = out[i]
        assert d.p_value is not None
        assert d.standard_error is not None and d.degrees_of_freedom is not None
        running = max(running, d.p_value)
        out[i] = replace(
            d,
            p_holm=running,
            family=family,
            adjustment=FIXED_SEQUENCE,
            min_detectable=detectable(d.standard_error, d.degrees_of_freedom, 1),
        )
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
    """The difference of the negated outcomes (same standard error, same p-values, the
    opposite alternative)."""

    def neg(value: float | None) -> float | None:
        return None if value is None else -value

    opposite = LESS if diff.alternative == GREATER else GREATER
    return replace(
        diff,
        estimate=neg(diff.estimate),
        low=neg(diff.high),
        high=neg(diff.low),
        alternative=opposite,
    )


@dataclass(frozen=True)
class SeriesMean:
    """The mean of one value per as-of day with its 95 % interval (Student's t), the
    standard error summing the autocovariances of overlapping forward windows."""

    estimate: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    degrees_of_freedom: int | None
    block_days: int


def series_mean(values: np.ndarray, block_days: int) -> SeriesMean:
    """The mean of ``values`` (one per as-of day, NaN where a day has none) with the error of
    :func:`difference` (:func:`overlap_mean`, every day weighted alike): flat-kernel
    autocovariances up to ``block_days - 1`` days apart, scaled to be unbiased under the
    overlap model, and Satterthwaite's equivalent degrees of freedom. One less than the
    independent periods, used before, overstated what the flat kernel's estimate holds (at
    94 as-of days in blocks of 6: 14 against about 10), so the interval was too narrow."""
    block = max(1, block_days)
    known = np.isfinite(values)
    mean = overlap_mean(np.where(known, values, 0.0), known.astype(float), block)
    if mean is None:
        return SeriesMean(None, None, None, None, None, block)
    estimate, se, df, _days = mean
    if se is None or df is None:
        return SeriesMean(estimate, None, None, None, None, block)
    half = _t_quantile(1.0 - EVIDENCE_LEVEL / 2.0, df) * se
    return SeriesMean(estimate, estimate - half, estimate + half, se, df, block)
