"""Progress of the long commands: a bar on a terminal, plain lines elsewhere, or nothing.

A bar (rich) shows the steps done, the total and the time left; it is drawn on stderr so that
stdout keeps only the command's result. Where stderr is not a terminal (a log file, a pipe)
a few plain lines say how far the job has come; ``--quiet`` silences both.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress

from pairscreen.progress import Progress, no_progress

PLAIN_STEP_PCT = 25  # a plain line each quarter, and at the end


class ProgressDisplay:
    """Draws the progress of one command's steps; ``step(label)`` gives a step's listener."""

    def __init__(self, *, quiet: bool = False, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.bars: RichProgress | None = None
        if not quiet and self.stream.isatty():
            self.bars = RichProgress(
                TextColumn("{task.description:<14}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("time left"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
            )

    def __enter__(self) -> ProgressDisplay:
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bars is not None:
            self.bars.stop()

    def step(self, label: str) -> Progress:
        if self.quiet:
            return no_progress
        if self.bars is not None:
            return _Bar(self.bars, self.bars.add_task(label, total=None))
        return _PlainLines(label, self.stream)


class _Bar:
    def __init__(self, bars: RichProgress, task: TaskID):
        self.bars = bars
        self.task = task

    def __call__(self, done: int, total: int) -> None:
        self.bars.update(self.task, completed=done, total=total)


class _PlainLines:
    """``label: done/total (pct %, time left)`` each quarter of the way, and when done."""

    def __init__(self, label: str, stream: TextIO):
        self.label = label
        self.stream = stream
        self.started = time.monotonic()
        self.shown = -1  # the last quarter printed

    def __call__(self, done: int, total: int) -> None:
        if total <= 0 or done <= 0:
            return
        pct = min(100, done * 100 // total)
        quarter = pct // PLAIN_STEP_PCT
        if quarter <= self.shown or (pct < 100 and quarter == 0):
            return
        self.shown = quarter
        elapsed = time.monotonic() - self.started
        left = "done" if done >= total else f"about {elapsed * (total - done) / done:.0f} s left"
        print(f"{self.label}: {done}/{total} ({pct} %, {left})", file=self.stream, flush=True)
