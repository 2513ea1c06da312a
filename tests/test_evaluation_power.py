"""A small fixed-seed version of benchmarks/evaluation_power.py: the evaluation calls random
walks no evidence and truly mean-reverting pairs planted among them evidence.

Three random-walk universes and three planted ones (four groups of three assets, OU
deviations of standard deviation 0.20, half-lives 5 to 20 days), 30 assets over 1,100 days,
as-of days every 10 days. The study's false-evidence rate is about 5 % (3 of 40 in its
reduced run), so three null universes all read "no evidence" with probability near 85 %;
the seeds are fixed, so the test is deterministic. Planted: at least two of three must be evidence.
"""

from __future__ import annotations

import pytest

from tests.support.power_universe import evaluate_universe, planted, universe

EVERY = 10


def readings(seed: int, deviation_sd: float) -> list[str]:
    groups = planted(deviation_sd) if deviation_sd > 0 else ()
    u, candles = universe(seed, groups)
    return [h.difference.reading for h in evaluate_universe(u, candles, EVERY).results[0].horizons]


@pytest.mark.parametrize("seed", [10_000, 10_001, 10_002])
def test_random_walks_are_not_called_evidence(seed):
    assert "evidence" not in readings(seed, 0.0)


def test_planted_mean_reverting_pairs_are_called_evidence():
    called = [readings(seed, 0.20)[0] == "evidence" for seed in (20_000, 20_001, 20_002)]
    assert sum(called) >= 2, called
