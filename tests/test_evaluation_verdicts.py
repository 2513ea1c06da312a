"""The evaluation's replayed verdicts run only the deciding metrics on every tested pair and
the describing ones and the score on the pairs some rule set passes (as the screen does), and
give exactly what every metric on every pair gives: the verdicts of each rule set, the
p-values, the zones, and the model's return and the score of the pairs that pass.

Real closes: ten Binance coins, 600 days to 2023-12-31 (``tests/fixtures/realdata``: every
pair of them; their volume is not in the files and is set constant), three as-of days, the
default rules, each rule left out, and a rule file that turns the half-life rule on (so a
metric that only describes under the default rules decides under one set).
"""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import numpy as np

from pairscreen.bootstrap import load_all_plugins
from pairscreen.config import load_settings
from pairscreen.contracts import Asset, Candles, FilterContext
from pairscreen.engine.evaluate import compute_metrics
from pairscreen.engine.filtering import filter_reasons
from pairscreen.engine.panels import AlignedPair, group_by_history
from pairscreen.engine.screen_chunks import split_metrics_for
from pairscreen.engine.screen_rules import QVALUE_FIELDS
from pairscreen.evaluation.rule_sets import RuleSet, rule_sets
from pairscreen.evaluation.verdicts import MODEL_RETURN, DateVerdicts, Market, verdicts_at
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screening.screen import SCREEN_BT_DAYS
from pairscreen.universe import Universe

REAL = Path(__file__).parent / "fixtures" / "realdata"
COINS = ("ADA", "BCH", "BTC", "DOGE", "ETH", "LTC", "PAXG", "TRX", "XLM", "XRP")
WINDOW = 365
DAYS = (date(2023, 6, 30), date(2023, 9, 30), date(2023, 12, 31))


def load(ticker: str) -> Candles:
    with (REAL / f"{ticker}.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return Candles(
        ticker,
        np.array([r["date"] for r in rows], dtype="datetime64[D]"),
        np.array([float(r["close"]) for r in rows]),
        np.full(len(rows), 1e6),
    )


def every_metric(
    plugins: Plugins, market: Market, sets: list[RuleSet], day: date, tested: np.ndarray
) -> DateVerdicts:
    """The replay as it was: every loaded metric on every tested pair, then each filter."""
    n = len(market.pairs)
    rows = np.flatnonzero(tested)
    cut: list[AlignedPair] = []
    for i in rows:
        pair = market.aligned[i]
        assert pair is not None
        k = int(np.searchsorted(pair.dates, np.datetime64(day, "D"), side="right"))
        cut.append(
            AlignedPair(
                pair.a,
                pair.b,
                pair.dates[:k],
                pair.close_a[:k],
                pair.close_b[:k],
                pair.volume_a[:k],
                pair.volume_b[:k],
            )
        )
    zone = np.full(n, "", dtype=object)
    model = np.full(n, np.nan)
    score = np.full(n, np.nan)
    pvalues = {name: np.full(n, np.nan) for name in QVALUE_FIELDS}
    survives = {s.name: np.zeros(n, dtype=bool) for s in sets}
    for idx, panel in group_by_history(cut, WINDOW + SCREEN_BT_DAYS, WINDOW):
        at = rows[idx]
        metrics = compute_metrics(plugins, panel, strict=True)
        zone[at] = metrics.values["zone"]
        model[at] = metrics.values[MODEL_RETURN]
        score[at] = plugins.scorers.get("score").score(metrics.values)
        for name, column in pvalues.items():
            column[at] = metrics.values[name]
        history = np.array([cut[j].calendar_days for j in idx])
        context_legs = tuple(() for _ in idx)
        for s in sets:
            context = FilterContext(history, np.zeros(len(idx), bool), s.thresholds, context_legs)
            reasons = filter_reasons(s.screen_filter, metrics, context)
            survives[s.name][at] = [not r for r in reasons]
    return DateVerdicts(
        day, zone, np.full(n, np.nan), survives, tested, pvalues, True, None, model, score
    )


def test_replayed_verdicts_equal_every_metric_on_every_pair(tmp_path: Path) -> None:
    candles = {t: load(t) for t in COINS}
    universe = Universe(tuple(Asset(t, sector="crypto") for t in COINS), market_source="csv")
    plugins = load_all_plugins(load_settings(data_dir=tmp_path), universe)
    rule_file = tmp_path / "half_life_60.toml"
    rule_file.write_text("[screen]\nmax_half_life_days = 60\n", encoding="utf-8")
    sets = rule_sets(plugins, universe, [rule_file])
    deciding, describing = split_metrics_for(
        plugins, [(s.screen_filter, s.thresholds) for s in sets]
    )
    assert "half_life" in {m.name for m in deciding}  # read by the rule file's set only
    assert {"breakeven", "ou_bands"} <= {m.name for m in describing}
    market = Market.of(universe, candles, window_days=WINDOW, min_history_days=200, scorer="score")
    passing = 0
    for day in DAYS:
        got = verdicts_at(plugins, market, sets, day, lambda _at: {})
        want = every_metric(plugins, market, sets, day, got.tested)
        assert got.tested.sum() == 45, day  # every pair of the ten coins
        for s in sets:
            assert np.array_equal(got.survives[s.name], want.survives[s.name]), (day, s.name)
        for name in QVALUE_FIELDS:
            assert np.array_equal(got.pvalues[name], want.pvalues[name], equal_nan=True), name
        assert list(got.zone) == list(want.zone), day
        passed = np.logical_or.reduce([got.survives[s.name] for s in sets])
        assert got.model_return is not None and want.model_return is not None
        assert np.array_equal(got.model_return[passed], want.model_return[passed], equal_nan=True)
        assert np.isnan(got.model_return[~passed]).all(), day  # never computed there
        assert got.score is not None and want.score is not None
        assert np.array_equal(got.score[passed], want.score[passed]), day  # the screen's score
        assert np.isnan(got.score[~passed]).all(), day
        assert 0 < passed.sum() < got.tested.sum(), day  # both paths are taken
        passing += int(np.isfinite(got.model_return[passed]).sum())
    assert passing > 0  # the model's figure itself is compared, not only NaNs
