"""Chart latency: ``/pair/{a}/{b}/chart.png`` in-process and end-to-end against a live server.

    .venv/bin/python benchmarks/chart_latency.py [--requests 40] [--no-live] [--check]

What it does:

1. prepares a fresh demo database in a temporary folder (synthetic demo market, accounts,
   the first screen), as ``pairscan demo`` does, and picks pairs: ETH/BTC and the top
   survivors of the screen;
2. in-process, per size (desktop 1280x720, phone 720x480): the median time of the chart
   service's computation (resolve the pair, metrics, both legs with trades, rolling bands),
   of the renderer alone, and of the whole ``chart_png``;
3. unless ``--no-live``: starts ``pairscan serve`` (one uvicorn worker, the Pro daily and
   in-flight limits raised so the run measures the service and not its 429s and 409s) on
   that database and times ``GET /pair/{a}/{b}/chart.png`` over HTTP from one client
   (requests one after another) and from four concurrent clients, per size; prints the
   median, p90 and throughput. Target (DESIGN §6): median <= 150 ms end to end.

``--check`` exits 1 when the single-client end-to-end median (or, with ``--no-live``, the
in-process median) is above the target, or when any request did not answer 200.
Timings depend on the machine's load: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
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
from functools import partial
from pathlib import Path

TARGET_MS = 150.0
SIZES = ("desktop", "phone")


def prepare(folder: Path) -> tuple[str, str, list[tuple[str, str]]]:
    """A demo database; returns its URL, a Pro key and the pairs to chart."""
    import json

    os.environ["PAIRSCAN_LOAD_PLUGINS"] = ""
    from pairscan.config import load_settings
    from pairscan.db.connection import database
    from pairscan.runtime import build_runtime
    from pairscan.services.demo_setup import prepare_demo
    from pairscan.services.screening import latest_screen_json

    url = f"sqlite:///{folder / 'pairscan.sqlite3'}"
    rt = build_runtime(load_settings(data_dir=folder, database_url=url))
    with database.connection_context():
        setup = prepare_demo(rt)
        survivors = json.loads(latest_screen_json())["survivors"]
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    pairs = [("ETH", "BTC")] + [tuple(s["pair"]) for s in survivors[:3]]
    return url, setup.pro_key, pairs  # type: ignore[return-value]


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


def in_process(
    url: str, folder: Path, pairs: list[tuple[str, str]], repeat: int
) -> dict[str, float]:
    from pairscan.config import load_settings
    from pairscan.db.connection import database
    from pairscan.runtime import build_runtime
    from pairscan.services.chart import SIZES as PIXELS
    from pairscan.services.chart import chart_data, chart_png

    rt = build_runtime(load_settings(data_dir=folder, database_url=url), migrate=False)
    renderer = rt.plugins.chart_renderers.get(rt.settings.chart_renderer)
    medians: dict[str, float] = {}
    names = ", ".join(f"{a}/{b}" for a, b in pairs)
    print(f"in-process (one thread), {len(pairs)} pairs ({names}), bt=360:")
    each = repeat // len(pairs) + 1
    with database.connection_context():
        data = Timings()
        for a, b in pairs:
            data.run(partial(chart_data, rt, a, b, 360), each)
        print(f"  chart data (metrics, both legs, bands)   {data}")
        charts = [chart_data(rt, a, b, 360) for a, b in pairs]
        for size in SIZES:
            width, height = PIXELS[size]
            render, total = Timings(), Timings()
            for (a, b), chart in zip(pairs, charts, strict=True):
                render.run(partial(renderer.render, chart, width_px=width, height_px=height), each)
                total.run(partial(chart_png, rt, a, b, 360, size=size), each)
            print(f"  render only, {size:7s}                   {render}")
            print(f"  chart_png, {size:7s}                     {total}")
            medians[size] = statistics.median(total.wall)
    database.close()
    return medians


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
def live_server(url: str) -> Iterator[tuple[str, int]]:
    import httpx

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PAIRSCAN_LOAD_PLUGINS": "",
        "PAIRSCAN_DAILY_LIMIT_PRO": "1000000",
        "PAIRSCAN_IN_FLIGHT_PRO": "64",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairscan", "serve", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited:\n{proc.stdout.read() if proc.stdout else ''}")
            try:
                httpx.get(f"{base}/openapi.json", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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


def end_to_end(
    base: str, pid: int, key: str, pairs: list[tuple[str, str]], repeat: int
) -> tuple[dict[str, float], int]:
    import httpx

    headers = {"Authorization": f"Bearer {key}"}
    failures = 0
    medians: dict[str, float] = {}
    print(f"end-to-end, pairscan serve (1 worker) at {base}, bt=360:")
    with httpx.Client(headers=headers, timeout=60) as client:
        # The JSON snapshot runs behind the same guard (slot, quota): the floor under a chart.
        paths = [f"{base}/pair/{a}/{b}" for a, b in pairs]
        ms, cpu, failed = sequential(client, pid, paths, repeat, "application/json")
        failures += failed
        print(f"  1 client,  /pair snapshot (JSON)       {summary(ms)}   server CPU {cpu:5.1f} ms")
    for size in SIZES:
        paths = [f"{base}/pair/{a}/{b}/chart.png?size={size}" for a, b in pairs]
        with httpx.Client(headers=headers, timeout=60) as client:
            ms, cpu, failed = sequential(client, pid, paths, repeat, "image/png")
        failures += failed
        print(
            f"  1 client,  chart {size:7s}               {summary(ms)}   server CPU {cpu:5.1f} ms"
        )
        medians[size] = statistics.median(ms)
        latencies, failed, wall = hammer(paths, headers, clients=4, each=max(2, repeat // 4))
        failures += failed
        print(
            f"  4 clients, chart {size:7s}               {summary(latencies)}   "
            f"{len(latencies) / wall:5.1f} charts/s"
        )
    return medians, failures


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--requests", type=int, default=40, help="timed requests per size (default 40)"
    )
    parser.add_argument("--no-live", action="store_true", help="in-process timings only")
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 above {TARGET_MS:.0f} ms median"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="pairscan-chart-bench-") as tmp:
        folder = Path(tmp)
        print("preparing a demo database ...", flush=True)
        url, key, pairs = prepare(folder)
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        medians = in_process(url, folder, pairs, args.requests)
        failures = 0
        if not args.no_live:
            with live_server(url) as (base, pid):
                medians, failures = end_to_end(base, pid, key, pairs, args.requests)
        worst = max(medians.values())
        where = "in-process" if args.no_live else "end-to-end, 1 client"
        verdict = "meets" if worst <= TARGET_MS else "MISSES"
        print(
            f"target: median <= {TARGET_MS:.0f} ms ({where}); worst size {worst:.1f} ms: {verdict}"
        )
        if failures:
            print(f"{failures} requests did not answer 200 image/png")
    return 1 if args.check and (worst > TARGET_MS or failures) else 0


if __name__ == "__main__":
    raise SystemExit(main())
