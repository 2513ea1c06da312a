"""What the benchmarks share: a demo database, a live ``pairscreen serve``, timers, and a
runtime over a generated universe with a timed ``evaluate`` (the evaluation benchmarks).

Imported by the scripts beside it (run them from the checkout: ``.venv/bin/python
benchmarks/<script>.py``; Python puts this folder on ``sys.path``).
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def prepare(folder: Path) -> tuple[str, str, list[tuple[str, str]]]:
    """A demo database; returns its URL, a Pro key and the pairs to chart."""
    import json

    os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database
    from pairscreen.demo import prepare_demo
    from pairscreen.screening.screen import latest_screen_json

    url = f"sqlite:///{folder / 'pairscreen.sqlite3'}"
    rt = build_runtime(load_settings(data_dir=folder, database_url=url))
    with database.connection_context():
        setup = prepare_demo(rt)
        survivors = json.loads(latest_screen_json(rt))["survivors"]
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    pairs = [("ETH", "BTC")] + [tuple(s["pair"]) for s in survivors[:3]]
    return url, setup.pro_key, pairs  # type: ignore[return-value]


@contextmanager
def demo_database(name: str) -> Iterator[tuple[Path, str, str, list[tuple[str, str]]]]:
    """A demo database in a temporary folder for the benchmark ``name``; yields (folder, URL,
    a Pro key, the pairs to time) and says how busy the machine is."""
    with tempfile.TemporaryDirectory(prefix=f"pairscreen-{name}-bench-") as tmp:
        folder = Path(tmp)
        print("preparing a demo database ...", flush=True)
        url, key, pairs = prepare(folder)
        print(machine_line())
        yield folder, url, key, pairs


def machine_line() -> str:
    """One line naming the machine a figure comes from: cores, CPU model, load, and the time
    of a fixed numpy workload (sorting 10^6 doubles, median of 9), so figures from machines
    of different speeds can be compared."""
    import platform

    import numpy as np

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                model,
            )
    except OSError:
        pass
    values = np.random.default_rng(0).standard_normal(1_000_000)
    times = []
    for _ in range(9):
        start = time.perf_counter()
        np.sort(values)
        times.append((time.perf_counter() - start) * 1000)
    return (
        f"machine: {os.cpu_count()} cores, {model}, load average {os.getloadavg()[0]:.2f}, "
        f"numpy sort of 1e6 doubles {statistics.median(times):.1f} ms"
    )


@contextmanager
def generated_runtime(name: str, write: Callable[[Path], Path]) -> Iterator[object]:
    """A runtime over the universe file ``write(folder)`` writes into a temporary folder, its
    candles synced into a fresh SQLite database there; yields it inside a connection."""
    os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database
    from pairscreen.market.sync import sync_candles

    with tempfile.TemporaryDirectory(prefix=f"pairscreen-{name}-bench-") as tmp:
        folder = Path(tmp)
        universe = write(folder)
        url = f"sqlite:///{folder / 'bench.sqlite3'}"
        rt = build_runtime(load_settings(data_dir=folder, database_url=url, universe=universe))
        sync_candles(rt.universe, rt.plugins)
        with database.connection_context():
            yield rt


def timed_evaluate(rt, sets, dates, horizons, every, **options):  # type: ignore[no-untyped-def]
    """``evaluate`` of the rule ``sets`` as the CLI runs it on ``rt`` (its Market built first,
    with the scorer when a portfolio is asked for, inside the time); returns (seconds, the
    Evaluation). ``options`` go to ``evaluate`` (outcome, portfolio, processes)."""
    from pairscreen.evaluation.run import evaluate
    from pairscreen.evaluation.verdicts import Market
    from pairscreen.pegs.status import active_depegs

    settings = rt.settings
    strategy = rt.plugins.strategies.get(settings.strategy)
    started = time.perf_counter()
    market = Market.of(
        rt.universe,
        rt.candles.get(),
        window_days=settings.window_days,
        min_history_days=settings.min_history_days,
        scorer=settings.scorer if options.get("portfolio") is not None else None,
    )
    result = evaluate(
        rt.plugins,
        market,
        sets,
        dates,
        horizons,
        every_days=every,
        fee=float(getattr(strategy, "fee", 0.0)),
        depegs_at=active_depegs,
        persistence_screens=settings.persistence_screens,
        costs=rt.universe.costs,
        strategy=strategy,
        **options,
    )
    return time.perf_counter() - started, result


class Timings:
    """Wall-clock and process-CPU milliseconds of repeated calls."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def run(self, call: Callable[[], object], repeat: int) -> None:
        call()  # warm-up
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            call()
            self.cpu.append((time.process_time() - cpu) * 1000)
            self.wall.append((time.perf_counter() - wall) * 1000)

    def __str__(self) -> str:
        return f"{summary(self.wall)}   CPU median {statistics.median(self.cpu):6.1f} ms"


def summary(ms: list[float]) -> str:
    ordered = sorted(ms)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):7.1f} ms   p90 {p90:7.1f} ms   (n={len(ordered)})"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_ms(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far, in milliseconds (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


@contextmanager
def server_process(
    cmd: list[str], env: dict[str, str], probe: str, headers: dict[str, str] | None = None
) -> Iterator[int]:
    """Start a server, wait until ``probe`` answers, yield its pid; stop it afterwards.

    Its output goes to a file, not a pipe: nobody reads it while the server runs, and a full
    pipe would block the server the moment it logs.
    """
    import httpx

    with tempfile.TemporaryFile("a+") as output:
        proc = subprocess.Popen(
            cmd, env={**os.environ, **env}, stdout=output, stderr=subprocess.STDOUT, text=True
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    output.seek(0)
                    raise RuntimeError(f"server exited early:\n{output.read()}")
                try:
                    httpx.get(probe, headers=headers or {}, timeout=2)
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            yield proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def live_server(url: str) -> Iterator[tuple[str, int]]:
    """``pairscreen serve`` (one uvicorn worker) on ``url``, limits raised so a benchmark
    measures the service and not its 429s and 409s; yields (API base URL, pid)."""
    port = free_port()
    env = {
        "DATABASE_URL": url,
        "PAIRSCREEN_LOAD_PLUGINS": "",
        "PAIRSCREEN_DAILY_LIMIT_PRO": "1000000",
        "PAIRSCREEN_IN_FLIGHT_PRO": "64",
    }
    cmd = [sys.executable, "-m", "pairscreen", "serve", "--port", str(port), "--workers", "1"]
    base = f"http://127.0.0.1:{port}/api/v1"
    with server_process(cmd, env, f"{base}/openapi.json") as pid:
        yield base, pid


def sequential(
    client, pid: int, paths: list[str], repeat: int, media_type: str
) -> tuple[list[float], float, int]:  # type: ignore[no-untyped-def]
    """One client, requests one after another: latencies, server CPU per request, failures."""
    for path in paths:  # warm-up: candle cache, fonts, code paths
        client.get(path)
    ms: list[float] = []
    failures = 0
    cpu_before = cpu_ms(pid)
    for i in range(repeat):
        start = time.perf_counter()
        r = client.get(paths[i % len(paths)])
        ms.append((time.perf_counter() - start) * 1000)
        if r.status_code != 200 or r.headers.get("content-type") != media_type:
            failures += 1
    return ms, (cpu_ms(pid) - cpu_before) / repeat, failures


def hammer(
    paths: list[str], headers: dict[str, str], *, clients: int, each: int
) -> tuple[list[float], int, float]:
    """``clients`` threads GET ``each`` paths one after another; latencies, failures, wall."""
    import httpx

    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()

    def worker(offset: int) -> None:
        nonlocal failures
        with httpx.Client(headers=headers, timeout=60) as client:
            for i in range(each):
                start = time.perf_counter()
                r = client.get(paths[(i + offset) % len(paths)])
                elapsed = (time.perf_counter() - start) * 1000
                with lock:
                    latencies.append(elapsed)
                    failures += r.status_code != 200

    began = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, failures, time.perf_counter() - began
