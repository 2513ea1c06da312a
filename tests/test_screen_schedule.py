"""The worker screens after each close of the universe's bar: the schedule's arithmetic on
every bar size, its APScheduler trigger on a shifted clock, a retry that leaves the grid
alone, and a live worker whose first screen fires at a daily close."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pairscreen import clock
from pairscreen.contracts.bars import BAR_SIZES, DAILY
from pairscreen.db.connection import database, init_database
from pairscreen.db.models import JobRun
from pairscreen.screen_schedule import ScreenSchedule, ScreenTrigger

ROOT = Path(__file__).resolve().parents[1]
HOURLY, FOUR_HOURS, QUARTER = BAR_SIZES["1h"], BAR_SIZES["4h"], BAR_SIZES["15m"]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "moment", "last", "following"),
    [
        (ScreenSchedule(HOURLY), "2024-03-10T14:03", "2024-03-10T13:05", "2024-03-10T14:05"),
        (ScreenSchedule(HOURLY), "2024-03-10T14:05", "2024-03-10T14:05", "2024-03-10T15:05"),
        (ScreenSchedule(FOUR_HOURS), "2024-03-10T14:03", "2024-03-10T12:05", "2024-03-10T16:05"),
        (
            ScreenSchedule(QUARTER, delay=timedelta(0)),
            "2024-03-10T14:03",
            "2024-03-10T14:00",
            "2024-03-10T14:15",
        ),
        (ScreenSchedule(DAILY), "2024-03-10T14:03", "2024-03-10T00:05", "2024-03-11T00:05"),
        (ScreenSchedule(DAILY), "2024-03-10T00:04", "2024-03-09T00:05", "2024-03-10T00:05"),
        # every 3 hourly closes: multiples of 3 h from 00:00 UTC, whatever the start
        (
            ScreenSchedule(HOURLY, every=3),
            "2024-03-10T14:03",
            "2024-03-10T12:05",
            "2024-03-10T15:05",
        ),
    ],
)
def test_screen_times_sit_on_the_bars_utc_grid(schedule, moment, last, following):
    assert schedule.last_at_or_before(at(moment)) == at(last)
    assert schedule.next_after(at(moment)) == at(following)


def test_a_starting_worker_screens_at_once_only_when_a_close_passed_unscreened():
    hourly = ScreenSchedule(HOURLY)
    now = at("2024-03-10T14:30")
    assert hourly.first_due(None, now) == now  # never screened
    assert hourly.first_due(at("2024-03-10T13:50"), now) == now  # 14:05's screen missed
    assert hourly.first_due(at("2024-03-10T14:06"), now) == at("2024-03-10T15:05")


def test_a_failed_screen_is_retried_unless_the_next_close_comes_first():
    hourly = ScreenSchedule(HOURLY, retry=timedelta(minutes=15))
    assert hourly.retry_at(at("2024-03-10T14:06")) == at("2024-03-10T14:21")
    assert hourly.retry_at(at("2024-03-10T14:55")) is None  # 15:05 comes first
    daily = ScreenSchedule(DAILY)
    assert daily.retry_at(at("2024-03-10T00:06")) == at("2024-03-10T00:21")


def test_the_schedule_reads_as_a_line_and_refuses_a_delay_past_its_step():
    assert ScreenSchedule(HOURLY).describe() == "after every 1h bar close + 5 min"
    assert ScreenSchedule(FOUR_HOURS, every=2).describe() == "after every 2 4h bar closes + 5 min"
    assert ScreenSchedule(DAILY).describe() == "after each daily close (00:00 UTC) + 5 min"
    with pytest.raises(ValueError, match=r"shorter than its step \(15 min\), got 20 min"):
        ScreenSchedule(QUARTER, delay=timedelta(minutes=20))
    with pytest.raises(ValueError, match="every 1 or more bars"):
        ScreenSchedule(HOURLY, every=0)


def test_the_trigger_stays_on_the_grid_after_a_retry_on_a_shifted_clock(monkeypatch):
    # The service's clock reads 2024-03-10T14:06Z; APScheduler hands the system clock's time.
    system_now = datetime.now(UTC).replace(microsecond=0)
    monkeypatch.setenv(
        clock.SHIFT_VARIABLE, clock.shift_to(at("2024-03-10T14:06"), system_now=system_now)
    )
    shift = clock.shift()
    trigger = ScreenTrigger(ScreenSchedule(HOURLY))
    first = trigger.get_next_fire_time(None, system_now)
    assert first + shift == at("2024-03-10T15:05")
    # A retry fired at 14:21 (service clock): the next screen is still 15:05, not 15:21.
    retried = at("2024-03-10T14:21") - shift
    assert trigger.get_next_fire_time(retried, retried) + shift == at("2024-03-10T15:05")
    # A screen that ran long past its own time does not fire twice for one close.
    fired = at("2024-03-10T15:05") - shift
    late = at("2024-03-10T15:04:59") - shift  # the system clock stepped back a second
    assert trigger.get_next_fire_time(fired, late) + shift == at("2024-03-10T16:05")


def test_a_live_worker_screens_at_the_daily_close(database_url, tmp_path, monkeypatch):
    """The clock is set 10 s before 00:00 UTC with a screen finished the evening before: the
    worker waits for the close and screens then, not at start and not 6 hours later."""
    night = datetime.combine(clock.today() - timedelta(days=1), datetime.min.time(), UTC)
    close = night + timedelta(days=1)
    started, screened = screen_at_close(database_url, tmp_path, monkeypatch, close)
    assert f"screen after each daily close (00:00 UTC) + 0 s (next {clock.iso(close)})" in started
    assert "; screen #" in screened


def test_a_live_worker_screens_an_hourly_universe_at_each_hours_close(tmp_path, monkeypatch):
    """An hourly csv universe (tests/fixtures/hourly): the worker syncs the bars and screens
    at the next hour's close; its evidence job evaluates the bars too."""
    from tests.test_hourly_screen import write_universe

    universe = write_universe(tmp_path)
    close = datetime(2023, 4, 1, 7, 0, tzinfo=UTC)
    started, screened = screen_at_close(
        f"sqlite:///{tmp_path / 'hourly.sqlite3'}",
        tmp_path,
        monkeypatch,
        close,
        {"PAIRSCREEN_UNIVERSE": str(universe)},
    )
    assert f"screen after every 1h bar close + 0 s (next {clock.iso(close)})" in started
    assert "evidence every 24 h (next " in started and "no evidence" not in started
    assert "; screen #1: 6 pairs, " in screened


def screen_at_close(
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    close: datetime,
    extra: dict[str, str] | None = None,
) -> tuple[str, str]:
    """Start a worker 10 s before ``close`` (the last screen finished an hour before it),
    wait for its first screen; its start-up line and the screen's log line."""
    start = close - timedelta(seconds=10)
    shift = clock.shift_to(start)
    monkeypatch.setenv(clock.SHIFT_VARIABLE, shift)
    init_database(database_url)
    with database.connection_context():
        JobRun.replace(name="screen", finished_at=start - timedelta(minutes=50)).execute()
        for job in ("peg_sample", "evidence"):
            JobRun.replace(name=job, finished_at=clock.now()).execute()
    database.close()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PAIRSCREEN_DATA_DIR": str(tmp_path),
        "PAIRSCREEN_LOAD_PLUGINS": "",
        clock.SHIFT_VARIABLE: shift,
        **(extra or {}),
    }
    env.pop("PAIRSCREEN_PLUGINS_DIR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairscreen", "worker", "--screen-delay", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _lines_until(proc, "ran screen in", timeout=120)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with database.connection_context():
        finished = JobRun.get(JobRun.name == "screen").finished_at
    database.close()
    assert finished >= close  # after the close, not at start
    started = next(line for line in lines if "started; jobs:" in line)
    return started, lines[-1]


def _lines_until(proc: subprocess.Popen[str], text: str, timeout: float) -> list[str]:
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stderr.fileno(), False)
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line:
            lines.append(line.rstrip("\n"))
            if text in line:
                return lines
            continue
        if proc.poll() is not None:
            raise AssertionError(f"worker exited ({proc.returncode}):\n" + "\n".join(lines))
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} within {timeout} s:\n" + "\n".join(lines))


def test_a_failed_screen_is_tried_again_before_the_next_close(
    empty_database_url, tmp_path, monkeypatch
):
    """The source's folder vanished (a lost mount) between two screens: the failure is
    logged and the screen is due again after the retry delay, not at tomorrow's close."""
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.worker import Worker, WorkerOptions

    moment = datetime.combine(clock.today(), datetime.min.time(), UTC) + timedelta(minutes=6)
    monkeypatch.setenv(clock.SHIFT_VARIABLE, clock.shift_to(moment))
    folder = tmp_path / "closes"
    folder.mkdir()
    universe = tmp_path / "universe.toml"
    universe.write_text(
        '[components]\nmarket_source = "csv"\n'
        f'[plugins.csv_source]\npath = "{folder}"\n'
        + "".join(
            f'[[asset]]\nticker = "{t}"\nclass = "crypto"\nsector = "L1"\n' for t in ("A", "B")
        )
    )
    init_database(empty_database_url)
    settings = load_settings(
        data_dir=tmp_path, database_url=empty_database_url, universe_path=universe
    )
    schedule = ScreenSchedule(DAILY, retry=timedelta(minutes=15))
    worker = Worker(build_runtime(settings), WorkerOptions(screen=schedule))
    with database.connection_context():
        worker._add_jobs()
    folder.rmdir()
    failed_at = clock.now()
    worker._job("screen", worker._screen)()  # logs the failure, raises nothing
    due = worker.scheduler.get_job("screen").next_run_time
    retry = clock.on_system_clock(failed_at + timedelta(minutes=15))
    assert timedelta(0) <= due - retry < timedelta(seconds=5)
    database.close()
