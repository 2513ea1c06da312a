"""The Dask executor: a LocalCluster of 2 worker processes gives the local executor's screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from pairscreen import MetricField, clock, hookimpl
from pairscreen.db.connection import database
from pairscreen.db.models import Screen
from pairscreen.screening import screen as screening

distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as local_cluster:
        yield local_cluster


def _worker_state(address: str) -> dict[str, tuple[int, bool]]:
    """Per worker: its process id and whether it has loaded the plugins."""
    from pairscreen.engine.dask_worker import loaded_on

    def state(dask_worker) -> tuple[int, bool]:  # type: ignore[no-untyped-def]
        return os.getpid(), loaded_on(dask_worker)

    with distributed.Client(address, set_as_default=False) as client:
        return client.run(state)


def test_dask_screen_is_identical_to_local(runtime, cluster):
    at = clock.now()
    with database.connection_context():
        local = screening.compute_screen(runtime, at, processes=1)
        # Small chunks so that both workers get many of them and order matters.
        on_dask = screening.compute_screen(
            runtime, at, chunk_rows=23, executor="dask", scheduler=cluster.scheduler_address
        )
    assert local["n_survivors"] > 0
    assert json.dumps(on_dask) == json.dumps(local)
    workers = _worker_state(cluster.scheduler_address)
    assert len(workers) == 2
    assert os.getpid() not in {pid for pid, _ in workers.values()}
    assert all(loaded for _, loaded in workers.values()), "every worker ran chunks"


def test_cli_screen_run_on_dask_publishes_the_local_screen(
    runtime, database_url, cluster, tmp_path
):
    with database.connection_context():
        expected = screening.compute_screen(runtime, clock.now(), processes=1)
        before = Screen.select().count()
    database.close()
    env = {**os.environ, "DATABASE_URL": database_url, "PAIRSCREEN_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pairscreen",
            "screen",
            "run",
            "--no-sync",
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"{expected['n_survivors']} survivors" in done.stdout
    with database.connection_context():
        assert Screen.select().count() == before + 1
        published = json.loads(screening.latest_screen_json(runtime))
    for payload in (published, expected):
        payload.pop("generated_at")
    assert json.dumps(published) == json.dumps(expected)


def test_cli_dask_without_scheduler_is_a_one_line_error(database_url, tmp_path):
    env = {**os.environ, "DATABASE_URL": database_url, "PAIRSCREEN_DATA_DIR": str(tmp_path)}
    env.pop("PAIRSCREEN_DASK_SCHEDULER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pairscreen", "screen", "run", "--no-sync", "--executor", "dask"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--scheduler" in done.stderr


EXTRA_METRIC_NAME = "client_only_metric"


class ClientOnlyMetric:
    """A metric the client has and the workers do not: the screen must refuse, not differ."""

    name = EXTRA_METRIC_NAME
    fields = (MetricField("client_only_value"),)

    def compute(self, panel):  # type: ignore[no-untyped-def]
        return {"client_only_value": np.zeros(panel.n_pairs)}


class ClientOnlyPlugin:
    @hookimpl
    def pairscreen_register_metrics(self):  # type: ignore[no-untyped-def]
        return [ClientOnlyMetric()]


def test_workers_with_other_plugins_refuse_the_screen(runtime, cluster):
    from pairscreen.bootstrap import build_runtime
    from pairscreen.engine.dask_executor import PluginMismatch

    client_rt = build_runtime(runtime.settings, migrate=False, extra_plugins=(ClientOnlyPlugin(),))
    with database.connection_context(), pytest.raises(PluginMismatch, match="client_only_value"):
        screening.compute_screen(
            client_rt, clock.now(), executor="dask", scheduler=cluster.scheduler_address
        )


def test_unknown_executor_is_refused(runtime):
    with database.connection_context(), pytest.raises(ValueError, match="executor"):
        screening.compute_screen(runtime, clock.now(), executor="spark")


def scaled(plugins, factor: int, task: int) -> int:  # type: ignore[no-untyped-def]
    """A work function for the cluster: module level, so that the workers import it."""
    return factor * task


def test_tasks_are_read_lazily_a_bounded_number_in_flight(runtime, cluster):
    """The client never holds more than ``in_flight`` chunks: a universe of any size streams."""
    from pairscreen.engine.dask_executor import stream_dask

    pulled = 0

    def tasks() -> Iterator[int]:
        nonlocal pulled
        for task in range(40):
            pulled += 1
            yield task

    results = stream_dask(
        scaled, 3, tasks(), cluster.scheduler_address, plugins=runtime.plugins, in_flight=4
    )
    first = next(results)
    assert pulled <= 5
    assert sorted([first, *results]) == [3 * task for task in range(40)]
    assert pulled == 40
