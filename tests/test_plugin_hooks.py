"""Every hook, exercised through a test plugin from ``tests/plugins/`` and the service.

Each ``test_hook_<hook name>`` registers one small plugin file next to the built-ins and
shows its effect where a user would see it: over HTTP, in the peg samples, in the outbox.
``tests/test_architecture.py`` fails when a hook has no such test.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from pairscreen import Asset, PegConfig, clock
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox, PegSample
from pairscreen.engine.panels import align
from pairscreen.market.sync import sync_candles
from pairscreen.notify.outbox import OutboxMessage, deliver_pending, enqueue
from pairscreen.pegs.detector import detect_events
from pairscreen.pegs.sampling import sample_pegs
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from pairscreen.universe import Universe
from tests.conftest import Keys, make_client
from tests.plugins.hook_chart_renderer import PNG_SIGNATURE
from tests.plugins.hook_market_source import start_price
from tests.support.plugin_files import runtime_with

BASE = "/api/v1"


def last_log_ratio(rt: Runtime, a: str, b: str) -> float:
    candles = rt.candles.get()
    pair = align(candles[a], candles[b])
    return float(np.log(pair.close_a[-1] / pair.close_b[-1]))


def test_hook_pairscreen_register_market_sources(runtime: Runtime, keys: Keys) -> None:
    """A universe on the plugin's market syncs its candles, and /pair serves the pair."""
    rt = runtime_with(runtime, "hook_market_source")
    rt.universe = Universe(
        assets=(Asset("HOOKA", "hook"), Asset("HOOKB", "hook")),
        market_source="hook_steady",
        market_options={"days": 250},
    )
    report = sync_candles(rt.universe, rt.plugins)
    assert report.source == "hook_steady"
    assert report.inserted == {"HOOKA": 250, "HOOKB": 250}
    rt.candles.invalidate()
    closes = rt.candles.get()["HOOKA"].close
    assert closes[0] == start_price("HOOKA") and closes[-1] == start_price("HOOKA") + 249
    c = make_client(rt)
    with c.client:
        body = c.get(f"{BASE}/pair/HOOKA/HOOKB", keys.personal).json()
    assert body["pair"] == "HOOKA/HOOKB"
    assert body["metrics"]["r_current"] == pytest.approx(
        np.log((start_price("HOOKA") + 249) / (start_price("HOOKB") + 249)), abs=1e-6
    )


def test_hook_pairscreen_register_metrics(runtime: Runtime, keys: Keys) -> None:
    """The plugin's metric field appears in /pair/{a}/{b}, computed on the served pair."""
    rt = runtime_with(runtime, "hook_metric")
    assert rt.plugins.metrics.owner("hook_last_log_ratio") == "tests.plugins.hook_metric"
    c = make_client(rt)
    with c.client:
        metrics = c.get(f"{BASE}/pair/ETH/BTC", keys.personal).json()["metrics"]
    assert metrics["hook_last_log_ratio"] == pytest.approx(last_log_ratio(rt, "ETH", "BTC"))
    assert "hurst" in metrics  # the built-in metrics are still there


def test_hook_pairscreen_register_strategies(runtime: Runtime, keys: Keys) -> None:
    """With the plugin's strategy configured, /pair reports its backtest: no trade at all."""
    rt = runtime_with(runtime, "hook_strategy", strategy="hook_hold")
    c = make_client(rt)
    with c.client:
        backtest = c.get(f"{BASE}/pair/ETH/BTC?bt=180", keys.personal).json()["backtest"]
    for leg in ("A", "B"):
        assert backtest[leg]["n_trades"] == 0 and backtest[leg]["growth_pct"] == 0.0
        assert backtest[leg]["buy_hold"] is None
    assert backtest["history_days"] == 180
    default = runtime_with(runtime)
    c = make_client(default)
    with c.client:
        trades = c.get(f"{BASE}/pair/ETH/BTC?bt=180", keys.personal).json()["backtest"]
    assert trades["A"]["n_trades"] + trades["B"]["n_trades"] > 0  # the built-in does trade


def test_hook_pairscreen_register_scorers(runtime: Runtime, keys: Keys) -> None:
    """With the plugin's scorer configured, the published screen is ranked by its score."""
    rt = runtime_with(runtime, "hook_scorer", scorer="hook_by_hurst")
    with database.connection_context():
        run_screen(rt, processes=1)
    c = make_client(rt)
    with c.client:
        survivors = c.get(f"{BASE}/screen/latest", keys.personal).json()["survivors"]
    assert survivors
    for s in survivors:
        expected = min(max(100.0 * (1.0 - s["metrics"]["hurst"]), 0.0), 100.0)
        assert s["score"] == pytest.approx(expected, abs=0.05)
    scores = [s["score"] for s in survivors]
    assert scores == sorted(scores, reverse=True)


def test_hook_pairscreen_register_chart_renderers(runtime: Runtime, keys: Keys) -> None:
    """With the plugin's renderer configured, chart.png is what the renderer drew."""
    rt = runtime_with(runtime, "hook_chart_renderer", chart_renderer="hook_caption")
    c = make_client(rt)
    with c.client:
        r = c.get(f"{BASE}/pair/ETH/BTC/chart.png?bt=90&size=phone", keys.personal)
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content == PNG_SIGNATURE + b"ETH/BTC 90d 720x480"


def test_hook_pairscreen_register_peg_sources(runtime: Runtime) -> None:
    """Peg sampling asks the plugin's source for the reference and, since it is named like
    the market source and offers an intraday price, for the token's price too."""
    rt = runtime_with(runtime, "hook_peg_source")
    hookx = Asset("HOOKX", "gold", "tokenized_metal", peg=PegConfig("XAU", ("hook_fixed",)))
    rt.universe = Universe(
        assets=(hookx,),
        market_source="hook_fixed",
        peg_source_options={"hook_fixed": {"price": 100.0, "market_price": 97.0}},
    )
    at = clock.now().replace(microsecond=0)
    with database.connection_context():
        (reading,) = sample_pegs(rt, at).readings
        stored = PegSample.get(PegSample.ticker == "HOOKX")
    assert (reading.market_price, reading.reference_price) == (97.0, 100.0)
    assert reading.reference_source == "hook_fixed"
    assert reading.status == "unhealthy" and reading.drift_pct == pytest.approx(-3.0)
    assert stored.status == "unhealthy" and stored.reference_source == "hook_fixed"


def open_depeg(rt: Runtime, ticker: str) -> None:
    """Store 13 hourly unhealthy samples of ``ticker`` and run the detector: one event opens."""
    start = clock.now().replace(microsecond=0) - timedelta(hours=13)
    with database.connection_context():
        for h in range(13):
            PegSample.create(
                ticker=ticker,
                sampled_at=start + timedelta(hours=h),
                status="unhealthy",
                drift_pct=-3.0,
                threshold_pct=1.0,
                reference_source="demo",
            )
        (opened,) = detect_events(rt.plugins, rt.universe, [ticker])
    assert (opened.ticker, opened.change) == (ticker, "opened")


def test_hook_pairscreen_peg_event_changed(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    """Every implementation hears the event: a failing one is logged with its plugin's name
    and stops neither the plugin after it, nor one that takes no argument."""
    rt = runtime_with(
        runtime, "hook_peg_event_failing", "hook_peg_event", "hook_peg_event_no_argument"
    )
    with caplog.at_level(logging.INFO):
        open_depeg(rt, "PAXG")
    assert "hook_peg_event: PAXG opened" in caplog.text
    assert "hook_peg_event_no_argument: something opened or closed" in caplog.text
    failure = next(r for r in caplog.records if r.exc_info)
    assert failure.getMessage() == (
        "plugin tests.plugins.hook_peg_event_failing failed on a peg event"
    )
    assert "cannot handle PAXG" in caplog.text
    assert "depeg event PAXG opened" in caplog.text  # the framework's own alerts ran too


def test_hook_pairscreen_register_notifiers(runtime: Runtime) -> None:
    """The outbox hands messages of the plugin's channel kind to its notifier; a refusal is
    retried later, as with any notifier."""
    rt = runtime_with(runtime, "hook_notifier")
    memo: Any = rt.plugins.notifiers.get("hook_memo")  # the plugin's Memo
    with database.connection_context():
        enqueue(
            [
                OutboxMessage("hook.memo.1", None, "hook_memo", "desk", "hello", "hello there"),
                OutboxMessage("hook.memo.2", None, "hook_memo", "refuse", "again", "and again"),
            ]
        )
        report = deliver_pending(rt, worker_id="hook-test")
        statuses = {r.idempotency_key: r.status for r in Outbox.select()}
    assert (report.sent, report.retrying) == (1, 1)
    assert [(n.idempotency_key, n.address, n.text) for n in memo.delivered] == [
        ("hook.memo.1", "desk", "hello there")
    ]
    assert statuses["hook.memo.1"] == "sent" and statuses["hook.memo.2"] == "pending"


def test_a_wrapper_changes_what_the_other_plugins_register(runtime: Runtime, keys: Keys) -> None:
    """A ``wrapper=True`` implementation filters every plugin's metrics; /pair shows it."""
    rt = runtime_with(runtime, "hook_wrapper_metrics", "hook_metric")
    assert "hook_last_log_ratio" not in rt.plugins.metrics
    assert rt.plugins.metrics.owner("volume") == "volume"
    c = make_client(rt)
    with c.client:
        metrics = c.get(f"{BASE}/pair/ETH/BTC", keys.personal).json()["metrics"]
    assert "hook_last_log_ratio" not in metrics and "volume_a" in metrics


def test_an_old_style_hookwrapper_renames_what_the_others_register(runtime: Runtime) -> None:
    """A ``hookwrapper=True`` implementation renames every notifier; delivery follows."""
    rt = runtime_with(runtime, "hook_old_style_wrapper_notifiers", "hook_notifier")
    names = {n.name for n in rt.plugins.notifiers}
    assert names == {
        "legacy_email",
        "legacy_telegram",
        "legacy_webhook",
        "legacy_discord",
        "legacy_slack",
        "legacy_hook_memo",
    }
    assert rt.plugins.notifiers.owner("legacy_hook_memo") == "tests.plugins.hook_notifier"
    with database.connection_context():
        enqueue([OutboxMessage("hook.legacy.1", None, "legacy_hook_memo", "desk", "s", "t")])
        assert deliver_pending(rt, worker_id="hook-test").sent == 1
    renamed: Any = rt.plugins.notifiers.get("legacy_hook_memo")
    (delivered,) = renamed.inner.delivered
    assert delivered.idempotency_key == "hook.legacy.1"


def test_settings_of_a_runtime_with_plugins_are_the_base_ones(runtime: Runtime) -> None:
    """The helper changes only what it is asked to (guards the tests above)."""
    rt = runtime_with(runtime, "hook_metric", "hook_scorer", scorer="hook_by_hurst")
    assert rt.settings == replace(runtime.settings, scorer="hook_by_hurst")
