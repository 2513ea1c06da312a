"""Persistence counts, in each previous screen, the pairs that passed every rule but the
persistence rule itself (``Screen.candidate_keys``), so a universe with ``min_persistence``
on from its first screen gets survivors once its pairs have passed the screens before, the
counts equal ``pairscreen evaluate``'s replay of the same days, and screens stored before
the column existed count their survivors."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from pairscreen.bootstrap import build_runtime
from pairscreen.db.connection import database
from pairscreen.db.models import SchemaVersion, Screen
from pairscreen.evaluation.rule_sets import rule_sets
from pairscreen.evaluation.run import evaluate
from pairscreen.evaluation.verdicts import Market
from pairscreen.market.cutoff import close_of
from pairscreen.pegs.status import active_depegs
from pairscreen.runtime import Runtime
from pairscreen.screen_store.published import stored_payload
from pairscreen.screening import screen as screening
from pairscreen.screening.point_in_time import run_screen_as_of
from tests.conftest import make_client

DEMO_UNIVERSE = Path(screening.__file__).resolve().parents[1] / "demo_universe.toml"
BASE = "/api/v1"


def runtime_with(runtime: Runtime, folder: Path, screen_table: str) -> Runtime:
    folder.mkdir(exist_ok=True)
    path = folder / "universe.toml"
    path.write_text(DEMO_UNIVERSE.read_text() + "\n[screen]\n" + screen_table)
    return build_runtime(replace(runtime.settings, universe_path=path), migrate=False)


def consecutive_days(rt: Runtime, count: int) -> list[date]:
    """``count`` consecutive days, oldest first, ending 120 days before the newest candle."""
    with database.connection_context():
        newest = max(c.dates[-1] for c in rt.candles.get().values())
    last = date.fromisoformat(str(newest)) - timedelta(days=120)
    return [last - timedelta(days=back) for back in range(count - 1, -1, -1)]


def stored(day: date) -> tuple[dict, set[str], set[str]]:
    """The screen as of ``day``: its payload, its survivors' and its candidates' keys."""
    with database.connection_context():
        row = Screen.get(Screen.as_of == day)
        payload = json.loads(stored_payload(row.id))
    survivors = {"/".join(s["pair"]) for s in payload["survivors"]}
    assert set(row.survivor_keys.splitlines()) == survivors
    return payload, survivors, set((row.candidate_keys or "").splitlines())


def counted(pair: str, earlier: list[set[str]], n: int) -> int:
    """In how many of the ``n`` newest of ``earlier`` (oldest first) ``pair`` is."""
    a, b = pair.split("/")
    return sum(1 for keys in earlier[-n:] if pair in keys or f"{b}/{a}" in keys)


@pytest.mark.parametrize(
    ("table", "k"),
    [("min_persistence = 1\n", 1), ("min_persistence = 3\ncoint_q_below = 0.01\n", 3)],
)
def test_min_persistence_on_from_the_first_screen_gets_survivors_as_evaluate_replays(
    runtime, tmp_path, keys, table, k
):
    rt = runtime_with(runtime, tmp_path, table)
    n = rt.settings.persistence_screens
    days = consecutive_days(rt, n + 2)
    with database.connection_context():
        for day in days:
            run_screen_as_of(rt, day, processes=1)
    screens = [stored(day) for day in days]
    candidates = [c for _, _, c in screens]

    # A screen with fewer than k screens before it passes nothing; the later ones do, and
    # each survivor's count is the candidates of the screens before it, not their survivors.
    assert [p["n_survivors"] for p, _, _ in screens[:k]] == [0] * k
    for i, (payload, survivors, day_candidates) in enumerate(screens[k:], start=k):
        assert payload["n_survivors"] > 0, days[i]
        assert survivors <= day_candidates
        for s in payload["survivors"]:
            pair = "/".join(s["pair"])
            assert s["survived_last"] == counted(pair, candidates[:i], n) >= k, (days[i], pair)
        failing = {p for p in day_candidates if counted(p, candidates[:i], n) < k}
        assert survivors == day_candidates - failing
        assert payload["rejected"]["persistence"] == len(failing)
    # The persistence rule binds on the first screens, and a q-value rule that is on takes
    # its pairs out of the candidates as well as out of the survivors.
    assert all(p["rejected"]["persistence"] > 0 for p, _, _ in screens[:k])
    if "coint_q_below" in table:  # it binds (on some days' markets not on every one of them)
        assert any(p["rejected"]["coint_q"] > 0 for p, _, _ in screens)

    # What a screen stores as its candidates is what passes with the persistence rule off.
    q_only = runtime_with(runtime, tmp_path / "q_only", table.split("\n", 1)[1])
    with database.connection_context():
        first = screening.compute_screen(q_only, close_of(days[0]), as_of=days[0])
    assert candidates[0] == {"/".join(s["pair"]) for s in first["survivors"]} != set()

    # evaluate replays the last two days (each with n screens before it) to the same verdicts.
    with database.connection_context():
        candles = rt.candles.get()
    market = Market.of(
        rt.universe,
        candles,
        window_days=rt.settings.window_days,
        min_history_days=rt.settings.min_history_days,
    )
    result = evaluate(
        rt.plugins, market, rule_sets(rt.plugins, rt.universe, []), days[-2:], [30],
        every_days=1, fee=0.0, depegs_at=active_depegs, persistence_screens=n,
    )  # fmt: skip
    replayed = next(r.per_date for r in result.results if r.rule_set.name == "screen")
    for entry, i in zip(replayed, (n, n + 1), strict=True):
        payload, survivors, day_candidates = screens[i]
        assert entry["as_of"] == days[i].isoformat()
        assert entry["survived_last"] == {p: counted(p, candidates[:i], n) for p in day_candidates}
        assert set(entry["survivor_pairs"]) == survivors  # type: ignore[arg-type]
        assert entry["rejected"]["persistence"] == payload["rejected"]["persistence"]  # type: ignore[index]

    # /pair's recent verdicts still say whether the pair survived each screen.
    pair = sorted(screens[-1][1])[0]
    client = make_client(rt)
    with client.client:
        body = client.get(f"{BASE}/pair/{pair}", keys.personal).json()
    verdicts = {v["as_of"]: v["survived"] for v in body["recent_verdicts"] if v["as_of"]}
    assert verdicts[days[-1].isoformat()] is True
    for day, (_, survivors, _) in zip(days, screens, strict=True):
        if day.isoformat() in verdicts:
            assert verdicts[day.isoformat()] == (pair in survivors), day


def test_screens_stored_before_migration_18_count_their_survivors(runtime, tmp_path):
    from playhouse.migrate import SchemaMigrator, migrate

    from pairscreen.db.migrations import upgrade

    days = consecutive_days(runtime, 4)
    with database.connection_context():
        for day in days[:-1]:  # persistence off: survivors and candidates are the same pairs
            run_screen_as_of(runtime, day, processes=1)
        table = Screen._meta.table_name
        migrate(SchemaMigrator.from_database(database.obj).drop_column(table, "candidate_keys"))
        SchemaVersion.delete().where(SchemaVersion.version == 18).execute()
        assert upgrade() == [18]
        assert Screen.select().where(Screen.candidate_keys.is_null()).count() == 4  # + demo's
    earlier = [stored(day)[1] for day in days[:-1]]
    assert all(earlier)

    rt = runtime_with(runtime, tmp_path, "min_persistence = 2\n")
    with database.connection_context():
        run_screen_as_of(rt, days[-1], processes=1)
    payload, survivors, candidates = stored(days[-1])
    assert payload["n_survivors"] > 0
    for s in payload["survivors"]:
        pair = "/".join(s["pair"])
        assert s["survived_last"] == counted(pair, earlier, 3) >= 2, pair
    assert survivors == {p for p in candidates if counted(p, earlier, 3) >= 2}
