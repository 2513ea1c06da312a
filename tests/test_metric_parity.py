"""Every built-in metric equals its reference on the whole series corpus.

References: ``pairscan_rmr`` (current_signal, is_mean_reverting, hurst_exponent), arch's
``VarianceRatio`` and statsmodels' ``adfuller`` (through ``pairscan_rmr.adf_pvalue``), each run
per series. Each series is checked alone (a one-row panel, the live ``/pair`` path) and inside
one multi-row panel per history length (the screen's batch path). Exact fields are compared
bit for bit; the rest within the tolerances of docs/methodology.md.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping

import numpy as np
import pairscan_rmr as rmr
import pytest
from arch.unitroot import VarianceRatio

from pairscreen import Metric, PairPanel
from pairscreen.engine.batch_panel import flipped
from tests.series_factory import PairSeries, all_series, by_length, panel

from pairscreen_plugins.metrics import (  # isort: skip
    bands,
    cointegration,
    correlation,
    half_life,
    mean_reversion,
    range_stats,
    volume,
)

WINDOW = 540
SERIES = all_series()
BY_NAME = {s.name: s for s in SERIES}
GROUPS = by_length(SERIES)
METRIC_MODULES = (bands, mean_reversion, range_stats, volume, half_life, cointegration, correlation)

EXACT = (
    "p5",
    "p15",
    "p85",
    "p95",
    "r_current",
    "position",
    "variance_ratio",
    "range_width",
    "range_width_pct",
    "touches_low",
    "touches_high",
    "volume_a",
    "volume_b",
)
# Absolute tolerances (ADF to 1e-9, everything else exact or to 1e-12).
CLOSE = {
    "hurst": 1e-12,
    "variance_ratio_pvalue": 1e-12,
    "hurst_rs": 1e-12,
    "adf_pvalue": 1e-9,
    "trend_slope": 1e-12,
    "z_score": 1e-12,
}


def metrics() -> list[Metric]:
    return [m for module in METRIC_MODULES for m in module.pairscreen_register_metrics()]


def compute(p: PairPanel) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for metric in metrics():
        out.update(metric.compute(p))
    return out


@functools.cache
def reference(name: str) -> Mapping[str, object]:
    """The reference libraries' numbers for one series, computed the slow way, once."""
    s = BY_NAME[name]
    lr = s.log_ratio
    w = lr[-WINDOW:]
    h = lr[-WINDOW - 1 : -1]
    full = s.n_days >= WINDOW + 1
    signal = rmr.current_signal(lr[-WINDOW - 1 :])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arch warns on a constant window (VR is 0/0 there)
        verdict = rmr.is_mean_reverting(s.close_a[-WINDOW:], s.close_b[-WINDOW:])
        vr = VarianceRatio(w, lags=20, trend="c", debiased=True, overlap=True)
        vr_value, vr_pvalue = vr.vr, vr.pvalue
    range_width = rmr.range_width(w) if full else np.nan
    std = h.std(ddof=1)
    return {
        "p5": signal.p_low,
        "p95": signal.p_high,
        "position": signal.position,
        "r_current": signal.current_log_ratio,
        "p15": np.percentile(h, 15) if full else np.nan,
        "p85": np.percentile(h, 85) if full else np.nan,
        "z_score": (lr[-1] - h.mean()) / std if std > 0 else np.nan,
        "variance_ratio": vr_value,
        "variance_ratio_pvalue": vr_pvalue,
        "hurst": 0.5 + np.log(vr_value) / (2 * np.log(20)),
        "hurst_rs": rmr.hurst_exponent(w, max_lag=100),
        "adf_pvalue": verdict.adf_pvalue,
        "range_width": range_width,
        "range_width_pct": 100 * range_width,
        "touches_low": verdict.low_touches,
        "touches_high": verdict.high_touches,
        "trend_slope": np.polyfit(np.arange(w.size), w, 1)[0],
        "volume_a": np.mean(s.volume_a[-30:]),
        "volume_b": np.mean(s.volume_b[-30:]),
        "zone": "bottom" if signal.position < 0.2 else "top" if signal.position > 0.8 else "mid",
        # is_mean_reverting's own view of W, to prove our W is its window
        "rmr_range_width": verdict.range_width,
    }


def check_row(name: str, values: Mapping[str, np.ndarray], row: int) -> None:
    ref = reference(name)
    for field in EXACT:
        got, want = float(values[field][row]), float(ref[field])  # type: ignore[arg-type]
        assert got == want or (np.isnan(got) and np.isnan(want)), (name, field, got, want)
    for field, atol in CLOSE.items():
        got, want = float(values[field][row]), float(ref[field])  # type: ignore[arg-type]
        if np.isnan(want):
            assert np.isnan(got), (name, field, got, want)
        else:
            assert abs(got - want) <= atol, (name, field, got, want)
    assert values["zone"][row] == ref["zone"], name


@pytest.mark.parametrize("name", [s.name for s in SERIES])
def test_single_row_panel_matches_references(name: str) -> None:
    """The live snapshot path: a panel of one pair."""
    values = compute(panel([BY_NAME[name]]))
    check_row(name, values, 0)


@pytest.mark.parametrize("length", sorted(GROUPS))
def test_multi_row_panel_matches_references(length: int) -> None:
    """The screen path: every pair of one history length in one panel."""
    group = GROUPS[length]
    values = compute(panel(group))
    for row, s in enumerate(group):
        check_row(s.name, values, row)


def test_big_panel_spans_kinds_and_chunks() -> None:
    """The 900-day group mixes every kind and exceeds no chunk size by accident: it is the
    batch path under test, so make sure it is big and varied."""
    group = GROUPS[900]
    kinds = {s.name.split("[")[0] for s in group}
    assert len(group) >= 150
    assert {"mean_reverting", "random_walk", "trending", "flat_segments", "constant_ratio"} <= kinds


def test_window_is_is_mean_reverting_window() -> None:
    """W is the log-ratio of the last 540 closes, as is_mean_reverting takes it."""
    for s in SERIES:
        if s.n_days >= WINDOW + 1:
            assert reference(s.name)["range_width"] == reference(s.name)["rmr_range_width"]


def test_degenerate_series_take_their_paths() -> None:
    """A constant ratio: ADF 1.0, undefined Hurst, zero band width -> position 0.5."""
    s = next(x for x in SERIES if x.name.startswith("constant_ratio"))
    values = compute(panel([s]))
    assert values["adf_pvalue"][0] == 1.0
    assert np.isnan(values["hurst"][0]) and np.isnan(values["hurst_rs"][0])
    assert values["position"][0] == 0.5 and values["zone"][0] == "mid"
    assert values["range_width"][0] == 0.0
    # rmr's machine alternates sides when p5 == p95: every day is both a low and a high touch
    assert (values["touches_low"][0], values["touches_high"][0]) == (270, 270)


def test_short_rows_null_the_full_window_fields() -> None:
    """Below 541 days, range_width, p15 and p85 are null; the rest is still computed."""
    values = compute(panel(GROUPS[450]))
    for field in ("range_width", "range_width_pct", "p15", "p85"):
        assert np.isnan(values[field]).all(), field
    for field in ("p5", "p95", "position", "hurst", "adf_pvalue", "trend_slope"):
        assert np.isfinite(values[field]).all(), field


def test_zone_uses_strict_inequalities() -> None:
    position = np.array([0.0, 0.2, np.nextafter(0.2, 0), 0.5, 0.8, np.nextafter(0.8, 1), 1.3])
    assert bands.zones(position).tolist() == ["bottom", "mid", "bottom", "mid", "mid", "top", "top"]


def test_orientation_flips_position() -> None:
    """Position of B/A is 1 - position of A/B (up to rounding of the two log-ratios)."""
    group = GROUPS[900][:40]
    p = panel(group)
    forward = compute(p)["position"]
    backward = compute(flipped(p))["position"]
    finite = np.isfinite(forward)
    np.testing.assert_allclose(backward[finite], 1 - forward[finite], atol=1e-9)


def test_metrics_declare_what_they_return() -> None:
    """Every declared field comes back with shape (pairs,) and its declared type; field
    names are unique across metrics, as the registry requires."""
    p = panel(GROUPS[900][:7])
    names: list[str] = []
    for metric in metrics():
        assert isinstance(metric, Metric)
        values = metric.compute(p)
        assert set(values) == {f.name for f in metric.fields}, metric.name
        for field in metric.fields:
            names.append(field.name)
            array = np.asarray(values[field.name])
            assert array.shape == (p.n_pairs,), field.name
            if field.type == "integer":
                assert np.issubdtype(array.dtype, np.integer), field.name
            elif field.type == "string":
                assert all(isinstance(v, str) for v in array.tolist()), field.name
            else:
                assert np.issubdtype(array.dtype, np.floating), field.name
                if not field.nullable:
                    assert np.isfinite(array).all(), field.name
    assert len(names) == len(set(names))


def test_metrics_share_band_percentiles_through_the_cache() -> None:
    p = panel(GROUPS[900][:3])
    first = bands.band_percentiles(p)
    assert bands.band_percentiles(p) is first
    assert p.cached("band_percentiles", lambda: None) is first


def test_adf_fallback_rows_still_match_statsmodels(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows the batched ADF cannot vouch for (all-zero lag columns: rank-deficient designs)
    go to statsmodels; a panel mixing them with ordinary rows still gives statsmodels'
    numbers everywhere, and only those rows take the slow path."""
    from pairscreen_plugins.metrics import _adf

    rng = np.random.default_rng(42)
    ordinary = np.cumsum(rng.normal(0, 0.03, (3, 540)), axis=1)
    late = np.zeros(540)
    late[-3:] = [0.1, 0.3, 0.2]  # the lagged differences are zero over the whole sample
    early = np.zeros(540)
    early[:4] = [0.2, -0.1, 0.3, 0.05]
    rows = np.vstack([ordinary, late, early])
    slow: list[int] = []
    reference_fit = _adf._statsmodels_tstat
    monkeypatch.setattr(
        _adf,
        "_statsmodels_tstat",
        lambda row, constant: slow.append(row.size) or reference_fit(row, constant),
    )
    got = mean_reversion.adf_pvalues(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [rmr.adf_pvalue(r) for r in rows]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert len(slow) == 2


def test_series_factory_is_deterministic() -> None:
    again = all_series()
    assert len(again) == len(SERIES) >= 200
    for a, b in zip(SERIES[::17], again[::17], strict=True):
        assert a.name == b.name and np.array_equal(a.close_a, b.close_a)


def _kinds(series: list[PairSeries]) -> set[str]:
    return {s.name.split("[")[0] for s in series}


def test_corpus_covers_every_kind() -> None:
    kinds = _kinds(SERIES)
    assert {"mean_reverting", "random_walk", "trending", "flat_segments", "mostly_flat"} <= kinds
    assert {f"short{n}" for n in (200, 333, 541, 899)} <= kinds
