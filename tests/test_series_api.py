"""``/pair/{a}/{b}/series``: the chart's numbers as JSON, one quota unit, equal to the chart's."""

from __future__ import annotations

import math

import numpy as np

from pairscreen.db.connection import database
from pairscreen.screening.chart import chart_data

BASE = "/api/v1"


def test_series_carries_the_chart_numbers_and_costs_one_unit(client, keys, runtime):
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    # A survivor whose legs both trade, so that the trades are compared too.
    a, b = next(
        s["pair"]
        for s in screen["survivors"]
        if s["backtest"]["A"]["n_trades"] and s["backtest"]["B"]["n_trades"]
    )
    me = client.get(f"{BASE}/me", keys.personal).json()["quota"]["remaining_today"]
    r = client.get(f"{BASE}/pair/{a.lower()}/{b}/series", keys.personal)
    assert r.status_code == 200, r.text
    assert client.get(f"{BASE}/me", keys.personal).json()["quota"]["remaining_today"] == me - 1
    series = r.json()
    with database.connection_context():
        chart = chart_data(runtime, *runtime.universe.pair(a, b), 360)
    n = len(chart.dates)
    assert series["pair"] == f"{a}/{b}" and series["bt_days"] == 360
    assert len(series["dates"]) == len(series["log_ratio"]) == n
    assert series["dates"][-1] == str(chart.dates[-1].astype("datetime64[D]"))
    assert series["log_ratio"] == chart.log_ratio.tolist()
    start = chart.backtest_start_index
    assert series["backtest_start"] == series["dates"][start]
    for name in ("p5", "p15", "p85", "p95"):
        values = series["bands"][name]
        assert values[:start] == [None] * start
        assert values[start:] == chart.bands[name][start:].tolist()
    low, high = (np.array(series["triggers"][k][start:]) for k in ("low", "high"))
    p5, p95 = (np.array(series["bands"][k][start:]) for k in ("p5", "p95"))
    assert np.allclose(low, p5 + 0.2 * (p95 - p5)) and np.allclose(high, p5 + 0.8 * (p95 - p5))
    for leg in ("A", "B"):
        assert len(series["trades"][leg]) == len(chart.trades[leg]) > 0
        for shown, trade in zip(series["trades"][leg], chart.trades[leg], strict=True):
            assert shown["date"] == str(trade.day) and shown["bought"] == trade.bought
    assert np.allclose(series["ratio"], np.exp(chart.log_ratio))
    position = np.array(series["position"][start:])
    r = np.array(series["log_ratio"][start:])
    assert series["position"][:start] == [None] * start
    assert np.allclose(position, (r - p5) / (p95 - p5))
    current = series["current"]
    assert current["log_ratio"] == series["log_ratio"][-1]
    snapshot = client.get(f"{BASE}/pair/{a}/{b}", keys.personal).json()
    assert math.isclose(current["position"], snapshot["metrics"]["position"])
    assert math.isclose(series["position"][-1], current["position"], abs_tol=1e-9)
    assert current["zone"] == snapshot["metrics"]["zone"]


def test_series_refusals_cost_nothing(client, keys):
    assert client.get(f"{BASE}/pair/NOPE/BTC/series", keys.personal).status_code == 404
    assert client.get(f"{BASE}/pair/BTC/BTC/series", keys.personal).status_code == 400
    assert client.get(f"{BASE}/pair/ETH/BTC/series?bt=7", keys.personal).status_code == 400
    me = client.get(f"{BASE}/me", keys.personal).json()["quota"]
    assert me["used_today"] == 0
