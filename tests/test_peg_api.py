"""Peg monitoring end to end: ``pairscreen peg sample`` to ``/peg-events`` and ``/pair``, the
screen's ``depeg`` filter, the event hook, and the demo's one event."""

from __future__ import annotations

import json
from datetime import timedelta

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.cli import main
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.db.models import JobRun, PegSample
from pairscreen.pegs.detector import detect_events
from pairscreen.pegs.sampling import backfill_pegs, sample_pegs
from pairscreen.pegs.status import PEG_JOB
from pairscreen.screening.screen import latest_screen_json, run_screen
from tests.conftest import make_client
from tests.support.pegs import open_depeg_event
from tests.test_depeg_detector import EventRecorder

BASE = "/api/v1"


def test_peg_sample_command_to_peg_events_and_the_pair_snapshot(client, keys, database_url, capsys):
    # three days of hourly samples (a weekend of stale gold quotes included), then one now
    code = main(
        ["--database-url", database_url, "peg", "sample", "--no-sync", "--backfill-hours", "72"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "event opened: PAXG" in out
    assert main(["--database-url", database_url, "peg", "sample"]) == 0
    out = capsys.readouterr().out
    # 9 assets, why each unknown one is unknown, then the summary
    assert "active depeg events: PAXG" in out
    assert out.count("\n") == 10 + out.count("\nunknown: ")

    r = client.get(f"{BASE}/peg-events", keys.pro)
    assert r.status_code == 200
    body = r.json()
    (event,) = body["events"]
    assert (event["ticker"], event["asset_class"]) == ("PAXG", "tokenized_metal")
    assert event["hours_unhealthy"] >= 12 and event["sample_count"] >= 6
    assert -3.0 < event["median_drift_pct"] < -2.0
    assert event["reference_source"] == "demo"
    with database.connection_context():
        run = JobRun.get_by_id(PEG_JOB)
    assert body["checked_at"] == clock.iso(run.finished_at)

    snap = client.get(f"{BASE}/pair/PAXG/BTC", keys.personal).json()
    assert snap["peg"]["B"] is None
    peg = snap["peg"]["A"]
    assert peg["active_event"] is True
    assert peg["unhealthy_since"] == event["first_unhealthy"]
    assert peg["reference_source"] in ("demo", "")  # "" while gold is closed (weekend)
    assert peg["threshold_pct"] == 1.0 and peg["checked_at"] is not None
    if peg["status"] == "unhealthy":
        assert peg["drift_pct"] < -1.0 and peg["market_price"] < peg["reference_price"]
    else:
        assert peg["status"] == "unknown" and peg["drift_pct"] is None
    assert snap["passes_filter"] is False  # whatever else it fails, the depeg rejects it
    xaut = client.get(f"{BASE}/pair/XAUT/BTC", keys.personal).json()["peg"]["A"]
    assert xaut["active_event"] is False and xaut["unhealthy_since"] is None


def test_peg_events_are_for_pro_only(client, keys):
    r = client.get(f"{BASE}/peg-events", keys.personal)
    assert r.status_code == 403
    assert r.headers["content-type"].startswith("text/plain")
    assert "pro" in r.text.lower()


def test_peg_events_answer_304_until_an_event_opens(runtime, client, keys):
    first = client.get(f"{BASE}/peg-events", keys.pro)
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag.startswith('W/"peg-events-')
    again = client.get(f"{BASE}/peg-events", keys.pro, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    with database.connection_context():
        open_depeg_event("PAXG", clock.now())
    changed = client.get(f"{BASE}/peg-events", keys.pro, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert [e["ticker"] for e in changed.json()["events"]] == ["PAXG"]


def test_the_screen_keeps_out_pairs_with_a_leg_in_an_active_event(runtime, client, keys):
    with database.connection_context():
        survivors = json.loads(latest_screen_json(runtime))["survivors"]
        pairs = [tuple(s["pair"]) for s in survivors]
        tokenized = [p for p in pairs if any(runtime.universe.asset(t).is_tokenized for t in p)]
        a, b = (tokenized or pairs)[0]
        leg = a if runtime.universe.asset(a).is_tokenized or not tokenized else b
        start = clock.now() - timedelta(hours=13)
        for h in range(14):
            PegSample.create(
                ticker=leg,
                sampled_at=start + timedelta(hours=h),
                status="unhealthy",
                drift_pct=-3.0,
                threshold_pct=1.5,
                reference_source="demo",
            )
        (opened,) = detect_events(runtime.plugins, runtime.universe)
        assert opened.ticker == leg
        summary = run_screen(runtime)
    assert summary.rejected["depeg"] >= 1
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    assert [a, b] not in [s["pair"] for s in screen["survivors"]]
    assert all(leg not in s["pair"] for s in screen["survivors"])
    snap = client.get(f"{BASE}/pair/{a}/{b}", keys.personal).json()
    assert snap["passes_filter"] is False
    assert snap["filter_reason"].startswith("depeg: ")


def test_a_plugin_hears_each_event_open_and_close_once(database_url, tmp_path):
    """A plugin implementing ``pairscreen_peg_event_changed``, loaded with the built-ins."""
    recorder = EventRecorder()
    settings = load_settings(data_dir=tmp_path, database_url=database_url)
    rt = build_runtime(settings, extra_plugins=(recorder,))
    try:
        now = clock.now()
        backfill_pegs(rt, 72, now)
        assert [(c.ticker, c.change) for c in recorder.calls] == [("PAXG", "opened")]
        opened = recorder.calls[0]
        assert opened.sample_count >= 6 and opened.reference_source == "demo"
        # the scripted depeg ends five hours after the demo source started; by Monday at
        # the latest gold trades again and the first healthy sample closes the event
        for hour in range(1, 80):
            sample_pegs(rt, now + timedelta(hours=hour))
        assert [(c.ticker, c.change) for c in recorder.calls] == [
            ("PAXG", "opened"),
            ("PAXG", "closed"),
        ]
        assert recorder.calls[1].first_unhealthy == opened.first_unhealthy
    finally:
        database.close()


def test_the_demo_shows_exactly_one_active_event(empty_runtime):
    from pairscreen.demo import prepare_demo

    setup = prepare_demo(empty_runtime)
    client = make_client(empty_runtime)
    with client.client:
        r = client.get(f"{BASE}/peg-events", setup.pro_key)
        assert r.status_code == 200
        (event,) = r.json()["events"]
        assert event["ticker"] == "PAXG" and event["hours_unhealthy"] >= 12
        assert client.get(f"{BASE}/peg-events", setup.personal_key).status_code == 403
        # the short blip of USTB left samples but no event, and is over
        with database.connection_context():
            blip = (
                PegSample.select()
                .where((PegSample.ticker == "USTB") & (PegSample.status == "unhealthy"))
                .count()
            )
        assert 0 < blip < 12
        ustb = client.get(f"{BASE}/pair/USTB/PAXG", setup.personal_key).json()
        assert ustb["peg"]["A"]["status"] == "healthy" and ustb["peg"]["A"]["active_event"] is False
        assert ustb["peg"]["B"]["active_event"] is True


def test_the_demos_depegged_gold_token_is_counted_and_told_as_a_depeg(empty_runtime):
    """Every computed PAXG pair counts under ``depeg`` (not the metric rule it also fails),
    ``/pair`` names the leg and the event's start, and so does the chart."""
    from pairscreen.demo import prepare_demo
    from pairscreen.engine.panels import align
    from pairscreen.screening.chart import chart_data

    rt = empty_runtime
    setup = prepare_demo(rt)
    candles = rt.candles.get()
    computed = [
        (a.ticker, b.ticker)
        for a, b in rt.universe.screened_pairs()
        if "PAXG" in (a.ticker, b.ticker)
        and a.ticker in candles
        and b.ticker in candles
        and align(candles[a.ticker], candles[b.ticker]).n_days >= rt.settings.min_history_days
    ]
    assert computed
    client = make_client(rt)
    with client.client:
        (event,) = client.get(f"{BASE}/peg-events", setup.pro_key).json()["events"]
        screen = client.get(f"{BASE}/screen/latest", setup.personal_key).json()
        assert screen["rejected"]["depeg"] == len(computed) == setup.screen.rejected["depeg"]
        assert list(screen["rejected"])[:3] == ["stale", "insufficient_history", "depeg"]
        assert all("PAXG" not in s["pair"] for s in screen["survivors"])
        told = f"PAXG is in an active depeg event since {event['first_unhealthy']}"
        for a, b in computed[:3]:
            snap = client.get(f"{BASE}/pair/{a}/{b}", setup.personal_key).json()
            assert snap["filter_reason"] == f"depeg: {told}"
        xaut = client.get(f"{BASE}/pair/XAUT/BTC", setup.personal_key).json()
        assert not xaut["filter_reason"].startswith("depeg")
    with database.connection_context():
        assert (
            chart_data(rt, *rt.universe.pair("PAXG", "BTC"), 360).note.splitlines()[0]
            == f"Depeg: {told}"
        )
        assert "depeg" not in chart_data(rt, *rt.universe.pair("XAUT", "BTC"), 360).note.lower()
