"""The suite's today is pinned, and what it builds from it holds on other days too.

The demo market is generated to end on the service's today; a suite that read the system
clock screened a different market every day, and a test whose precondition held on one day
failed on the next. tests/support/pinned_clock.py pins the clock for every process of a run;
these tests show the pin reaches the processes the suite starts, that the demo fixture then
depends on the pinned day alone (not on when the run started), and that the date-dependent
tests pass on other days' markets too.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from pairscreen import clock
from tests.support.cli import newcomer_env, run_cli
from tests.support.databases import TEST_DATABASE_URL
from tests.support.pinned_clock import MOMENT_VARIABLE, pinned_moment

ROOT = Path(__file__).resolve().parents[1]
# Tests whose assertions rest on what the demo market of the day looks like: survivors of
# every kind, every rejection reason, spreads of persistence counts, rule sets that bind.
DATE_SENSITIVE = (
    "tests/test_evaluation_screen_wide.py",
    "tests/test_demo_market.py",
    "tests/test_persistence_candidates.py",
    "tests/test_screen_filters.py",
    "tests/test_score.py",
)
OTHER_TODAYS = ("2026-04-17T12:00:00+00:00", "2027-09-02T12:00:00+00:00")


def test_every_process_the_suite_starts_reads_the_pinned_today(tmp_path):
    assert clock.today() == pinned_moment().date()
    code = "from pairscreen import clock; print(clock.now().isoformat())"
    for env in (None, newcomer_env(tmp_path)):  # the suite's own and a newcomer's
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert abs(datetime.fromisoformat(done.stdout.strip()) - clock.now()) < timedelta(minutes=1)


def test_a_bad_shift_is_one_line_naming_the_variable(tmp_path):
    env = {**newcomer_env(tmp_path), clock.SHIFT_VARIABLE: "yesterday"}
    done = run_cli("--data-dir", str(tmp_path), "users", "list", env=env)
    assert done.returncode == 2
    assert done.stderr == (
        f"pairscreen: error: {clock.SHIFT_VARIABLE} must be a number of seconds, got 'yesterday'\n"
    )


def demo_fixture_digest(folder: Path, start: datetime) -> tuple[str, str]:
    """Sync the demo market and screen it with the clock reading ``start``; the digest of
    the stored candles and the published screen's CSV export."""
    folder.mkdir()
    env = {**newcomer_env(folder), clock.SHIFT_VARIABLE: clock.shift_to(start)}
    data = str(folder / "data")
    for command in (("data", "sync"), ("screen", "run", "--no-sync")):
        done = run_cli("--data-dir", data, "--quiet", *command, env=env)
        assert done.returncode == 0, done.stderr
    exported = run_cli("--data-dir", data, "screen", "export", "-", env=env)
    assert exported.returncode == 0, exported.stderr
    with sqlite3.connect(folder / "data" / "pairscreen.sqlite3") as db:
        rows = db.execute("SELECT ticker, day, close, volume FROM candle ORDER BY ticker, day")
        candles = hashlib.sha256(repr(rows.fetchall()).encode()).hexdigest()
    return candles, exported.stdout


def test_the_demo_fixture_depends_on_the_pinned_day_only(tmp_path):
    """Runs started eight hours apart on the same pinned day store the same candles and
    publish the same screen; the next day's run does not (the market did move)."""
    morning = pinned_moment().replace(hour=4, minute=5)
    evening = morning + timedelta(hours=8)
    first, again = (
        demo_fixture_digest(tmp_path / n, t) for n, t in (("a", morning), ("b", evening))
    )
    assert first == again
    assert first[1].count("\n") > 5  # a screen with survivors, not two empty files
    next_day = demo_fixture_digest(tmp_path / "c", morning + timedelta(days=1))
    assert next_day[0] != first[0]


@pytest.mark.slow
@pytest.mark.parametrize("today", OTHER_TODAYS)
def test_the_date_sensitive_tests_pass_on_another_days_market(today):
    if TEST_DATABASE_URL:
        pytest.skip("the SQLite run of the suite shows other days' markets; once is enough")
    env = {**os.environ, MOMENT_VARIABLE: today}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *DATE_SENSITIVE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout.splitlines()[-1]
