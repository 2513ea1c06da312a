"""Progress of the long commands: a bar with counts and time left on a terminal, a few plain
lines elsewhere, nothing with ``--quiet``; stdout keeps only the result."""

from __future__ import annotations

import io
import re
from pathlib import Path

from pairscreen.cli.progress import ProgressDisplay
from tests.support.cli import newcomer_env, run_cli, run_on_terminal


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_say_each_quarter_with_counts() -> None:
    stream = io.StringIO()
    with ProgressDisplay(stream=stream) as display:
        step = display.step("peg samples")
        for done in range(9):
            step(done, 8)
    lines = stream.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "peg samples: 2/8",
        "peg samples: 4/8",
        "peg samples: 6/8",
        "peg samples: 8/8",
    ]
    assert lines[0].endswith("s left)") and lines[-1].endswith("(100 %, done)")


def test_a_terminal_gets_a_bar_with_counts_and_time_left() -> None:
    stream = _Terminal()
    with ProgressDisplay(stream=stream) as display:
        step = display.step("screen chunks")
        step(3, 4)
    shown = stream.getvalue()
    assert "screen chunks" in shown and "3/4" in shown and "time left" in shown


def test_quiet_shows_nothing_even_on_a_terminal() -> None:
    stream = _Terminal()
    with ProgressDisplay(quiet=True, stream=stream) as display:
        display.step("market data")(1, 1)
    assert stream.getvalue() == ""


def test_data_sync_reports_progress_on_stderr_and_quiet_silences_it(tmp_path: Path) -> None:
    env = newcomer_env(tmp_path)
    done = run_cli("--data-dir", str(tmp_path / "data"), "data", "sync", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(re.fullmatch(r"market data: \d+/\d+ \(.*\)", line) for line in lines)
    assert lines[-1].endswith("(100 %, done)")
    assert "market data" not in done.stdout
    again = run_cli("data", "sync", "--quiet", "--data-dir", str(tmp_path / "data"), env=env)
    assert (again.returncode, again.stderr) == (0, "")


def test_screen_run_and_peg_backfill_draw_bars_on_a_terminal(tmp_path: Path) -> None:
    env = newcomer_env(tmp_path)
    data = str(tmp_path / "data")
    assert run_cli("--data-dir", data, "-q", "data", "sync", env=env).returncode == 0
    code, shown = run_on_terminal("--data-dir", data, "screen", "run", env=env)
    assert code == 0, shown
    assert "\x1b[" in shown  # drawn, not printed as lines
    assert re.search(r"pairs .*\d+/\d+ .*time left", _plain(shown)), shown
    code, shown = run_on_terminal(
        "--data-dir", data, "peg", "sample", "--no-sync", "--backfill-hours", "6", env=env
    )
    assert code == 0, shown
    assert re.search(r"peg samples .*(\d+)/\1 .*time left", _plain(shown)), shown


def _plain(shown: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
