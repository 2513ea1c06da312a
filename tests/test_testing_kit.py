"""The plugin authors' test kit at the unit level: a panel from two arrays or a small CSV,
one metric, one filter, one strategy on it, with no database and no service; and the
service built from its arguments alone, the shell's ``PAIRSCREEN_*`` ignored.

The closes are the real ETH and BTC closes of ``tests/fixtures/realdata`` (600 days to
2023-12-31, provenance in its README).
"""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from pairscreen import Candles, MetricField, PairPanel
from pairscreen.engine.evaluate import OutOfContract
from pairscreen.testing import (
    pair_panel,
    panel_from_csv,
    plugin_service,
    run_filter,
    run_metric,
    run_strategy,
)
from tests.plugins import hook_plugin_options

from pairscreen_plugins.metrics.range_stats import RangeStatsMetric  # isort: skip
from pairscreen_plugins.rules import DefaultFilter  # isort: skip
from pairscreen_plugins.strategies.accumulation import AccumulationStrategy  # isort: skip

REAL = Path(__file__).parent / "fixtures" / "realdata"
LAST = date(2023, 12, 31)


def closes(ticker: str) -> tuple[list[str], np.ndarray]:
    with (REAL / f"{ticker}.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [r["date"] for r in rows], np.array([float(r["close"]) for r in rows])


def test_a_metric_runs_on_a_panel_of_two_arrays_or_a_csv_without_a_service(tmp_path) -> None:
    days, eth = closes("ETH")
    _, btc = closes("BTC")
    assert len(days) == 600 and days[-1] == LAST.isoformat()
    panel = pair_panel(eth, btc, tickers=("ETH", "BTC"), end=LAST)
    assert (panel.a, panel.b, panel.n_pairs) == (("ETH",), ("BTC",), 1)
    values = run_metric(RangeStatsMetric(), panel)
    w = np.log(eth[-540:] / btc[-540:])  # W: the last 540 daily log-ratios
    assert values["range_width"][0] == pytest.approx(w.max() - w.min(), rel=1e-12)
    assert values["range_width"].shape == (1,)
    # the same rows from a small CSV give the same panel and the same number
    path = tmp_path / "eth_btc.csv"
    rows = zip(days, eth.tolist(), btc.tolist(), strict=True)
    path.write_text("date,ETH,BTC\n" + "".join(f"{d},{a!r},{b!r}\n" for d, a, b in rows))
    from_csv = run_metric(RangeStatsMetric(), panel_from_csv(path))
    assert from_csv["range_width"][0] == values["range_width"][0]
    # without a full band window the metric's full-window field is null, as in the screen
    short = run_metric(RangeStatsMetric(), pair_panel(eth[-300:], btc[-300:], end=LAST))
    assert np.isnan(short["range_width"][0])


def test_a_metric_out_of_contract_and_bad_rows_are_refused_by_name(tmp_path) -> None:
    class TwoPerPair:
        name = "two"
        fields = (MetricField("two", "number", "two values a pair: out of contract"),)

        def compute(self, panel: PairPanel) -> dict[str, np.ndarray]:
            return {"two": np.zeros((panel.n_pairs, 2))}

    _, eth = closes("ETH")
    with pytest.raises(OutOfContract, match=r"field 'two' with shape \(1, 2\), not \(1,\)"):
        run_metric(TwoPerPair(), pair_panel(eth, eth))
    with pytest.raises(ValueError, match="close_b: every close must be a positive number"):
        pair_panel([1.0, 2.0], [1.0, -2.0])
    with pytest.raises(ValueError, match="close_a has 3 closes and close_b 2"):
        pair_panel([1.0, 2.0, 3.0], [1.0, 2.0])
    bad = tmp_path / "bad.csv"
    bad.write_text("day,A,B\n2023-01-01,1,2\n")
    with pytest.raises(ValueError, match="the header must be date,<ticker A>,<ticker B>"):
        panel_from_csv(bad)


def test_a_filter_runs_on_given_values_with_the_cores_rule_first() -> None:
    metrics = {
        "hurst": [0.3, 0.55, 0.3, 0.3],
        "adf_pvalue": [0.1, 0.1, 0.1, 0.1],
        "range_width": [0.5, 0.5, 0.5, 0.5],
        "touches_low": [3, 3, 3, 3],
        "touches_high": [3, 3, 3, 3],
    }
    history = [900, 900, 150, 900]
    reasons = run_filter(DefaultFilter(), metrics, history, depegged=[False, False, False, True])
    assert reasons == [
        "",
        "hurst: Hurst 0.550 is not below 0.5 (not mean-reverting)",
        "insufficient_history: 150 days of common history, at least 200 days needed",
        "depeg: a leg is in an active depeg event",
    ]
    looser = run_filter(DefaultFilter(), metrics, history, thresholds={
        **DefaultFilter().thresholds, "hurst_below": 0.6,
    })  # fmt: skip
    assert looser[1] == ""


def test_a_strategy_runs_both_legs_on_a_panel() -> None:
    _, eth = closes("ETH")
    _, btc = closes("BTC")
    panel = pair_panel(eth, btc, end=LAST)
    legs = run_strategy(AccumulationStrategy(), panel, 360)
    assert set(legs) == {"A", "B"}
    for leg in legs.values():
        assert leg.growth_pct.shape == (1,) and np.isfinite(leg.growth_pct[0])
        assert int(leg.history_days[0]) == 360


def test_the_service_reads_its_arguments_never_the_shells_pairscreen_variables(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("PAIRSCREEN_STRATEGY", "no_such_strategy")
    monkeypatch.setenv("PAIRSCREEN_WINDOW_DAYS", "30")
    monkeypatch.setenv("PAIRSCREEN_LOAD_PLUGINS", "")
    days = np.datetime64("2026-11-28") - np.arange(59, -1, -1)
    rng = np.random.default_rng(7)
    given = {
        t: Candles(t, days, 100 * np.exp(np.cumsum(rng.normal(0, 0.02, 60))), np.full(60, np.nan))
        for t in ("AAA", "BBB")
    }
    with plugin_service(
        tmp_path,
        hook_plugin_options,
        candles=given,
        options={"tests.plugins.hook_plugin_options": {"lookback_days": 5}},
        environ={"PAIRSCREEN_MIN_HISTORY_DAYS": "40"},
    ) as service:
        settings = service.runtime.settings
        assert settings.strategy == "accumulation" and settings.window_days == 540
        assert settings.load_plugins is None and settings.min_history_days == 40
        options = service.runtime.plugins.options["tests.plugins.hook_plugin_options"]
        assert options == {"lookback_days": 5, "scale": 1.0}
