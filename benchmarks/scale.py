"""How `screen run --no-sync` grows with the universe: time, memory, database, per size.

For each size (100, 500, 1,000 and 2,000 assets by default) it writes a synthetic ``csv``
universe (1,100 days per asset; half the assets mean-revert around a common market, half
trend), syncs it into a fresh SQLite database (not timed), then runs
``python -m pairscreen screen run --no-sync`` in a fresh process and prints, from that one
run: the pairs, the wall time of the whole process, pairs/s, the CPU time of the process and
its workers (core-seconds: the work done, which other jobs on the machine do not inflate as
they do the wall time), the peak memory of the process and all its children together (their
proportional set sizes summed, sampled every 20 ms), the survivors, the publish time, and
how much the database grew. Up to 1,000 assets every
asset is in one sector; the 2,000 asset universe has four sectors and ``[pairs] all = true``
(every pair crossed). The last lines say how the cost grows: seconds per million pairs and
peak memory, size by size.

With ``--dask-workers N`` each universe is screened a second time the same way but with
``--executor dask`` on a ``LocalCluster`` of N single-threaded worker processes started for
it, and it prints that run's wall time, the peak memory of the command and of the busiest
worker, and whether the published screen is identical to the local executor's.

    .venv/bin/python benchmarks/scale.py [--sizes 100,500] [--days 1100] [--processes 0]
                                         [--dask-workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psutil
from scipy.signal import lfilter

ROOT = Path(__file__).resolve().parents[1]
SECTORS_WHEN_CROSSED = 4
CROSSED_FROM = 2000  # universes this large have several sectors, every pair crossed
SAMPLE_SECONDS = 0.02  # how often the memory of the measured processes is read


def write_universe(folder: Path, n_assets: int, days: int, seed: int = 7) -> Path:
    """A csv universe of ``n_assets`` whose last day is yesterday (so nothing is stale)."""
    rng = np.random.default_rng(seed)
    prices = folder / "prices"
    prices.mkdir(parents=True, exist_ok=True)
    end = datetime.now(UTC).date() - timedelta(days=1)
    day_text = [(end - timedelta(days=days - 1 - i)).isoformat() for i in range(days)]
    market = np.cumsum(rng.normal(0.0003, 0.03, days))
    crossed = n_assets >= CROSSED_FROM
    lines = [
        'label = "synthetic scale universe"',
        "",
        "[components]",
        'market_source = "csv"',
        "",
        "[plugins.csv_source]",
    ]
    lines += ['path = "prices"', 'volume_unit = "quote"', ""]
    if crossed:
        lines += ["[pairs]", "all = true", ""]
    for k in range(n_assets):
        ticker = f"A{k:04d}"
        if k % 2 == 0:  # an AR(1) level: pairs of two of these mean-revert
            phi = 1 - 1 / rng.uniform(15, 60)
            own = lfilter([1.0], [1.0, -phi], rng.normal(0, 0.04, days))
        else:  # momentum: returns with a wandering drift
            drift = np.cumsum(rng.normal(0, 0.0004, days))
            own = np.cumsum(drift + rng.normal(0, 0.02, days))
        close = 10 ** rng.uniform(-1, 4) * np.exp(market + own)
        volume = close * rng.uniform(1e4, 1e6) * np.exp(rng.normal(0, 0.3, days))
        rows = "".join(
            f"{d},{c:.10g},{v:.6g}\n" for d, c, v in zip(day_text, close, volume, strict=True)
        )
        (prices / f"{ticker}.csv").write_text("date,close,volume\n" + rows)
        sector = f"s{k % SECTORS_WHEN_CROSSED}" if crossed else "bench"
        lines += ["[[asset]]", f'ticker = "{ticker}"', f'sector = "{sector}"', ""]
    path = folder / "universe.toml"
    path.write_text("\n".join(lines))
    return path


class TreeMemory:
    """The memory of ``root`` and every descendant, sampled every 20 ms on a thread until
    :meth:`stop`: the peak of their sum and each process's own peak. Memory is the
    proportional set size (PSS), so pages a forked worker shares with its parent count once,
    not once per process."""

    def __init__(self, root: psutil.Process) -> None:
        self.root = root
        self.peak_total = 0
        self.peaks: dict[int, int] = {}  # process id -> its highest PSS
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._done.is_set():
            try:
                members = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                members = []
            total = 0
            for member in members:
                try:
                    pss = member.memory_full_info().pss
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                total += pss
                self.peaks[member.pid] = max(self.peaks.get(member.pid, 0), pss)
            self.peak_total = max(self.peak_total, total)
            time.sleep(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def busiest_descendant(self) -> int:
        """The highest peak of any one process under ``root`` (a worker, not its parent)."""
        return max((v for pid, v in self.peaks.items() if pid != self.root.pid), default=0)


def _children_cpu() -> float:
    """User + system CPU seconds of every finished child process and their own children:
    the work a command did, whatever else shared the cores (its wall time is not)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Run ``cmd``; its wall seconds, the peak summed PSS of its process tree, its output."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    memory = TreeMemory(psutil.Process(proc.pid))
    output, _ = proc.communicate()
    wall = time.perf_counter() - started
    memory.stop()
    text = output.decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text}")
    return wall, memory.peak_total, text


CLUSTER = """
import sys
from dask.distributed import LocalCluster
with LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True,
                  host="127.0.0.1", dashboard_address=None) as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()  # until the benchmark closes it
"""


def screen_on_dask(base: list[str], env: dict[str, str], workers: int) -> tuple[float, int, int]:
    """``screen run --no-sync --executor dask`` on a fresh LocalCluster: the command's wall
    seconds, its peak memory and the busiest worker's peak memory."""
    cluster = subprocess.Popen(
        [sys.executable, "-c", CLUSTER, str(workers)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert cluster.stdout is not None and cluster.stdin is not None
        address = cluster.stdout.readline().strip()
        if not address:
            raise SystemExit("the LocalCluster did not start (is the dask extra installed?)")
        workers_memory = TreeMemory(psutil.Process(cluster.pid))
        cmd = [*base, "screen", "run", "--no-sync", "--executor", "dask", "--scheduler", address]
        wall, peak, _ = run_measured(cmd, env)
        workers_memory.stop()
        return wall, peak, workers_memory.busiest_descendant()
    finally:
        if cluster.stdin is not None:
            cluster.stdin.close()
        cluster.wait(timeout=60)


def latest_two_screens_agree(folder: Path) -> bool:
    """Whether the two newest published screens hold the same result (time of day aside)."""
    with sqlite3.connect(folder / "bench.sqlite3") as db:
        rows = db.execute(
            "SELECT payload FROM screen_payload ORDER BY screen_id DESC LIMIT 2"
        ).fetchall()
    first, second = (json.loads(row[0]) for row in rows)
    for screen in (first, second):
        screen.pop("generated_at")
    return bool(first == second)


def database_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("bench.sqlite3*"))


def measure(size: int, days: int, processes: int, dask_workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix=f"pairscreen-scale-{size}-") as tmp:
        folder = Path(tmp)
        universe = write_universe(folder, size, days)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")]),
            "PAIRSCREEN_UNIVERSE": str(universe),
            "PAIRSCREEN_DATA_DIR": str(folder),
            "DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
            "PAIRSCREEN_SCREEN_PROCESSES": str(processes),
        }
        base = [sys.executable, "-m", "pairscreen"]
        sync_wall, _, _ = run_measured([*base, "data", "sync"], env)
        before = database_bytes(folder)
        cpu_before = _children_cpu()
        wall, peak, text = run_measured([*base, "screen", "run", "--no-sync"], env)
        cpu = _children_cpu() - cpu_before
        grown = database_bytes(folder) - before
        found = re.search(r"(\d+) pairs, (\d+) survivors", text)
        published = re.search(r"published in ([\d.]+) s", text)
        if found is None:
            raise SystemExit(f"unexpected output of screen run:\n{text}")
        pairs, survivors = int(found.group(1)), int(found.group(2))
        row = {
            "assets": size,
            "pairs": pairs,
            "wall": wall,
            "rate": pairs / wall,
            "peak_mb": peak / 1e6,
            "survivors": survivors,
            "publish": float(published.group(1)) if published else float("nan"),
            "db_mb": grown / 1e6,
            "sync": sync_wall,
            "cpu": cpu,
        }
        print(
            f"{size:>6} {pairs:>10,} {wall:>9.2f} {pairs / wall:>9,.0f} {peak / 1e6:>9.0f} "
            f"{survivors:>10,} {row['publish']:>9.2f} {grown / 1e6:>9.1f}   "
            f"(sync {sync_wall:.1f} s; {cpu:.1f} core-s, {pairs / cpu:,.0f} pairs per core-s)",
            flush=True,
        )
        if dask_workers:
            d_wall, d_peak, worker_peak = screen_on_dask(base, env, dask_workers)
            same = latest_two_screens_agree(folder)
            print(
                f"{'':>6} {'dask':>10} {d_wall:>9.2f} {pairs / d_wall:>9,.0f} {d_peak / 1e6:>9.0f}"
                f"   LocalCluster of {dask_workers} workers: busiest worker peak "
                f"{worker_peak / 1e6:.0f} MB; identical to local: {same}",
                flush=True,
            )
            if not same:
                raise SystemExit("the dask screen differs from the local one")
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,500,1000,2000", help="assets per universe")
    parser.add_argument("--days", type=int, default=1100, help="days of candles per asset")
    parser.add_argument("--processes", type=int, default=0, help="screen processes (0: cores)")
    parser.add_argument(
        "--dask-workers", type=int, default=0, help="also screen on a LocalCluster of N workers"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _harness import machine_line

    print(machine_line())
    print(
        f"{args.days} days per asset; wall and peak RSS of `screen run --no-sync` "
        "in a fresh process (peak RSS: PSS of the process and its workers summed)"
    )
    print(
        f"{'assets':>6} {'pairs':>10} {'wall s':>9} {'pairs/s':>9} {'peak MB':>9} "
        f"{'survivors':>10} {'publish s':>9} {'db +MB':>9}"
    )
    rows = [measure(size, args.days, args.processes, args.dask_workers) for size in sizes]
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print("growth (seconds per million pairs, peak RSS):")
    for row in rows:
        print(
            f"  {row['assets']:>5} assets: {1e6 * row['wall'] / row['pairs']:7.1f} s per "
            f"million pairs ({1e6 * row['cpu'] / row['pairs']:.1f} core-s), "
            f"peak {row['peak_mb']:.0f} MB"
        )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(
            f"pairs x{last['pairs'] / first['pairs']:.0f} -> wall "
            f"x{last['wall'] / first['wall']:.1f}, "
            f"peak RSS x{last['peak_mb'] / first['peak_mb']:.2f}"
        )


if __name__ == "__main__":
    main()
