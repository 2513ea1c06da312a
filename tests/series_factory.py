"""Deterministic price-pair series for the parity tests (a helper module, not a test).

Every series comes from its own ``numpy.random.default_rng(seed)``, so a failing case can be
rebuilt alone from its name. The kinds cover what the metrics and the backtest must get
right: mean-reverting ratios (an AR(1)/Ornstein-Uhlenbeck log-ratio), random walks, trending
ratios, short histories (200..900 days), and flat stretches (constant segments, a ratio that
is 95 % constant, and a fully constant ratio) where ties, zero-variance chunks and degenerate
regressions live. Daily volatilities are crypto-like (3-5 %).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The built-in plugins live in the source root ``plugins/`` (pyproject maps it as a package
# root); from an uninstalled checkout, make it importable the same way.
_ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("pairscreen_plugins") is None:
    sys.path.insert(0, str(_ROOT / "plugins"))

from pairscreen import PairPanel  # noqa: E402

LAST_DAY = np.datetime64("2025-06-30")


@dataclass(frozen=True)
class PairSeries:
    """One pair's aligned daily closes and quote volumes, oldest first."""

    name: str
    close_a: np.ndarray
    close_b: np.ndarray
    volume_a: np.ndarray
    volume_b: np.ndarray

    @property
    def n_days(self) -> int:
        return int(self.close_a.size)

    @property
    def dates(self) -> np.ndarray:
        return LAST_DAY - np.arange(self.n_days)[::-1]

    @property
    def log_ratio(self) -> np.ndarray:
        return np.log(self.close_a / self.close_b)


def _leg_b(rng: np.random.Generator, n: int, vol: float) -> np.ndarray:
    return 20.0 * np.exp(np.cumsum(rng.normal(0.0, vol, n)))


def _volumes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.lognormal(15.0, 0.5, n), rng.lognormal(14.0, 0.7, n)


def _pair(name: str, rng: np.random.Generator, log_ratio: np.ndarray, vol_b: float) -> PairSeries:
    n = log_ratio.size
    close_b = _leg_b(rng, n, vol_b)
    close_a = close_b * np.exp(log_ratio + rng.normal(0.0, 0.5))
    volume_a, volume_b = _volumes(rng, n)
    return PairSeries(name, close_a, close_b, volume_a, volume_b)


def ou_log_ratio(rng: np.random.Generator, n: int, phi: float, vol: float) -> np.ndarray:
    """An AR(1) log-ratio (a discretised Ornstein-Uhlenbeck process) around zero."""
    shocks = rng.normal(0.0, vol, n)
    out = np.empty(n)
    out[0] = shocks[0] / np.sqrt(1 - phi**2)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + shocks[t]
    return out


def mean_reverting(seed: int, n: int = 900) -> PairSeries:
    rng = np.random.default_rng(seed)
    phi = rng.uniform(0.90, 0.99)
    vol = rng.uniform(0.03, 0.05)
    return _pair(f"mean_reverting[{seed}]", rng, ou_log_ratio(rng, n, phi, vol), 0.04)


def random_walk(seed: int, n: int = 900) -> PairSeries:
    rng = np.random.default_rng(seed)
    vol = rng.uniform(0.03, 0.05)
    return _pair(f"random_walk[{seed}]", rng, np.cumsum(rng.normal(0.0, vol, n)), 0.04)


def trending(seed: int, n: int = 900) -> PairSeries:
    rng = np.random.default_rng(seed)
    vol = rng.uniform(0.03, 0.05)
    drift = rng.choice([-1.0, 1.0]) * rng.uniform(0.002, 0.006)
    steps = drift + rng.normal(0.0, vol, n)
    # Positively autocorrelated steps: momentum, a Hurst exponent above one half.
    smoothed = np.convolve(steps, np.ones(5) / np.sqrt(5), mode="same")
    return _pair(f"trending[{seed}]", rng, np.cumsum(smoothed), 0.04)


def short_history(seed: int, n: int) -> PairSeries:
    """A mean-reverting or random-walk pair with only ``n`` (200..900) days."""
    series = mean_reverting(seed, n) if seed % 2 else random_walk(seed, n)
    return _renamed(series, f"short{n}[{seed}]")


def flat_segments(seed: int, n: int = 900) -> PairSeries:
    """A mean-reverting ratio frozen over a few stretches of 30-150 days (both legs still
    move, so the closes differ while the ratio does not)."""
    rng = np.random.default_rng(seed)
    lr = ou_log_ratio(rng, n, 0.95, 0.04)
    for _ in range(3):
        length = int(rng.integers(30, 150))
        start = int(rng.integers(0, n - length))
        lr[start : start + length] = lr[start]
    return _pair(f"flat_segments[{seed}]", rng, lr, 0.04)


def mostly_flat(seed: int, n: int = 900) -> PairSeries:
    """A ratio constant on 95 % of the days: p5 == p95, touches on both sides at once."""
    rng = np.random.default_rng(seed)
    lr = np.full(n, 0.3)
    moving = rng.choice(n, size=n // 20, replace=False)
    lr[moving] += rng.normal(0.0, 0.05, moving.size)
    return _pair(f"mostly_flat[{seed}]", rng, lr, 0.03)


def constant_ratio(seed: int, n: int = 900) -> PairSeries:
    """A exactly twice B every day: the log-ratio is constant (ln 2)."""
    rng = np.random.default_rng(seed)
    close_b = _leg_b(rng, n, 0.03)
    volume_a, volume_b = _volumes(rng, n)
    return PairSeries(f"constant_ratio[{seed}]", 2.0 * close_b, close_b, volume_a, volume_b)


def _renamed(series: PairSeries, name: str) -> PairSeries:
    return PairSeries(name, series.close_a, series.close_b, series.volume_a, series.volume_b)


SHORT_LENGTHS = (200, 201, 290, 333, 450, 540, 541, 600, 629, 720, 899)


def all_series() -> list[PairSeries]:
    """The parity corpus: 200+ pairs of every kind, deterministic."""
    out: list[PairSeries] = []
    out += [mean_reverting(1000 + i) for i in range(50)]
    out += [random_walk(2000 + i) for i in range(50)]
    out += [trending(3000 + i) for i in range(40)]
    out += [
        short_history(4000 + 10 * j + i, n) for j, n in enumerate(SHORT_LENGTHS) for i in range(4)
    ]
    out += [flat_segments(5000 + i) for i in range(12)]
    out += [mostly_flat(6000 + i) for i in range(3)]
    out += [constant_ratio(7000 + i) for i in range(2)]
    out += [constant_ratio(7100, 400)]
    return out


def panel(series: Sequence[PairSeries], **options: int) -> PairPanel:
    """A panel of series that all have the same length (one row each, in order)."""
    lengths = {s.n_days for s in series}
    if len(lengths) != 1:
        raise ValueError(f"a panel needs equal lengths, got {sorted(lengths)}")
    return PairPanel(
        a=tuple(f"{s.name}:A" for s in series),
        b=tuple(f"{s.name}:B" for s in series),
        dates=np.stack([s.dates for s in series]),
        close_a=np.stack([s.close_a for s in series]),
        close_b=np.stack([s.close_b for s in series]),
        volume_a=np.stack([s.volume_a for s in series]),
        volume_b=np.stack([s.volume_b for s in series]),
        **options,
    )


def by_length(series: Iterable[PairSeries]) -> dict[int, list[PairSeries]]:
    """Series grouped by length, so each group makes one multi-row panel."""
    groups: dict[int, list[PairSeries]] = defaultdict(list)
    for s in series:
        groups[s.n_days].append(s)
    return dict(groups)
