"""What a screen says about its own evidence: q-values over every tested pair, persistence
across stored screens (point-in-time ones included), the screen-wide rules, and a pair's
recent verdicts, each checked against an independent computation and the contract."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.db.connection import database
from pairscreen.db.models import Screen
from pairscreen.errors import NotFound
from pairscreen.market.cutoff import close_of
from pairscreen.market.freshness import asset_freshness, last_days
from pairscreen.pegs.status import active_depegs, depegged_legs
from pairscreen.runtime import Runtime
from pairscreen.screen_store.published import stored_payload
from pairscreen.screening import screen as screening
from pairscreen.screening.snapshot import aligned_pair, evaluate_pair
from tests.conftest import make_client

DEMO_UNIVERSE = Path(screening.__file__).resolve().parents[1] / "demo_universe.toml"
BASE = "/api/v1"


def runtime_with(runtime: Runtime, tmp_path: Path, screen_table: str) -> Runtime:
    path = tmp_path / "universe.toml"
    path.write_text(DEMO_UNIVERSE.read_text() + "\n[screen]\n" + screen_table)
    return build_runtime(replace(runtime.settings, universe_path=path), migrate=False)


def every_tested_pvalue(rt: Runtime) -> dict[str, list[float]]:
    """Each pair's p-values computed alone, as a snapshot computes them, for every pair the
    screen tests (not stale, enough common history): an independent path to the family."""
    with database.connection_context():
        candles = rt.candles.get()
        fresh = asset_freshness(rt.universe, last_days(candles), clock.now())
        depegs = active_depegs()
        out: dict[str, list[float]] = {"coint_pvalue": [], "adf_pvalue": []}
        for a, b in rt.universe.screened_pairs():
            if fresh[a.ticker].stale or fresh[b.ticker].stale:
                continue
            try:
                pair = aligned_pair(rt, a, b)
            except NotFound:
                continue
            legs = depegged_legs(depegs, a.ticker, b.ticker)
            metrics = evaluate_pair(rt, pair, depegged=legs, bt=360).metrics
            for name in out:
                value = metrics[name]
                out[name].append(np.nan if value is None else float(value))
    return out


def bh(pvalues: list[float]) -> tuple[np.ndarray, np.ndarray]:
    p = np.array(pvalues)
    finite = p[np.isfinite(p)]
    return finite, multipletests(finite, method="fdr_bh")[1]


def test_qvalues_equal_multipletests_over_every_tested_pair(runtime):
    with database.connection_context():
        screen = screening.compute_screen(runtime, clock.now())
    family = every_tested_pvalue(runtime)
    assert screen["pairs_tested"] == len(family["coint_pvalue"])
    assert (
        screen["pairs_tested"]
        == screen["n_pairs_screened"]
        - screen["rejected"]["stale"]
        - (screen["rejected"]["insufficient_history"])
    )
    assert screen["n_survivors"] > 10
    for field, qfield in (("coint_pvalue", "coint_qvalue"), ("adf_pvalue", "adf_qvalue")):
        p, q = bh(family[field])
        assert screen["qvalue_tests"][field] == p.size
        for s in screen["survivors"]:
            value = s["metrics"][field]
            if value is None:
                assert s[qfield] is None
                continue
            at = np.flatnonzero(p == value)
            assert at.size >= 1, (s["pair"], field)  # the screen's p-value is the snapshot's
            assert s[qfield] == pytest.approx(q[at[0]], rel=1e-12, abs=0), (s["pair"], field)
        # q >= p always, and the rules' BH set is the survivors with q below the level
        assert all(s[qfield] >= s["metrics"][field] for s in screen["survivors"] if s[qfield])


def test_qvalue_rules_bind_at_the_second_stage(runtime, tmp_path, keys):
    with database.connection_context():
        default = screening.compute_screen(runtime, clock.now())
    coint_q = sorted(s["coint_qvalue"] for s in default["survivors"])
    adf_q = sorted(s["adf_qvalue"] for s in default["survivors"])
    coint_limit = coint_q[len(coint_q) // 2] + 1e-12  # about half pass
    adf_limit = adf_q[-1] / 2 + 1e-12
    table = f"coint_q_below = {coint_limit!r}\nadf_q_below = {adf_limit!r}\n"
    rt = runtime_with(runtime, tmp_path, table)
    with database.connection_context():
        screening.run_screen(rt)
    c = make_client(rt)
    with c.client:
        body = c.get(f"{BASE}/screen/latest", keys.personal).json()
        pairs = c.get(f"{BASE}/pairs", keys.personal).json()
    survivors = body["survivors"]
    assert 0 < len(survivors) < default["n_survivors"]
    assert all(s["coint_qvalue"] < coint_limit and s["adf_qvalue"] < adf_limit for s in survivors)
    fails_coint = [s for s in default["survivors"] if not s["coint_qvalue"] < coint_limit]
    fails_adf = [
        s
        for s in default["survivors"]
        if s["coint_qvalue"] < coint_limit and not s["adf_qvalue"] < adf_limit
    ]
    assert body["rejected"]["coint_q"] == len(fails_coint) > 0
    assert body["rejected"]["adf_q"] == len(fails_adf)
    assert body["rejected"]["persistence"] == 0
    assert sum(body["rejected"].values()) + body["n_survivors"] == body["n_pairs_screened"]
    # The family does not shrink with the rules: the same q-values as without them.
    by_pair = {tuple(s["pair"]): s for s in default["survivors"]}
    for s in survivors:
        assert s["coint_qvalue"] == by_pair[tuple(s["pair"])]["coint_qvalue"]
    assert body["screen_rules"] == {
        "coint_q_below": coint_limit,
        "adf_q_below": adf_limit,
        "min_persistence": 0,
    }
    assert {p["pair"]: p["coint_qvalue"] for p in pairs["pairs"]} == {
        "/".join(s["pair"]): s["coint_qvalue"] for s in survivors
    }


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("coint_q_below = 0\n", "coint_q_below must be a q-value"),
        ("adf_q_below = 1.5\n", "adf_q_below must be a q-value"),
        ("min_persistence = 1.5\n", "min_persistence must be a whole number"),
        ("min_persistence = -1\n", "min_persistence must be a whole number"),
    ],
)
def test_bad_screen_wide_limits_stop_the_start(runtime, tmp_path, table, message):
    from pairscreen.universe import UniverseError

    with pytest.raises(UniverseError, match=message):
        runtime_with(runtime, tmp_path, table)


def an_old_day(runtime: Runtime) -> date:
    with database.connection_context():
        newest = max(c.dates[-1] for c in runtime.candles.get().values())
    return date.fromisoformat(str(newest)) - timedelta(days=120)


def stored(day: date) -> dict:
    with database.connection_context():
        return json.loads(stored_payload(Screen.get(Screen.as_of == day).id))


def keys_of(payload: dict) -> set[str]:
    return {"/".join(s["pair"]) for s in payload["survivors"]}


def test_persistence_counts_point_in_time_screens(runtime, cli, tmp_path, keys):
    day = an_old_day(runtime)
    earlier = [day - timedelta(days=k) for k in (8, 3, 2, 1)]
    for d in earlier:
        code, _, err = cli("screen", "run", "--as-of", d.isoformat(), "--quiet")
        assert code == 0, err
    # A regular screen 6 hours after the close of day - 1: under a day before the screen as of
    # ``day``, so it is not one of its previous screens.
    with database.connection_context():
        screening.run_screen(runtime, at=close_of(day - timedelta(days=1)) + timedelta(hours=6))
    code, _, err = cli("screen", "run", "--as-of", day.isoformat(), "--quiet")
    assert code == 0, err
    screen = stored(day)
    previous = [keys_of(stored(d)) for d in reversed(earlier)]  # newest first
    assert (
        screen["persistence_screens"]
        == [close_of(d).isoformat() for d in reversed(earlier)][
            : runtime.settings.persistence_screens
        ]
    )
    counts = []
    for s in screen["survivors"]:
        a, b = s["pair"]
        want = sum(1 for k in previous if f"{a}/{b}" in k or f"{b}/{a}" in k)
        assert s["survived_last"] == want, s["pair"]
        counts.append(want)
    assert max(counts) == 4 and min(counts) < 4, counts  # a real spread, not a constant

    # min_persistence binds: only pairs that survived all 4 previous screens stay.
    rt = runtime_with(runtime, tmp_path, "min_persistence = 4\n")
    with database.connection_context():
        strict = screening.compute_screen(rt, close_of(day), as_of=day)
    assert {"/".join(s["pair"]) for s in strict["survivors"]} == {
        "/".join(s["pair"]) for s in screen["survivors"] if s["survived_last"] >= 4
    }
    assert strict["rejected"]["persistence"] == sum(1 for n in counts if n < 4) > 0

    # The pair page's recent verdicts read the same stored screens, through the contract.
    with database.connection_context():
        latest = json.loads(
            stored_payload(
                Screen.select()
                .where(Screen.as_of.is_null())
                .order_by(Screen.generated_at.desc())
                .first()
                .id
            )
        )
    survivor = screen["survivors"][0]["pair"]
    c = make_client(runtime)
    with c.client:
        body = c.get(f"{BASE}/pair/{survivor[0]}/{survivor[1]}", keys.personal).json()
    verdicts = body["recent_verdicts"]
    assert verdicts[0]["generated_at"] == latest["generated_at"] and verdicts[0]["as_of"] is None
    as_of = {v["as_of"]: v["survived"] for v in verdicts if v["as_of"]}
    assert as_of[day.isoformat()] is True
    for d in earlier:
        if d.isoformat() in as_of:
            assert as_of[d.isoformat()] == ("/".join(survivor) in keys_of(stored(d)))
    assert len(verdicts) <= runtime.settings.persistence_screens + 1


def test_new_fields_reach_pairs_and_the_csv(client, keys):
    body = client.get(f"{BASE}/screen/latest", keys.personal).json()
    text = client.get(f"{BASE}/screen/latest", keys.personal, headers={"Accept": "text/csv"}).text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == body["n_survivors"] > 0
    for row, s in zip(rows, body["survivors"], strict=True):
        assert float(row["coint_qvalue"]) == s["coint_qvalue"]
        assert float(row["adf_qvalue"]) == s["adf_qvalue"]
        assert int(row["survived_last"]) == s["survived_last"]
        for field in ("coint_pvalue_ab", "coint_pvalue_ba", "hedge_ratio_ba", "johansen_trace"):
            assert float(row[field]) == s["metrics"][field]
        assert s["metrics"]["coint_pvalue"] == max(
            s["metrics"]["coint_pvalue_ab"], s["metrics"]["coint_pvalue_ba"]
        )
