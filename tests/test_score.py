"""The built-in score: the formula, its clipping, its bounds and its plugin hook."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.series_factory  # noqa: F401  (makes the plugins importable from a checkout)
from pairscreen import Scorer

from pairscreen_plugins import score as score_plugin  # isort: skip


def scorer() -> Scorer:
    (found,) = score_plugin.pairscreen_register_scorers()
    return found


def metrics(**overrides: float) -> dict[str, np.ndarray]:
    """One pair whose every term is zero, with the given fields changed."""
    base = {
        "hurst": 0.5,
        "adf_pvalue": 0.7,
        "range_width": 0.0,
        "touches_low": 0,
        "touches_high": 0,
        "position": 0.5,
    }
    base.update(overrides)
    return {k: np.array([v]) for k, v in base.items()}


def test_registered_as_score() -> None:
    s = scorer()
    assert isinstance(s, Scorer) and s.name == "score"


def test_every_term_at_zero_scores_zero() -> None:
    assert scorer().score(metrics())[0] == 0.0


def test_perfect_pair_scores_100() -> None:
    m = metrics(
        hurst=0.2, adf_pvalue=0.0, range_width=1.5, touches_low=7, touches_high=9, position=-0.3
    )
    assert scorer().score(m)[0] == pytest.approx(100.0)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("hurst", 0.4, 35 * 0.5),  # (0.5 - 0.4) / 0.2
        ("hurst", 0.6, 0.0),  # clipped below
        ("adf_pvalue", 0.35, 15 * 0.5),  # 1 - 0.35 / 0.7
        ("adf_pvalue", 0.9, 0.0),
        ("range_width", 0.4, 20 * 0.4),
        ("range_width", 2.0, 20.0),  # clipped above
        ("position", 0.9, 15 * 0.8),  # |0.9 - 0.5| / 0.5
        ("position", 0.1, 15 * 0.8),  # both edges count
        ("position", 1.7, 15.0),
    ],
)
def test_each_term(field: str, value: float, expected: float) -> None:
    assert scorer().score(metrics(**{field: value}))[0] == pytest.approx(expected)


def test_touches_term_uses_the_weaker_side() -> None:
    assert scorer().score(metrics(touches_low=3, touches_high=10))[0] == pytest.approx(15 * 0.5)
    assert scorer().score(metrics(touches_low=12, touches_high=12))[0] == pytest.approx(15.0)


def test_a_missing_input_earns_its_term_nothing() -> None:
    m = metrics(hurst=0.3, range_width=float("nan"))
    assert scorer().score(m)[0] == pytest.approx(35.0)


def test_vectorised_over_pairs() -> None:
    m = {
        "hurst": np.array([0.3, 0.5, 0.45]),
        "adf_pvalue": np.array([0.0, 0.7, 0.35]),
        "range_width": np.array([1.0, 0.2, 0.5]),
        "touches_low": np.array([6, 0, 2]),
        "touches_high": np.array([6, 4, 3]),
        "position": np.array([0.0, 0.5, 0.75]),
    }
    expected = [100.0, 20 * 0.2, 35 * 0.25 + 15 * 0.5 + 20 * 0.5 + 15 * 2 / 6 + 15 * 0.5]
    np.testing.assert_allclose(scorer().score(m), expected)


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(
    hurst=finite,
    adf=finite,
    width=finite,
    low=st.integers(0, 1000),
    high=st.integers(0, 1000),
    position=finite,
)
def test_always_between_0_and_100(
    hurst: float, adf: float, width: float, low: int, high: int, position: float
) -> None:
    m = metrics(
        hurst=hurst,
        adf_pvalue=adf,
        range_width=width,
        touches_low=low,
        touches_high=high,
        position=position,
    )
    value = scorer().score(m)[0]
    assert 0.0 <= value <= 100.0 + 1e-9


@given(hurst=st.floats(0.0, 1.0), better=st.floats(0.0, 0.3))
def test_more_mean_reversion_never_scores_lower(hurst: float, better: float) -> None:
    worse = scorer().score(metrics(hurst=hurst))[0]
    assert scorer().score(metrics(hurst=hurst - better))[0] >= worse
