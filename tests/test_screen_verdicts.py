"""``GET /screen/latest/pairs/{a}/{b}``: every pair the screen evaluated, its verdict free.

Over the app in-process (every response checked against ``openapi.yaml``) on the demo's real
screen: for every pair the screen evaluated, survivor or rejected, the free verdict equals the
live ``/pair``'s (passes_filter, code and text, both computed from the same candles), no unit
is spent, either orientation answers the pair as screened, and the 404s say why. Runs on
PostgreSQL too (``PAIRSCREEN_TEST_DATABASE_URL``).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from pairscreen.db.connection import database
from pairscreen.db.models import Screen, ScreenVerdictBlock, ScreenVerdicts
from tests.support.pegs import open_depeg_event

BASE = "/api/v1"


def _screened_pairs(rt) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    ia, ib = rt.universe.screened_pair_indices()
    tickers = [a.ticker for a in rt.universe.assets]
    return [(tickers[i], tickers[j]) for i, j in zip(ia, ib, strict=True)]


def _remaining(client, key: str) -> int:  # type: ignore[no-untyped-def]
    return int(client.get(f"{BASE}/me", key).json()["quota"]["remaining_today"])


def test_every_screened_pair_has_the_live_pairs_verdict_free(client, keys, runtime):
    screen = client.get(f"{BASE}/screen/latest", keys.pro).json()
    survivors = ["/".join(s["pair"]) for s in screen["survivors"]]
    pairs = _screened_pairs(runtime)
    assert len(pairs) == screen["n_pairs_screened"]
    before = _remaining(client, keys.personal)
    verdicts = {}
    for a, b in pairs:
        r = client.get(f"{BASE}/screen/latest/pairs/{a}/{b}", keys.personal)
        assert r.status_code == 200, r.text
        verdicts[a, b] = r.json()
    assert _remaining(client, keys.personal) == before  # free: no unit spent
    codes = [v["reason_code"] for v in verdicts.values()]
    counted = {code: codes.count(code) for code in screen["rejected"]}
    assert counted == screen["rejected"]  # the same verdicts the screen counted
    ranked = sorted((v["rank"], v["pair"]) for v in verdicts.values() if v["passes_filter"])
    assert [pair for _, pair in ranked] == survivors
    assert {"hurst", "adf", "touches", "insufficient_history"} <= set(codes)
    for (a, b), verdict in verdicts.items():
        assert verdict["pair"] == f"{a}/{b}" and verdict["reversed"] is False
        assert verdict["generated_at"] == screen["generated_at"]
        live = client.get(f"{BASE}/pair/{a}/{b}", keys.pro)
        if verdict["reason_code"] == "insufficient_history":
            # /pair refuses a pair too short to evaluate, with the same figures
            assert live.status_code == 404
            days = re.search(r"(\d+) days of common history, at least (\d+)", live.text)
            assert days is not None
            assert verdict["filter_reason"] == (
                f"insufficient_history: {days[1]} days of common history, "
                f"at least {days[2]} are needed"
            )
            continue
        snapshot = live.json()
        assert verdict["passes_filter"] == snapshot["passes_filter"], (a, b)
        assert verdict["filter_reason"] == snapshot["filter_reason"], (a, b)
        assert verdict["reason_code"] == snapshot["filter_reason"].split(":")[0]
        if verdict["passes_filter"]:
            survivor = screen["survivors"][verdict["rank"] - 1]
            assert survivor["pair"] == [a, b]
            assert verdict["score"] == survivor["score"]
            assert verdict["zone"] == survivor["metrics"]["zone"] == snapshot["metrics"]["zone"]
            assert verdict["position"] == survivor["metrics"]["position"]
        else:
            assert verdict["rank"] is verdict["score"] is verdict["zone"] is None


def test_the_other_orientation_answers_the_pair_as_screened_and_304s(client, keys, runtime):
    a, b = _screened_pairs(runtime)[0]
    ab = client.get(f"{BASE}/screen/latest/pairs/{a}/{b}", keys.personal)
    ba = client.get(f"{BASE}/screen/latest/pairs/{b.lower()}/{a}", keys.personal)
    assert ba.status_code == 200
    assert ba.json() == {**ab.json(), "reversed": True}
    etag = ab.headers["etag"]
    assert etag.startswith('W/"screen-')
    again = client.get(
        f"{BASE}/screen/latest/pairs/{a}/{b}", keys.personal, headers={"If-None-Match": etag}
    )
    assert again.status_code == 304 and again.content == b""


def test_unknown_tickers_unscreened_pairs_and_no_screen_answer_404(client, keys, runtime):
    unknown = client.get(f"{BASE}/screen/latest/pairs/NOPE/BTC", keys.personal)
    assert unknown.status_code == 404 and "Unknown ticker 'NOPE'" in unknown.text
    same = client.get(f"{BASE}/screen/latest/pairs/BTC/BTC", keys.personal)
    assert same.status_code == 400
    screened = {frozenset(p) for p in _screened_pairs(runtime)}
    tickers = [a.ticker for a in runtime.universe.assets]
    a, b = next(
        (x, y) for x in tickers for y in tickers if x != y and frozenset((x, y)) not in screened
    )
    r = client.get(f"{BASE}/screen/latest/pairs/{a}/{b}", keys.personal)
    assert r.status_code == 404 and "did not evaluate" in r.text, r.text
    assert r.headers["content-type"].startswith("text/plain")
    refused = client.get(f"{BASE}/screen/latest/pairs/{a}/{b}", keys.no_tier)
    assert refused.status_code == 403


def test_no_screen_answers_404(empty_runtime):
    from pairscreen.access import accounts
    from tests.conftest import make_client

    with database.connection_context():
        accounts.create_user("a@example.com", "personal", lifetime=True)
        key = accounts.rotate_key("a@example.com")
    c = make_client(empty_runtime)
    with c.client:
        r = c.get(f"{BASE}/screen/latest/pairs/ETH/BTC", key)
    assert r.status_code == 404 and "No screen has been published yet" in r.text


def test_the_verdicts_are_small_and_go_with_their_screen(runtime):
    """A block row per 16,384 slots and one head per screen; a pruned screen's go with the
    next publication."""
    from pairscreen.screening.screen import run_screen

    with database.connection_context():
        heads = list(ScreenVerdicts.select())
        assert len(heads) == 1
        blob = sum(len(bytes(r.data)) for r in ScreenVerdictBlock.select())
        n = len(runtime.universe.assets)
        assert 0 < blob < n * (n - 1) // 2 * 8  # under 8 bytes a slot, all included
    run_screen(runtime)
    with database.connection_context():
        assert len(ScreenVerdicts.select()) == 2
        Screen.delete().where(Screen.id == heads[0].screen).execute()  # pruned, say
    run_screen(runtime)
    with database.connection_context():
        kept = sorted(s.id for s in Screen.select())
        assert sorted(h.screen for h in ScreenVerdicts.select()) == kept
        assert {b.screen for b in ScreenVerdictBlock.select()} == set(kept)


@pytest.mark.parametrize("value", [0.49951, 0.4995, np.nextafter(0.5, 0)])
def test_a_rule_says_its_reason_again_from_the_stored_float(value):
    """A value stored as float64 says the reason the screen said, digit for digit."""
    from pairscreen.screen_store.verdict_store import _pack, _unpack

    days = np.array([19722, -(2**31), 0], "<i4")
    blob = _pack(np.zeros(3, np.uint8), np.zeros(3, "<u2"), days, np.array([value]), {})
    block = _unpack(blob, True)
    assert f"{float(block.values[0]):.3f}" == f"{value:.3f}"
    assert block.last_days is not None and block.last_days.tolist() == days.tolist()


def test_a_block_stored_before_last_closes_were_kept_still_reads() -> None:
    """A screen published before its verdicts held each pair's last common close: its
    blocks (no such array, head without ``last_days``) read as before, without a date."""
    import zlib

    from pairscreen.screen_store.verdict_store import _HEAD, _unpack

    kinds, history, values = np.array([1, 0], np.uint8), np.array([900, 0], "<u2"), np.array([71.5])
    sizes = np.array([(kinds.size, values.size)], dtype=_HEAD).tobytes()
    shuffled = values.view(np.uint8).reshape(-1, 8).T.tobytes()
    old = zlib.compress(sizes + kinds.tobytes() + history.tobytes() + shuffled + b"{}")
    block = _unpack(old, False)
    assert block.last_days is None and block.values.tolist() == [71.5]
    assert block.history.tolist() == [900, 0] and block.texts == b"{}"


def test_a_depegged_legs_reason_is_kept_and_equals_the_live_pairs(client, keys, runtime):
    """A reason no rule says from its inputs (the core's depeg, naming the event) is kept as
    text: the same words as ``/pair``'s while the event is active."""

    from pairscreen import clock
    from pairscreen.screening.screen import run_screen

    with database.connection_context():
        now = clock.now()
        open_depeg_event("PAXG", now)
    run_screen(runtime)
    paired = [p for p in _screened_pairs(runtime) if "PAXG" in p]
    assert paired
    for a, b in paired:
        verdict = client.get(f"{BASE}/screen/latest/pairs/{a}/{b}", keys.personal).json()
        live = client.get(f"{BASE}/pair/{a}/{b}", keys.pro).json()
        assert verdict["reason_code"] == "depeg"
        assert verdict["filter_reason"] == live["filter_reason"]
        assert "PAXG is in an active depeg event since" in verdict["filter_reason"]


def test_a_stale_pair_names_its_legs_as_the_screen_saw_them(client, keys, runtime):
    """A screen computed 30 days after the last closes: every pair is stale, each verdict
    names its stale legs with their age at the screen's time."""
    from datetime import timedelta

    from pairscreen import clock
    from pairscreen.market.freshness import asset_freshness, last_days, stale_reason
    from pairscreen.screening.screen import run_screen

    at = clock.now() + timedelta(days=30)
    run_screen(runtime, at=at)
    fresh = asset_freshness(runtime.universe, last_days(runtime.candles.get()), at)
    for a, b in _screened_pairs(runtime)[:25]:
        verdict = client.get(f"{BASE}/screen/latest/pairs/{a}/{b}", keys.personal).json()
        legs = runtime.universe.asset(a), runtime.universe.asset(b)
        assert verdict["filter_reason"] == stale_reason(fresh, *legs)
        assert verdict["reason_code"] == "stale" and verdict["history_days"] is None


def test_a_screen_wide_rejection_keeps_the_pairs_score_and_says_the_rule(client, keys, runtime):
    """With ``min_persistence`` above the screens stored, every pair that passed the filter
    fails the screen-wide rule: its verdict names the rule and keeps its score and zone."""
    from dataclasses import replace

    from pairscreen.screening.screen import run_screen

    passed = client.get(f"{BASE}/pairs", keys.personal).json()["pairs"]
    assert passed
    wide = {**runtime.screen_filter.screen_wide, "min_persistence": 5}
    runtime.__dict__["screen_filter"] = replace(runtime.screen_filter, screen_wide=wide)
    run_screen(runtime)
    screen = client.get(f"{BASE}/screen/latest", keys.personal).json()
    assert screen["n_survivors"] == 0 and screen["rejected"]["persistence"] == len(passed)
    for pair in passed:
        verdict = client.get(f"{BASE}/screen/latest/pairs/{pair['pair']}", keys.personal).json()
        assert verdict["passes_filter"] is False and verdict["rank"] is None
        assert verdict["reason_code"] == "persistence"
        said = re.fullmatch(
            r"persistence: survived_last (\d+), at least 5 needed "
            r"\(the screen-wide rule min_persistence of \[screen\]\)",
            verdict["filter_reason"],
        )
        assert said is not None and int(said[1]) < 5, verdict["filter_reason"]
        assert verdict["zone"] == pair["zone"] and isinstance(verdict["score"], float)


def test_a_filter_gone_since_the_screen_still_gives_the_code_and_values(runtime):
    """The universe's filter changed after the screen: the rule cannot say its text again, so
    the verdict names the code, the screen's filter and the values it saw."""
    from dataclasses import replace

    from pairscreen.screen_store.verdict_store import load_head, verdict

    with database.connection_context():
        screen = runtime.screens.latest()
        head = load_head(screen.key[0])
        gone = replace(head, facts={**head.facts, "filter": "retired"})
        for a, b in _screened_pairs(runtime):
            legs = runtime.universe.asset(a), runtime.universe.asset(b)
            now = verdict(runtime.plugins, head, *legs)
            if now["reason_code"] == "hurst":
                said = verdict(runtime.plugins, gone, *legs)["filter_reason"]
                assert re.fullmatch(
                    r"hurst: rejected by filter 'retired' with hurst [-\d.e]+", said
                )
                return
    raise AssertionError("the demo screen rejects some pair for its Hurst exponent")
