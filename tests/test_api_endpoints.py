"""Every endpoint over HTTP against the real app and a real SQLite file."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from pairscreen import clock
from pairscreen.db.connection import database
from pairscreen.db.models import PegEvent
from tests.support.pegs import open_depeg_event, record_unhealthy_sample

BASE = "/api/v1"


def test_me_shows_account_and_quota(client, keys):
    r = client.get(f"{BASE}/me", keys.personal)
    assert r.status_code == 200
    body = r.json()
    assert body["email"] == "personal@example.com"
    assert body["tier"] == "personal"
    assert body["is_lifetime"] is False
    assert body["quota"] == {
        "limit_per_day": 200,
        "used_today": 0,
        "remaining_today": 200,
        "resets_at": body["quota"]["resets_at"],
    }
    resets = datetime.fromisoformat(body["quota"]["resets_at"])  # a timestamp alone
    assert body["quota"]["resets_at"].endswith("T00:00:00+00:00")
    assert resets.utcoffset() == timedelta(0)
    assert timedelta(0) < resets - clock.now() <= timedelta(days=1)
    pro = client.get(f"{BASE}/me", keys.pro).json()
    assert pro["tier"] == "pro" and pro["is_lifetime"] is True
    assert pro["quota"]["limit_per_day"] == 2000


def test_me_lists_the_notification_channels_with_webhook_secrets_hidden(client, keys, runtime):
    from pairscreen.notify import channels

    implicit = client.get(f"{BASE}/me", keys.personal).json()["channels"]
    assert implicit == [
        {
            "kind": "email",
            "address": "personal@example.com",
            "enabled": True,
            "depeg_alerts": False,
        }
    ]
    with database.connection_context():
        channels.set_channels(
            "pro@example.com",
            addresses={"telegram": "12345", "webhook": "https://hooks.example.com/t/s3cret?k=v"},
            depeg_alerts=True,
            kinds=runtime.plugins.channel_kinds,
        )
        channels.disable_channel("pro@example.com", "telegram")
    shown = client.get(f"{BASE}/me", keys.pro).json()["channels"]
    assert [(c["kind"], c["enabled"], c["depeg_alerts"]) for c in shown] == [
        ("email", True, True),
        ("telegram", False, False),
        ("webhook", True, False),
    ]
    assert shown[2]["address"] == "https://hooks.example.com/…"
    assert "s3cret" not in str(shown)


def test_screen_latest_has_survivors_with_full_structure(client, keys):
    r = client.get(f"{BASE}/screen/latest", keys.personal)
    assert r.status_code == 200
    screen = r.json()
    assert screen["n_pairs_screened"] >= 100
    assert 0 < screen["n_survivors"] == len(screen["survivors"]) < screen["n_pairs_screened"]
    assert "synthetic" in screen["data_source"]
    rejected = screen["rejected"]
    assert sum(rejected.values()) + screen["n_survivors"] == screen["n_pairs_screened"]
    for code in ("insufficient_history", "hurst", "adf", "range_width", "touches"):
        assert rejected[code] > 0, code
    scores = [s["score"] for s in screen["survivors"]]
    assert scores == sorted(scores, reverse=True)
    first = screen["survivors"][0]
    assert set(first["backtest"]) == {"history_days", "observations", "A", "B"}
    assert screen["backtest_days"] == 360 == first["backtest"]["history_days"]
    assert set(first["windows"]) == {"metric", "band", "backtest"}
    assert first["windows"]["backtest"]["days"] == 360
    assert first["metrics"]["hurst"] < 0.5 and first["metrics"]["adf_pvalue"] < 0.7


def test_pairs_is_the_compact_survivor_list(client, keys):
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    r = client.get(f"{BASE}/pairs", keys.personal)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == screen["n_survivors"] == len(body["pairs"])
    assert body["generated_at"] == screen["generated_at"]
    top = body["pairs"][0]
    s = screen["survivors"][0]
    assert top == {
        "pair": f"{s['pair'][0]}/{s['pair'][1]}",
        "a": s["pair"][0],
        "b": s["pair"][1],
        "sector": s["sector"],
        "zone": s["metrics"]["zone"],
        "position": s["metrics"]["position"],
        "hurst": s["metrics"]["hurst"],
        "half_life_days": s["metrics"]["half_life_days"],
        "score": s["score"],
        "coint_qvalue": s["coint_qvalue"],
        "adf_qvalue": s["adf_qvalue"],
        "survived_last": s["survived_last"],
        "data_time": s["data_time"],
        "data_behind": s["data_behind"],
        "data_behind_days": s["data_behind_days"],
    }


def test_screen_404_before_first_screen(empty_runtime):
    from pairscreen.access import accounts
    from tests.conftest import make_client

    with database.connection_context():
        accounts.create_user("a@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("a@example.com")
    c = make_client(empty_runtime)
    with c.client:
        for path in ("/screen/latest", "/pairs"):
            r = c.get(BASE + path, key)
            assert r.status_code == 404
            assert "No screen has been published yet" in r.text


@pytest.mark.parametrize("bt", [90, 180, 360])
def test_pair_snapshot_all_fields(client, keys, bt):
    r = client.get(f"{BASE}/pair/ETH/BTC", keys.personal, params={"bt": bt})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["pair"] == "ETH/BTC" and body["base_a"] == "ETH" and body["base_b"] == "BTC"
    assert body["asset_class_a"] == body["asset_class_b"] == "crypto"
    assert body["backtest"]["history_days"] == bt
    assert body["backtest"]["A"]["base_leg"] == "ETH"
    assert body["backtest"]["B"]["base_leg"] == "BTC"
    assert body["backtest"]["A"]["buy_hold"] is not None
    assert body["peg"] == {"A": None, "B": None}
    m = body["metrics"]
    assert m["zone"] in ("bottom", "mid", "top")
    assert m["p5"] <= m["p15"] <= m["p85"] <= m["p95"]
    assert (body["filter_reason"] == "") == body["passes_filter"]
    assert "RateLimit" in r.headers and "RateLimit-Policy" in r.headers


def test_pair_snapshot_has_the_kalman_hedge_ratio(client, keys):
    """The kalman metric's fields are in /pair, consistent with one another."""
    m = client.get(f"{BASE}/pair/ETH/BTC", keys.personal).json()["metrics"]
    assert m["kalman_reason"] == ""
    assert m["kalman_spread_std"] > 0
    assert m["kalman_z"] == pytest.approx(m["kalman_spread"] / m["kalman_spread_std"], rel=1e-12)
    assert all(isinstance(m[name], float) for name in ("kalman_hedge_ratio", "kalman_intercept"))
    assert isinstance(m["kalman_hedge_drift"], float)


def test_pair_any_orientation_and_case_insensitive(client, keys):
    ab = client.get(f"{BASE}/pair/ETH/BTC", keys.personal).json()
    ba = client.get(f"{BASE}/pair/btc/eth", keys.personal).json()
    assert ba["pair"] == "BTC/ETH"
    assert ba["metrics"]["position"] == pytest.approx(1 - ab["metrics"]["position"], abs=1e-9)
    assert ba["metrics"]["r_current"] == pytest.approx(-ab["metrics"]["r_current"], abs=1e-12)


def test_snapshot_agrees_with_screen(client, keys):
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    s = screen["survivors"][0]
    snap = client.get(f"{BASE}/pair/{s['pair'][0]}/{s['pair'][1]}", keys.personal).json()
    assert snap["passes_filter"] is True and snap["filter_reason"] == ""
    for name in ("position", "hurst", "adf_pvalue", "z_score", "r_current", "touches_low"):
        assert snap["metrics"][name] == s["metrics"][name], name
    for leg in ("A", "B"):
        for name in ("growth_pct", "n_trades", "max_drawdown_pct"):
            assert snap["backtest"][leg][name] == s["backtest"][leg][name]


def test_screen_backtests_are_the_snapshots_over_the_stated_window(client, keys):
    """Each survivor's backtest, buy-and-hold and simulated days included, is the snapshot's
    at ``bt`` = the screen's ``backtest_days``: the two are comparable number for number."""
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    bt = screen["backtest_days"]
    survivors = screen["survivors"][:10]
    for s in survivors:
        a, b = s["pair"]
        snap = client.get(f"{BASE}/pair/{a}/{b}?bt={bt}", keys.personal).json()
        assert snap["backtest"] == s["backtest"], (a, b)
    legs = [s["backtest"][leg] for s in survivors for leg in ("A", "B")]
    assert any(leg["buy_hold"] is not None for leg in legs)
    assert all(set(leg) >= {"base_leg", "buy_hold"} for leg in legs)


def test_tokenized_leg_has_peg_status(client, keys):
    r = client.get(f"{BASE}/pair/PAXG/BTC", keys.personal)
    assert r.status_code == 200
    body = r.json()
    assert body["asset_class_a"] == "tokenized_metal"
    assert body["peg"]["B"] is None
    peg = body["peg"]["A"]
    assert peg["status"] in ("unknown", "healthy", "unhealthy")
    assert peg["threshold_pct"] == 1.0


def test_unknown_ticker_404_and_same_leg_400(client, keys):
    r = client.get(f"{BASE}/pair/NOPE/BTC", keys.personal)
    assert r.status_code == 404 and "Unknown ticker" in r.text
    r = client.get(f"{BASE}/pair/BTC/BTC", keys.personal)
    assert r.status_code == 400 and "two different assets" in r.text


def test_watchlist_shows_only_own_items(client, keys, runtime):
    from pairscreen.notify import watchlist

    with database.connection_context():
        watchlist.add_item(runtime.universe, "personal@example.com", "ETH/BTC")
        watchlist.add_item(runtime.universe, "personal@example.com", "sol/eth", approach=False)
        watchlist.add_item(runtime.universe, "pro@example.com", "PAXG/XAUT")
    mine = client.get(f"{BASE}/watchlist", keys.personal).json()
    assert mine["count"] == 2
    assert [i["pair"] for i in mine["items"]] == ["ETH/BTC", "SOL/ETH"]
    assert mine["items"][1]["notify_approach"] is False
    assert all(i["last_notified_state"] == "none" for i in mine["items"])
    theirs = client.get(f"{BASE}/watchlist", keys.pro).json()
    assert [i["pair"] for i in theirs["items"]] == ["PAXG/XAUT"]


def test_peg_events_pro_only_and_lists_active_events(client, keys):
    assert client.get(f"{BASE}/peg-events", keys.personal).status_code == 403
    r = client.get(f"{BASE}/peg-events", keys.pro)
    assert r.status_code == 200
    assert r.json()["events"] == []
    now = clock.now()
    with database.connection_context():
        open_depeg_event("PAXG", now)
        PegEvent.create(
            ticker="XAUT",
            asset_class="tokenized_metal",
            first_unhealthy=now - timedelta(hours=40),
            last_unhealthy=now - timedelta(hours=30),
            median_drift_pct=1.5,
            sample_count=8,
            reference_source="demo",
            active=False,
        )
    events = client.get(f"{BASE}/peg-events", keys.pro).json()["events"]
    assert [e["ticker"] for e in events] == ["PAXG"]
    assert events[0]["hours_unhealthy"] == pytest.approx(20.0)


def test_assets_carries_an_etag_and_answers_304_until_the_list_changes(client, keys):
    from pairscreen.db.connection import database

    first = client.get(f"{BASE}/assets", keys.personal)
    etag = first.headers["etag"]
    assert etag.startswith('W/"assets-')
    again = client.get(f"{BASE}/assets", keys.personal, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    with database.connection_context():
        record_unhealthy_sample("PAXG")
    changed = client.get(f"{BASE}/assets", keys.personal, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    paxg = [a for a in changed.json()["assets"] if a["ticker"] == "PAXG"]
    assert paxg[0]["peg"]["drift_pct"] == -50.0
