"""The sleeper: a local plugin (``PAIRSCREEN_PLUGINS_DIR``) whose metric takes its time.

Each computation sleeps the seconds written in the file ``seconds`` of its folder (read at
every call, so a test can change it) and then appends ``<start> <end>`` (wall clock) to
``spans.log``: the spans say how many computations ran at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SLEEPER_PLUGIN = """
import os
import time
from pathlib import Path

import numpy as np

from pairscreen import MetricField, hookimpl

FOLDER = Path(os.environ["PAIRSCREEN_TEST_SLEEPER_DIR"])


class Sleeper:
    name = "sleeper"
    fields = (MetricField("slept", "number"),)

    def compute(self, panel):
        start = time.time()
        seconds = float((FOLDER / "seconds").read_text())
        time.sleep(seconds)
        with (FOLDER / "spans.log").open("a") as log:
            log.write(f"{start} {time.time()}\\n")
        return {"slept": np.full(panel.n_pairs, seconds)}


@hookimpl
def pairscreen_register_metrics():
    return [Sleeper()]
"""


@dataclass
class Sleeper:
    folder: Path

    @classmethod
    def install(cls, tmp_path: Path, seconds: float) -> tuple[Sleeper, dict[str, str]]:
        """Write the plugin under ``tmp_path``; the sleeper and the server's environment."""
        plugins = tmp_path / "sleeper_plugins"
        plugins.mkdir()
        (plugins / "sleeper.py").write_text(SLEEPER_PLUGIN)
        sleeper = cls(tmp_path / "sleeper")
        sleeper.folder.mkdir()
        sleeper.sleep(seconds)
        env = {
            "PAIRSCREEN_PLUGINS_DIR": str(plugins),
            "PAIRSCREEN_TEST_SLEEPER_DIR": str(sleeper.folder),
        }
        return sleeper, env

    def sleep(self, seconds: float) -> None:
        (self.folder / "seconds").write_text(str(seconds))

    def spans(self) -> list[tuple[float, float]]:
        path = self.folder / "spans.log"
        if not path.exists():
            return []
        return [
            (float(a), float(b))
            for a, b in (line.split() for line in path.read_text().splitlines())
        ]

    def most_at_once(self) -> int:
        """The most computations that ran at the same time."""
        events = sorted([(a, 1) for a, _ in self.spans()] + [(b, -1) for _, b in self.spans()])
        running = most = 0
        for _, step in events:
            running += step
            most = max(most, running)
        return most
