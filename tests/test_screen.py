"""The screen: atomic publication, crash safety, identical results on any executor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pairscreen import clock
from pairscreen.db.connection import database
from pairscreen.db.models import Screen
from pairscreen.screen_store import publish
from pairscreen.screen_store.published import stored_payload
from pairscreen.screening import screen as screening


def test_parallel_screen_equals_single_process(runtime):
    at = clock.now()
    with database.connection_context():
        one = screening.compute_screen(runtime, at, processes=1, chunk_rows=1000)
        two = screening.compute_screen(runtime, at, processes=2, chunk_rows=37)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_screen_counts_add_up_and_every_reason_occurs(runtime):
    with database.connection_context():
        screen = screening.compute_screen(runtime, clock.now())
    assert screen["n_pairs_screened"] == len(runtime.universe.screened_pairs())
    assert sum(screen["rejected"].values()) + screen["n_survivors"] == screen["n_pairs_screened"]
    share = screen["n_survivors"] / screen["n_pairs_screened"]
    assert 0.02 < share < 0.3, share
    print(
        f"\ndemo screen: {screen['n_survivors']} of {screen['n_pairs_screened']} survive; "
        f"rejected {screen['rejected']}"
    )


def test_failed_screen_leaves_previous_screen_served(runtime, monkeypatch):
    with database.connection_context():
        before = screening.latest_screen_json(runtime)

        def crash(*args, **kwargs):
            raise RuntimeError("crash mid-screen")

        monkeypatch.setattr(screening, "stream_local", crash)
        with pytest.raises(RuntimeError):
            screening.run_screen(runtime)
        assert screening.latest_screen_json(runtime) == before


SLOW_METRIC = """
import time
from pairscreen import MetricField, hookimpl

class Slow:
    name = "slow"
    fields = (MetricField("slow_value"),)

    def compute(self, panel):
        time.sleep(60)
        raise AssertionError("killed before this")

@hookimpl
def pairscreen_register_metrics():
    return [Slow()]
"""


@pytest.mark.slow
def test_killed_screen_process_leaves_previous_screen_intact(runtime, database_url, tmp_path):
    """SIGKILL during `pairscreen screen run`; the previous screen is still served."""
    with database.connection_context():
        before = screening.latest_screen_json(runtime)
        count = Screen.select().count()
    database.close()
    plugins = tmp_path / "slow_plugins"
    plugins.mkdir()
    (plugins / "slow.py").write_text(SLOW_METRIC)
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PAIRSCREEN_PLUGINS_DIR": str(plugins),
        "PAIRSCREEN_SCREEN_PROCESSES": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairscreen", "screen", "run", "--no-sync"], env=env
    )
    time.sleep(4.0)
    assert proc.poll() is None, "the screen should still be computing"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with database.connection_context():
        assert Screen.select().count() == count
        assert screening.latest_screen_json(runtime) == before


def test_progress_reports_every_pair_once_and_ends_at_the_total(runtime):
    seen: list[tuple[int, int]] = []
    with database.connection_context():
        summary = screening.run_screen(runtime, processes=2, on_progress=lambda *p: seen.append(p))
    total = summary.n_pairs_screened
    assert {t for _, t in seen} == {total}
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == total and len(done) >= 2
    assert summary.publish_seconds >= 0


def test_a_payload_written_in_slices_reads_back_as_the_same_text(runtime, monkeypatch):
    monkeypatch.setattr(publish, "STREAMED_PAYLOAD_BYTES", 0)  # every payload, on SQLite
    monkeypatch.setattr(publish, "PAYLOAD_SLICE", 1000)
    at = clock.now()
    with database.connection_context():
        expected = screening.compute_screen(runtime, at, processes=1)
        summary = screening.run_screen(runtime, at=at, processes=1)
        text = screening.latest_screen_json(runtime)
        stored = stored_payload(summary.screen_id)
    assert isinstance(text, str) and isinstance(stored, str)
    assert text == stored
    assert json.loads(text) == expected
