"""A small fixed-seed version of benchmarks/evaluation_power.py: the evaluation calls random
walks no evidence and truly mean-reverting pairs planted among them evidence.

The study's own design (30 assets over 1,100 days, as-of days every 5 days over the default
range, the default rules, horizons 30 and 90) on its first three simulations of two
scenarios: random walks, and planted groups (four groups of three assets, OU deviations of
standard deviation 0.16, half-lives 5 to 20 days). Tolerance, from the study
(docs/methodology.md, "The power study", 100 universes a scenario): random walks were called
evidence in 3 of 100, and the test's size is about 5 % on simulated daily differences, so
three of them all read "no evidence" with probability about 0.86; planted universes at this
level (+6.75 pp at 30 days on average) were called evidence in 83 of 100, so at least two of
three are with probability about 0.93. The seeds are fixed (these are simulations 0 to 2 of
the study, all three evidence there), so the test is deterministic; it fails when a change
makes the evaluation call chance evidence or miss an edge the study sees in most universes.
"""

from __future__ import annotations

import pytest

from tests.support.power_universe import evaluate_universe, planted, universe

EVERY = 5
LEVEL = 0.16


def readings(seed: int, deviation_sd: float) -> list[str]:
    groups = planted(deviation_sd) if deviation_sd > 0 else ()
    u, candles = universe(seed, groups)
    return [h.difference.reading for h in evaluate_universe(u, candles, EVERY).results[0].horizons]


@pytest.mark.parametrize("seed", [10_000, 10_001, 10_002])
def test_random_walks_are_not_called_evidence(seed):
    assert "evidence" not in readings(seed, 0.0)


def test_planted_mean_reverting_pairs_are_called_evidence():
    called = [readings(seed, LEVEL)[0] == "evidence" for seed in (20_000, 20_001, 20_002)]
    assert sum(called) >= 2, called
