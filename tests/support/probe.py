"""The probe: a local plugin (``PAIRSCREEN_PLUGINS_DIR``) for tests against live servers.

Its metric records the pid of the process that computed each request (``computed.log``),
and holds the computation while the flag file ``hold`` exists, so a test can keep requests
in flight on purpose and find the worker serving one. Loading it records the pid of every
process that built a runtime (``loaded.log``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

PROBE_PLUGIN = """
import os
import time
from pathlib import Path

import numpy as np

from pairscreen import MetricField, hookimpl

FOLDER = Path(os.environ["PAIRSCREEN_TEST_PROBE_DIR"])
with (FOLDER / "loaded.log").open("a") as log:  # once per process that loads plugins
    log.write(f"{os.getpid()}\\n")


class Probe:
    name = "probe"
    fields = (MetricField("probe_pid", "integer"),)

    def compute(self, panel):
        with (FOLDER / "computed.log").open("a") as log:
            log.write(f"{os.getpid()}\\n")
        deadline = time.monotonic() + 120
        while (FOLDER / "hold").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return {"probe_pid": np.full(panel.n_pairs, os.getpid())}


@hookimpl
def pairscreen_register_metrics():
    return [Probe()]
"""


@dataclass
class Probe:
    folder: Path

    @classmethod
    def install(cls, tmp_path: Path) -> tuple[Probe, dict[str, str]]:
        """Write the plugin under ``tmp_path``; the probe and the server's environment."""
        plugins = tmp_path / "probe_plugins"
        plugins.mkdir()
        (plugins / "probe.py").write_text(PROBE_PLUGIN)
        probe = cls(tmp_path / "probe")
        probe.folder.mkdir()
        env = {
            "PAIRSCREEN_PLUGINS_DIR": str(plugins),
            "PAIRSCREEN_TEST_PROBE_DIR": str(probe.folder),
        }
        return probe, env

    def _pids(self, name: str) -> list[int]:
        path = self.folder / name
        return [int(line) for line in path.read_text().split()] if path.exists() else []

    @property
    def loaded(self) -> list[int]:
        return self._pids("loaded.log")

    @property
    def computed(self) -> list[int]:
        return self._pids("computed.log")

    def hold(self) -> None:
        (self.folder / "hold").touch()

    def release(self) -> None:
        (self.folder / "hold").unlink(missing_ok=True)

    def wait_computing(self, count: int, timeout: float = 30) -> list[int]:
        """Wait until ``count`` computations have started; their worker pids."""
        deadline = time.monotonic() + timeout
        while len(self.computed) < count:
            assert time.monotonic() < deadline, f"only {len(self.computed)} of {count} started"
            time.sleep(0.02)
        return self.computed
