"""The core's guarantees hold under any filter: a filter plugin that accepts every pair still
never lets through a pair with a stale leg, too little common history, or a leg in an active
depeg event, in the screen and in ``/pair`` alike, each with its reason.

A csv universe read on a Sunday: BASE and WAVE are fresh with 400 days, OLD stopped 40 days
ago, SHORT has 100 days, PEG (a tokenized metal) is fresh but in an active depeg event.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database, init_database
from pairscreen.db.models import PegEvent
from pairscreen.market.sync import sync_candles
from pairscreen.runtime import Runtime
from pairscreen.screening.screen import run_screen
from tests.conftest import ContractClient, make_client
from tests.plugins import accept_all_filter

SUNDAY = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
YESTERDAY = date(2026, 11, 21)
OLD_END = date(2026, 10, 13)
DEPEG_SINCE = SUNDAY - timedelta(hours=13)


def _series(end: date, days: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    log_price = np.cumsum(rng.normal(0, 0.02, days)) + 5
    rows = [
        f"{end - timedelta(days=days - 1 - i)},{np.exp(v):.6f},{1000 + i}\n"
        for i, v in enumerate(log_price)
    ]
    return "date,close,volume\n" + "".join(rows)


@pytest.fixture()
def rt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setattr(clock, "now", lambda: SUNDAY)
    prices = tmp_path / "prices"
    prices.mkdir()
    for ticker, end, days, seed in [
        ("BASE", YESTERDAY, 400, 1),
        ("WAVE", YESTERDAY, 400, 2),
        ("OLD", OLD_END, 400, 3),
        ("SHORT", YESTERDAY, 100, 4),
        ("PEG", YESTERDAY, 400, 5),
    ]:
        (prices / f"{ticker}.csv").write_text(_series(end, days, seed), encoding="utf-8")
    assets = "".join(
        f'\n[[asset]]\nticker = "{t}"\nsector = "x"\n' for t in ("BASE", "WAVE", "OLD", "SHORT")
    )
    universe = tmp_path / "universe.toml"
    universe.write_text(
        '[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\nvolume_unit = "quote"\n\n'
        '[screen]\nfilter = "accept_all"\n'
        + assets
        + '\n[[asset]]\nticker = "PEG"\nsector = "x"\nasset_class = "tokenized_metal"\n',
        encoding="utf-8",
    )
    settings = load_settings(
        data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'g.sqlite3'}", universe=universe
    )
    init_database(settings.database_url)
    runtime = build_runtime(settings, extra_plugins=(accept_all_filter,))
    sync_candles(runtime.universe, runtime.plugins)
    with database.connection_context():
        PegEvent.create(
            ticker="PEG",
            asset_class="tokenized_metal",
            first_unhealthy=DEPEG_SINCE,
            last_unhealthy=SUNDAY,
            median_drift_pct=-3.0,
            sample_count=14,
        )
        run_screen(runtime, processes=1)
    yield runtime
    database.close()


@pytest.fixture()
def http(rt: Runtime) -> Iterator[ContractClient]:
    from pairscreen.access import accounts

    c = make_client(rt)
    with c.client:
        with database.connection_context():
            accounts.create_user("p@example.com", "personal", expires=SUNDAY + timedelta(days=30))
            c.key = accounts.rotate_key("p@example.com")  # type: ignore[attr-defined]
        yield c


def test_the_screen_rejects_what_the_core_guarantees_under_an_accept_all_filter(http) -> None:
    screen = http.get("/api/v1/screen/latest", http.key).json()
    assert screen["filter"] == {"name": "accept_all", "thresholds": {}}
    assert [s["pair"] for s in screen["survivors"]] == [["BASE", "WAVE"]]
    assert screen["rejected"] == {
        "stale": 4,  # OLD with each of the four others
        "insufficient_history": 3,  # SHORT with BASE, WAVE and PEG
        "depeg": 2,  # PEG with BASE and WAVE
        "never": 0,
        "coint_q": 0,  # the screen-wide rules, off by default
        "adf_q": 0,
        "persistence": 0,
    }
    assert screen["n_pairs_screened"] == 10


def test_a_pair_answers_the_core_reason_under_an_accept_all_filter(http) -> None:
    depegged = http.get("/api/v1/pair/BASE/PEG", http.key)
    assert depegged.status_code == 200
    body = depegged.json()
    assert body["passes_filter"] is False
    assert body["filter_reason"] == (
        "depeg: PEG is in an active depeg event since 2026-11-21T21:00:00+00:00"
    )
    assert body["peg"]["B"]["active_event"] is True
    stale = http.get("/api/v1/pair/OLD/BASE", http.key).json()
    assert stale["passes_filter"] is False and stale["filter_reason"].startswith("stale: OLD")
    short = http.get("/api/v1/pair/SHORT/BASE", http.key)
    assert short.status_code == 404
    assert "100 days of common history, at least 200 are needed" in short.text
    fine = http.get("/api/v1/pair/BASE/WAVE", http.key).json()
    assert fine["passes_filter"] is True and fine["filter_reason"] == ""


STALE_REASON = "stale: OLD has no close since 2026-10-13 (40 days)"
SHORT_REASON = "insufficient_history: 100 days of common history, at least 200 are needed"
DEPEG_REASON = "depeg: PEG is in an active depeg event since 2026-11-21T21:00:00+00:00"


def test_every_caller_gives_the_core_reason_of_a_stale_a_short_and_a_depegged_pair(
    rt, http
) -> None:
    """One verdict, five callers: the published screen (its verdict endpoint), ``/pair``,
    ``evaluate``'s replay of the day and watchlist notifications stop OLD/BASE (a stale leg),
    SHORT/BASE (100 days) and BASE/PEG (PEG in an active depeg event) with the same reason."""
    from pairscreen.db.models import User, WatchlistItem, canonical_pair
    from pairscreen.engine.guarantees import DEPEGGED
    from pairscreen.evaluation.verdicts import Market, verdicts_at
    from pairscreen.market.freshness import asset_freshness, last_days
    from pairscreen.market.pair_verdicts import pair_reason
    from pairscreen.notify.run import run_notifications
    from pairscreen.pegs.status import active_depegs

    # the screen, through the verdict endpoint
    screened = {
        pair: http.get(f"/api/v1/screen/latest/pairs/{pair}", http.key).json()["filter_reason"]
        for pair in ("OLD/BASE", "SHORT/BASE", "BASE/PEG")
    }
    assert screened == {
        "OLD/BASE": STALE_REASON,
        "SHORT/BASE": SHORT_REASON,
        "BASE/PEG": DEPEG_REASON,
    }
    # /pair: the stale and depeg reasons replace the filter's, too short a history is refused
    assert http.get("/api/v1/pair/OLD/BASE", http.key).json()["filter_reason"] == STALE_REASON
    assert http.get("/api/v1/pair/BASE/PEG", http.key).json()["filter_reason"] == DEPEG_REASON
    short = http.get("/api/v1/pair/SHORT/BASE", http.key)
    assert short.status_code == 404
    assert short.text == f"No data yet for SHORT/BASE: {SHORT_REASON.split(': ', 1)[1]}.\n"
    # evaluate: the day's replay records the same verdicts, said in the same words
    candles = rt.candles.get()
    market = Market.of(rt.universe, candles, window_days=540, min_history_days=200)
    with database.connection_context():
        depegs = active_depegs()
        day = verdicts_at(rt.plugins, market, [], YESTERDAY, active_depegs)
    assert day.core is not None
    fresh = asset_freshness(rt.universe, last_days(candles), SUNDAY)
    replayed = {}
    for i, (a, b) in enumerate(market.pairs):
        history = market.aligned[i].calendar_days if market.aligned[i] is not None else None
        pair = (a.ticker, b.ticker)
        reason = pair_reason(fresh, pair, int(day.core[i]), history, 200, depegs)
        replayed[f"{a.ticker}/{b.ticker}"] = reason
        # a depegged pair is tested (its p-values count, as in the screen), then rejected
        assert bool(day.tested[i]) == (reason == "" or reason.startswith("depeg"))
    assert replayed["BASE/OLD"] == STALE_REASON and replayed["BASE/SHORT"] == SHORT_REASON
    assert replayed["BASE/PEG"] == DEPEG_REASON and replayed["BASE/WAVE"] == ""
    assert int(day.core[[f"{a.ticker}/{b.ticker}" for a, b in market.pairs].index("BASE/PEG")]) == (
        DEPEGGED
    )
    # notifications: no position is said from these pairs, each is held with its reason
    with database.connection_context():
        user = User.get(User.email == "p@example.com")
        for a, b in (("OLD", "BASE"), ("SHORT", "BASE"), ("BASE", "PEG"), ("BASE", "WAVE")):
            WatchlistItem.create(user=user, a=a, b=b, pair_key=canonical_pair(a, b))
        report = run_notifications(rt, at=SUNDAY)
    assert report.held == {
        "OLD/BASE": STALE_REASON,
        "SHORT/BASE": SHORT_REASON,
        "BASE/PEG": DEPEG_REASON,
    }
    assert report.evaluated == 1  # BASE/WAVE alone has a position


def test_the_core_decides_in_one_order_whatever_it_is_given() -> None:
    """Stale before no candles before short history before depeg; ``None`` history or depeg
    leaves that guarantee undecided (the screen's first step, before it aligns)."""
    from pairscreen.engine.guarantees import (
        DEPEGGED,
        NO_CANDLES,
        PASSES,
        SHORT,
        STALE_LEG,
        core_reason,
        core_verdicts,
    )

    stale = [True, True, False, False, False]
    none = [True, False, True, False, False]
    days = [10, 10, 10, 10, 200]
    assert core_verdicts(stale, none, days, 200).tolist() == [
        STALE_LEG,
        STALE_LEG,
        NO_CANDLES,
        SHORT,
        PASSES,
    ]
    assert core_verdicts(stale, none, None, 200).tolist() == [
        STALE_LEG,
        STALE_LEG,
        NO_CANDLES,
        PASSES,
        PASSES,
    ]
    depegged = [True, True, True, True, True]
    assert core_verdicts(stale, none, days, 200, depegged).tolist() == [
        STALE_LEG,
        STALE_LEG,
        NO_CANDLES,
        SHORT,
        DEPEGGED,
    ]
    assert core_verdicts(stale, none, None, 200, [False] * 4 + [True]).tolist()[-1] == DEPEGGED
    assert core_reason(NO_CANDLES, no_candles=["A", "B"]) == (
        "insufficient_history: no candles stored for A and B"
    )
    assert core_reason(PASSES, history_days=3, min_history_days=200) == ""
