"""A panel computes per-asset work once per distinct asset, with the very floats of every row.

A screen's panel is a few assets against many, so half its legs repeat; the engine's panel
(``engine.batch_panel.BatchPanel``) computes a leg's work once per asset its ``leg_ids``
name and hands every row the same floats a row-by-row computation gives. These tests check
that bit for bit, on legs that repeat within a side, across sides, once in every row, and
not at all; a plain panel (a plugin's own) computes every row.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from pairscreen_plugins.metrics.cointegration import CointegrationMetric
from pairscreen_plugins.metrics.correlation import ReturnCorrelationMetric
from pairscreen_plugins.metrics.johansen import JohansenMetric

from pairscreen import PairPanel
from pairscreen.contracts import Candles
from pairscreen.engine.batch_panel import BatchPanel, flipped, leg_ids, select_rows
from pairscreen.engine.calendar import CandleMatrix

DAYS = 700


def matrix(n_assets: int, seed: int) -> CandleMatrix:
    rng = np.random.default_rng(seed)
    dates = np.datetime64("2024-01-01") + np.arange(DAYS)
    candles = {}
    for k in range(n_assets):
        close = 50.0 * np.exp(np.cumsum(rng.normal(0, 0.03, DAYS)))
        candles[f"X{k}"] = Candles(f"X{k}", dates, close, rng.uniform(1e3, 1e6, DAYS))
    return CandleMatrix.of(candles, sorted(candles, key=lambda t: int(t[1:])))


def logs_and_means(closes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    logs = np.log(closes)
    return logs, logs.mean(axis=1)


@pytest.mark.parametrize(
    "ia, ib",
    [
        ([0, 0, 0, 0, 0], [1, 2, 3, 4, 5]),  # one asset against many: broadcast
        ([0, 0, 1, 1, 2], [3, 4, 2, 5, 6]),  # repeats within A, and asset 2 on both sides
        ([5, 1, 5, 3, 0], [0, 5, 2, 1, 4]),  # ids in no order, repeats across sides
        ([0, 1, 2, 3], [4, 5, 6, 7]),  # every asset once
    ],
)
def test_each_leg_gives_every_row_the_floats_of_its_own_computation(ia, ib):
    ia, ib = np.array(ia), np.array(ib)
    panel = matrix(8, seed=3).panel(ia, ib, np.ones((ia.size, DAYS), bool), 600, 540)
    assert isinstance(panel, BatchPanel) and panel.leg_ids is not None
    columns = slice(59, None)
    (logs_a, means_a), (logs_b, means_b) = panel.each_leg(logs_and_means, columns)
    for got, closes in ((logs_a, panel.close_a), (logs_b, panel.close_b)):
        for row in range(ia.size):
            want = np.log(closes[row, columns])
            assert got[row].tobytes() == want.tobytes()
    for got, closes in ((means_a, panel.close_a), (means_b, panel.close_b)):
        want = np.log(closes[:, columns]).mean(axis=1)
        assert got.tobytes() == want.tobytes()


def test_without_leg_ids_every_row_is_computed():
    calls = []

    def count(closes: np.ndarray) -> tuple[np.ndarray]:
        calls.append(closes.shape[0])
        return (np.log(closes),)

    shared = matrix(4, seed=5).panel(
        np.array([0, 0, 0]), np.array([1, 2, 3]), np.ones((3, DAYS), bool), 600, 540
    )
    shared.each_leg(count, slice(None))
    assert calls == [4]  # the four distinct assets, once each
    calls.clear()
    assert isinstance(shared, BatchPanel)
    unknown = replace(shared, leg_ids=None)
    unknown.each_leg(count, slice(None))
    assert calls == [3, 3]


def test_rows_and_flipped_keep_the_leg_ids_in_step():
    panel = matrix(6, seed=7).panel(
        np.array([0, 0, 1, 2]), np.array([3, 4, 5, 5]), np.ones((4, DAYS), bool), 600, 540
    )
    some = leg_ids(select_rows(panel, np.array([3, 1])))
    assert some is not None
    assert some[0].tolist() == [2, 0] and some[1].tolist() == [5, 4]
    turned = leg_ids(flipped(panel))
    assert turned is not None
    assert turned[0].tolist() == [3, 4, 5, 5] and turned[1].tolist() == [0, 0, 1, 2]
    assert leg_ids(select_rows(panel, slice(1, 3)))[0].tolist() == [0, 1]  # type: ignore[index]


def test_a_panel_a_plugin_builds_computes_every_row():
    """A plain panel (the test kit's, a plugin's own test) knows no leg ids: each_leg runs
    ``compute`` on each side's rows, with the same floats."""
    calls = []

    def count(closes: np.ndarray) -> tuple[np.ndarray]:
        calls.append(closes.shape[0])
        return (np.log(closes),)

    shared = matrix(4, seed=5).panel(
        np.array([0, 0, 0]), np.array([1, 2, 3]), np.ones((3, DAYS), bool), 600, 540
    )
    plain = PairPanel(
        shared.a,
        shared.b,
        shared.dates,
        shared.close_a,
        shared.close_b,
        shared.volume_a,
        shared.volume_b,
        shared.window_days,
    )
    (got_a,), (got_b,) = plain.each_leg(count, slice(None))
    assert calls == [3, 3] and leg_ids(plain) is None and leg_ids(flipped(plain)) is None
    (want_a,), (want_b,) = shared.each_leg(count, slice(None))
    assert got_a.tobytes() == np.ascontiguousarray(want_a).tobytes()
    assert got_b.tobytes() == np.ascontiguousarray(want_b).tobytes()


@pytest.mark.parametrize(
    "metric", [CointegrationMetric(), JohansenMetric(), ReturnCorrelationMetric()]
)
def test_metrics_on_shared_legs_equal_metrics_row_by_row(metric):
    """The metrics reading per-asset work through ``each_leg`` publish the same bits whether
    the panel knows its shared legs or not."""
    n = 12
    ia = np.array([0] * 6 + [1] * 4 + [2, 3])
    ib = np.array([1, 2, 3, 4, 5, 6, 2, 3, 4, 7, 3, 1])
    panel = matrix(8, seed=11).panel(ia, ib, np.ones((n, DAYS), bool), 600, 540)
    alone = PairPanel(
        a=panel.a,
        b=panel.b,
        dates=np.array(panel.dates),
        close_a=np.array(panel.close_a),
        close_b=np.array(panel.close_b),
        volume_a=np.array(panel.volume_a),
        volume_b=np.array(panel.volume_b),
        window_days=panel.window_days,
    )
    shared, separate = metric.compute(panel), metric.compute(alone)
    assert shared.keys() == separate.keys()
    for name in shared:
        assert np.asarray(shared[name]).tobytes() == np.asarray(separate[name]).tobytes(), name
