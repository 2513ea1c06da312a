"""The depeg detector against the rule of docs/api.md, on its own SQLite file.

The rule, read directly: at any time, a ticker is in an active event when, since its last
healthy sample and since its data last went stale, it has unhealthy samples that number at
least 6 and span at least 12 hours (unknown samples count for nothing either way). Data goes
stale when the asset class's staleness limit (5 days for PAXG) passes after an unhealthy
sample with no later sample (these samples carry no observation times: each counts as
observed when taken). The property tests compare the detector with a brute-force reading of
exactly that, over random sample sequences fed in order, in any order, and again after a
"restart"; each detection runs at the newest sample's time (the present of that moment).
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peewee import fn

from pairscreen import hookimpl
from pairscreen.config import Settings
from pairscreen.contracts import Asset, PegConfig, PegEventChange
from pairscreen.db.connection import connect, database, init_database
from pairscreen.db.models import PegEvent, PegSample
from pairscreen.pegs.detector import detect_events
from pairscreen.pegs.status import peg_status, unhealthy_since
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.universe import Universe

T0 = datetime(2025, 1, 6, tzinfo=UTC)  # a Monday
H = timedelta(hours=1)
LIMIT = timedelta(days=5)  # tokenized_metal's staleness limit
PAXG = Asset("PAXG", "gold", "tokenized_metal", peg=PegConfig("XAU", ("demo",), 1.0, 1.0))
AAPLX = Asset("AAPLx", "equities", "tokenized_equity", peg=PegConfig("AAPL", ("demo",), 1.0, 1.5))
UNIVERSE = Universe(assets=(PAXG, AAPLX), market_source="demo")


class EventRecorder:
    """A plugin that records every ``pairscreen_peg_event_changed`` call."""

    def __init__(self) -> None:
        self.calls: list[PegEventChange] = []

    @hookimpl
    def pairscreen_peg_event_changed(self, event: PegEventChange) -> None:
        self.calls.append(event)

    def of(self, change: str) -> list[PegEventChange]:
        return [c for c in self.calls if c.change == change]


@dataclass(frozen=True)
class S:
    t: datetime
    status: str
    drift: float | None


@pytest.fixture(scope="module")
def peg_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('detector')) / 'peg.sqlite3'}"
    init_database(url)
    database.close()
    return url


@pytest.fixture(autouse=True)
def bound(peg_db: str):
    connect(peg_db)
    clear()
    yield
    database.close()


def clear() -> None:
    PegSample.delete().execute()
    PegEvent.delete().execute()


def plugins_with(recorder: EventRecorder) -> Plugins:
    pm = new_plugin_manager()
    pm.register(recorder)
    return Plugins(pm, Settings())


def store(samples: list[S], ticker: str = "PAXG") -> None:
    for s in samples:
        PegSample.insert(
            ticker=ticker,
            sampled_at=s.t,
            status=s.status,
            market_price=100.0,
            reference_price=None if s.drift is None else 100.0 / (1 + s.drift / 100),
            reference_source="" if s.status == "unknown" else "demo",
            drift_pct=s.drift,
            threshold_pct=1.0,
        ).on_conflict_ignore().execute()


def seq(*parts: tuple[str, float]) -> list[S]:
    """Samples at T0 + hours: ("u", 0), ("h", 1), ("?", 2) ..."""
    status = {"u": "unhealthy", "h": "healthy", "?": "unknown"}
    drift = {"u": -2.0, "h": 0.1, "?": None}
    return [S(T0 + timedelta(hours=h), status[k], drift[k]) for k, h in parts]


def unhealthy_hours(*hours: float) -> list[S]:
    return seq(*(("u", h) for h in hours))


def active_rows(ticker: str = "PAXG") -> list[PegEvent]:
    return list(PegEvent.select().where((PegEvent.ticker == ticker) & PegEvent.active))


# ---------------------------------------------------------------------------
# The rule, read directly (brute force over prefixes)
# ---------------------------------------------------------------------------


def oracle_active(
    prefix: list[S], at: datetime | None = None
) -> tuple[datetime, datetime, int, float] | None:
    """(first, last, count, median drift) of the active event at ``at`` (default: the newest
    sample's time) given the samples of ``prefix``."""
    ordered = sorted(prefix, key=lambda s: s.t)
    at = at or ordered[-1].t
    run: list[S] = []
    for s in ordered:
        if run and s.t > run[-1].t + LIMIT:
            run = []  # the run's data went stale before this sample
        if s.status == "unhealthy":
            run.append(s)
        elif s.status == "healthy":
            run = []
    if not run or at > run[-1].t + LIMIT:
        return None
    span = run[-1].t - run[0].t
    if len(run) >= 6 and span >= timedelta(hours=12):
        return (run[0].t, run[-1].t, len(run), statistics.median(x.drift for x in run))
    return None


def oracle_events(samples: list[S]) -> dict[datetime, tuple[datetime, int, float, bool]]:
    """Every event the sequence ever had: first -> (last, count, median, still active)."""
    ordered = sorted(samples, key=lambda s: s.t)
    events: dict[datetime, tuple[datetime, int, float, bool]] = {}
    for k in range(len(ordered)):
        found = oracle_active(ordered[: k + 1])
        if found:
            first, last, count, median = found
            events[first] = (last, count, median, False)
    now = oracle_active(ordered)
    if now:
        last, count, median, _ = events[now[0]]
        events[now[0]] = (last, count, median, True)
    return events


def stored_events() -> dict[datetime, tuple[datetime, int, float, bool]]:
    return {
        e.first_unhealthy: (e.last_unhealthy, e.sample_count, e.median_drift_pct, e.active)
        for e in PegEvent.select().where(PegEvent.ticker == "PAXG")
    }


statuses = st.sampled_from(["unhealthy"] * 5 + ["healthy"] + ["unknown"] * 2)
gaps = st.sampled_from([0.5, 1, 1, 1, 1, 2, 3, 6, 12])
sequences = st.lists(
    st.tuples(gaps, statuses, st.floats(1.2, 6.0), st.booleans()), min_size=1, max_size=45
)


def build(draw: list[tuple[float, str, float, bool]]) -> list[S]:
    out, t = [], T0
    for gap, status, size, negative in draw:
        t += timedelta(hours=gap)
        drift = {"unhealthy": -size if negative else size, "healthy": 0.2, "unknown": None}
        out.append(S(t, status, drift[status]))
    return out


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@PROPERTY
@given(sequences)
def test_in_order_samples_follow_the_rule_at_every_step(draw):
    clear()
    samples = build(draw)
    recorder = EventRecorder()
    plugins = plugins_with(recorder)
    for k, s in enumerate(samples):
        store([s])
        detect_events(plugins, UNIVERSE, ["PAXG"], at=s.t)
        expected = oracle_active(samples[: k + 1])
        rows = active_rows()
        assert len(rows) == (1 if expected else 0)
        if expected:
            first, last, count, median = expected
            assert (rows[0].first_unhealthy, rows[0].last_unhealthy) == (first, last)
            assert rows[0].sample_count == count
            assert rows[0].median_drift_pct == pytest.approx(median)
    expected_events = oracle_events(samples)
    assert stored_events().keys() == expected_events.keys()
    for first, (last, count, median, active) in expected_events.items():
        got = stored_events()[first]
        assert got[:2] == (last, count) and got[3] is active
        assert got[2] == pytest.approx(median)
    # exactly one "opened" per event, one "closed" per event that ended
    assert sorted(c.first_unhealthy for c in recorder.of("opened")) == sorted(expected_events)
    assert sorted(c.first_unhealthy for c in recorder.of("closed")) == sorted(
        f for f, v in expected_events.items() if not v[3]
    )
    # a restart changes nothing and announces nothing
    assert detect_events(plugins, UNIVERSE, at=samples[-1].t) == []


@PROPERTY
@given(sequences, st.randoms(use_true_random=False), st.integers(1, 6))
def test_late_and_out_of_order_samples_end_in_the_same_events(draw, rnd: random.Random, batch):
    clear()
    samples = build(draw)
    shuffled = samples[:]
    rnd.shuffle(shuffled)
    recorder = EventRecorder()
    plugins = plugins_with(recorder)
    for start in range(0, len(shuffled), batch):
        store(shuffled[start : start + batch])
        newest = max(s.t for s in shuffled[: start + batch])
        detect_events(plugins, UNIVERSE, ["PAXG"], at=newest)
    expected = oracle_events(samples)
    stored = stored_events()
    # every real event is there with the right numbers; the active one is the right one
    for first, (last, count, median, active) in expected.items():
        assert stored[first][:2] == (last, count)
        assert stored[first][2] == pytest.approx(median)
        assert stored[first][3] is active
    assert {f for f, v in stored.items() if v[3]} == {f for f, v in expected.items() if v[3]}
    # an event announced from a partial view and later disproved was closed, never deleted:
    # one "opened" per row, one "closed" per inactive row
    rows = list(PegEvent.select())
    assert len(recorder.of("opened")) == len(rows)
    assert len(recorder.of("closed")) == sum(not r.active for r in rows)
    assert detect_events(plugins, UNIVERSE, at=samples[-1].t) == []


# ---------------------------------------------------------------------------
# Edge cases, one by one
# ---------------------------------------------------------------------------


def newest_sample() -> datetime:
    return PegSample.select(fn.MAX(PegSample.sampled_at)).scalar()


def run_detector(
    recorder: EventRecorder | None = None, at: datetime | None = None
) -> list[PegEventChange]:
    """The detector as of ``at``, by default the newest sample's time."""
    return detect_events(
        plugins_with(recorder or EventRecorder()), UNIVERSE, at=at or newest_sample()
    )


def test_exactly_12_hours_and_exactly_6_samples_is_an_event():
    store(unhealthy_hours(0, 2, 4, 6, 8, 12))
    recorder = EventRecorder()
    changes = run_detector(recorder)
    assert [(c.change, c.ticker, c.sample_count) for c in changes] == [("opened", "PAXG", 6)]
    assert recorder.calls == changes
    event = changes[0]
    assert event.asset_class == "tokenized_metal"
    assert (event.first_unhealthy, event.last_unhealthy) == (T0, T0 + 12 * H)
    assert event.reference_source == "demo"


def test_just_under_12_hours_is_not_an_event():
    store(unhealthy_hours(0, 2, 4, 6, 8, 11.99))
    assert run_detector() == []
    assert unhealthy_since("PAXG") == T0  # shown before it is an event


def test_12_hours_with_only_5_samples_is_not_an_event():
    store(unhealthy_hours(0, 3, 6, 9, 12))
    assert run_detector() == []
    store(unhealthy_hours(12.5))
    assert [c.change for c in run_detector()] == ["opened"]


def test_a_gap_in_sampling_neither_breaks_nor_fills_the_run():
    store(unhealthy_hours(0, 1, 2, 3))
    assert run_detector() == []
    store(unhealthy_hours(14, 15))  # ten hours without any sample
    (opened,) = run_detector()
    assert (opened.first_unhealthy, opened.last_unhealthy, opened.sample_count) == (
        T0,
        T0 + 15 * H,
        6,
    )


def test_a_healthy_sample_in_between_starts_the_count_again():
    store(seq(*(("u", h) for h in range(0, 8)), ("h", 8), *(("u", h) for h in range(9, 21))))
    assert run_detector() == []  # 9h..20h is 11 hours
    assert unhealthy_since("PAXG") == T0 + 9 * H
    store(unhealthy_hours(21))
    (opened,) = run_detector()
    assert opened.first_unhealthy == T0 + 9 * H and opened.sample_count == 13


def test_an_unknown_sample_neither_extends_nor_breaks_the_run():
    store(
        seq(
            *(("u", h) for h in range(0, 7)),
            ("?", 7),
            ("?", 8),
            ("?", 9),
            ("?", 10),
            ("u", 11),
            ("u", 12),
        )
    )
    (opened,) = run_detector()
    assert (opened.first_unhealthy, opened.last_unhealthy) == (T0, T0 + 12 * H)
    assert opened.sample_count == 9  # the unknown samples are not counted
    store(seq(("?", 13), ("?", 14)))
    assert run_detector() == []  # still active: unknown samples do not end it
    assert len(active_rows()) == 1
    assert unhealthy_since("PAXG") == T0


def test_the_first_healthy_sample_closes_the_event_once():
    store(unhealthy_hours(*range(0, 13)))
    recorder = EventRecorder()
    run_detector(recorder)
    store(seq(("h", 13)))
    run_detector(recorder)
    store(seq(("h", 14), ("u", 15)))
    run_detector(recorder)
    assert [c.change for c in recorder.calls] == ["opened", "closed"]
    closed = recorder.calls[1]
    assert closed.last_unhealthy == T0 + 12 * H and closed.sample_count == 13
    (row,) = PegEvent.select()
    assert not row.active and row.closed_at == T0 + 13 * H


def test_a_weekend_of_stale_equity_references_raises_nothing():
    """Friday healthy, the weekend unknown (the stock market is closed, the token drifts),
    Monday healthy: no event, no unhealthy run, whatever the token did meanwhile."""
    friday = T0 + timedelta(days=4, hours=15)  # Friday 15:00 UTC
    samples = [S(friday + k * H, "healthy", 0.3) for k in range(7)]
    samples += [S(friday + k * H, "unknown", None) for k in range(7, 67)]  # to Monday 10:00
    samples += [S(friday + k * H, "healthy", -0.4) for k in range(72, 78)]  # Monday session
    store(samples, ticker="AAPLx")
    assert run_detector() == []
    assert unhealthy_since("AAPLx") is None
    status = peg_status(AAPLX, UNIVERSE, T0 + timedelta(days=4, hours=15 + 77))
    assert status["status"] == "healthy" and status["active_event"] is False


def test_an_unhealthy_run_resumes_across_a_weekend_of_unknown_samples():
    """Unknown samples do not break a run: Friday's unhealthy afternoon and Monday's make one
    run (hours_unhealthy spans the weekend), which is an event once it has 6 samples."""
    friday = T0 + timedelta(days=4, hours=15)
    store([S(friday + k * H, "unhealthy", 2.5) for k in range(4)], ticker="AAPLx")
    store([S(friday + k * H, "unknown", None) for k in range(4, 67)], ticker="AAPLx")
    assert run_detector() == []
    store([S(friday + k * H, "unhealthy", 2.4) for k in (72, 73)], ticker="AAPLx")
    (opened,) = run_detector()
    assert opened.ticker == "AAPLx" and opened.asset_class == "tokenized_equity"
    assert opened.first_unhealthy == friday and opened.sample_count == 6


def test_a_late_healthy_sample_that_splits_an_announced_event_closes_it():
    store(unhealthy_hours(*range(0, 7), *range(8, 20)))
    recorder = EventRecorder()
    run_detector(recorder)
    assert [c.change for c in recorder.calls] == ["opened"]
    store(seq(("h", 7)))  # arrives late: the run was never 12 hours long
    run_detector(recorder)
    assert [c.change for c in recorder.calls] == ["opened", "closed"]
    assert active_rows() == []
    store(unhealthy_hours(20, 21))  # 8h..21h: a new event, announced as such
    run_detector(recorder)
    assert [c.change for c in recorder.calls] == ["opened", "closed", "opened"]
    assert active_rows()[0].first_unhealthy == T0 + 8 * H


def test_a_late_earlier_sample_extends_the_event_without_announcing_it_again():
    store(unhealthy_hours(*range(2, 15)))
    recorder = EventRecorder()
    run_detector(recorder)
    store(unhealthy_hours(0, 1))
    run_detector(recorder)
    assert [c.change for c in recorder.calls] == ["opened"]
    (row,) = active_rows()
    assert row.first_unhealthy == T0 and row.sample_count == 15


def test_old_closed_history_is_final_when_its_samples_expire():
    store(unhealthy_hours(*range(0, 13)) + seq(("h", 13)))
    run_detector()
    (old,) = PegEvent.select()
    later = T0 + timedelta(days=20)
    store([S(later + k * H, "healthy", 0.1) for k in range(3)])
    PegSample.delete().where(PegSample.sampled_at < T0 + 6 * H).execute()  # retention
    assert run_detector() == []
    (row,) = PegEvent.select()
    assert (row.first_unhealthy, row.sample_count, row.active) == (T0, 13, False)
    assert row.id == old.id


def test_one_failing_plugin_does_not_stop_the_others():
    class Broken:
        @hookimpl
        def pairscreen_peg_event_changed(self, event):
            raise RuntimeError("boom")

    recorder = EventRecorder()
    pm = new_plugin_manager()
    pm.register(Broken())
    pm.register(recorder)
    store(unhealthy_hours(*range(0, 13)))
    detect_events(Plugins(pm, Settings()), UNIVERSE, at=T0 + 12 * H)
    assert [c.change for c in recorder.calls] == ["opened"]
    assert len(active_rows()) == 1
