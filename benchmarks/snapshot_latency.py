"""Live snapshot latency: ``/pair/{a}/{b}`` in-process and end-to-end against a live server.

    .venv/bin/python benchmarks/snapshot_latency.py [--requests 200] [--no-live] [--check]

What it does:

1. prepares a fresh demo database in a temporary folder (synthetic demo market, accounts,
   the first screen), as ``pairscreen demo`` does, and picks pairs: ETH/BTC and the top
   survivors of the screen;
2. in-process: the median engine time of one snapshot (the pair's panel, every metric, the
   filter, both backtest legs: engine time, target <= 5 ms) and of the
   whole ``compute_snapshot`` (pair resolution from the in-memory candles and peg status
   included);
3. unless ``--no-live``: starts ``pairscreen serve`` (one uvicorn worker, the Pro daily and
   in-flight limits raised so the run measures the service and not its 429s and 409s) on
   that database and times ``GET /pair/{a}/{b}`` over HTTP with 1 client (requests one
   after another) and with 8 concurrent clients; prints median, p90 and throughput.
   Target (docs/performance.md): median <= 25 ms end to end.

``--check`` exits 1 when the 1-client median is above 25 ms, the engine median above 5 ms,
or any request did not answer 200. Timings depend on the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial
from pathlib import Path

from _harness import Timings, demo_database, hammer, live_server, sequential, summary

ENGINE_TARGET_MS = 5.0
END_TO_END_TARGET_MS = 25.0
BT_DAYS = 360


def engine_once(rt, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    """The engine part of a snapshot: panel, metrics, filter, both legs (no I/O)."""
    from pairscreen.screening.snapshot import aligned_pair, evaluate_pair

    pair = aligned_pair(rt, *rt.universe.pair(a, b))
    evaluate_pair(rt, pair, depegged=(), bt=BT_DAYS)


def in_process(url: str, folder: Path, pairs: list[tuple[str, str]], repeat: int) -> float:
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database
    from pairscreen.screening.snapshot import compute_snapshot

    rt = build_runtime(load_settings(data_dir=folder, database_url=url), migrate=False)
    names = ", ".join(f"{a}/{b}" for a, b in pairs)
    print(f"in-process (one thread), {len(pairs)} pairs ({names}), bt={BT_DAYS}:")
    each = repeat // len(pairs) + 1
    with database.connection_context():
        engine, whole = Timings(), Timings()
        for a, b in pairs:
            engine.run(partial(engine_once, rt, a, b), each)
            whole.run(partial(compute_snapshot, rt, *rt.universe.pair(a, b), BT_DAYS), each)
    database.close()
    print(f"  engine: panel, metrics, filter, legs   {engine}")
    print(f"  compute_snapshot (peg status incl.)    {whole}")
    return statistics.median(engine.wall)


def end_to_end(
    base: str, pid: int, key: str, pairs: list[tuple[str, str]], repeat: int
) -> tuple[float, int]:
    import httpx

    headers = {"Authorization": f"Bearer {key}"}
    paths = [f"{base}/pair/{a}/{b}?bt={BT_DAYS}" for a, b in pairs]
    print(f"end-to-end, pairscreen serve (1 worker) at {base}:")
    with httpx.Client(headers=headers, timeout=60) as client:
        ms, cpu, failures = sequential(client, pid, paths, repeat, "application/json")
    print(f"  1 client   {summary(ms)}   server CPU {cpu:5.1f} ms/request")
    latencies, failed, wall = hammer(paths, headers, clients=8, each=max(2, repeat // 8))
    failures += failed
    print(f"  8 clients  {summary(latencies)}   {len(latencies) / wall:6.1f} snapshots/s")
    return statistics.median(ms), failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="timed requests per run")
    parser.add_argument("--no-live", action="store_true", help="in-process timings only")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    with demo_database("snapshot") as (folder, url, key, pairs):
        engine_ms = in_process(url, folder, pairs, args.requests)
        e2e_ms, failures = None, 0
        if not args.no_live:
            with live_server(url) as (base, pid):
                e2e_ms, failures = end_to_end(base, pid, key, pairs, args.requests)
    verdicts = [
        f"engine median {engine_ms:.2f} ms (target <= {ENGINE_TARGET_MS:.0f}): "
        + ("meets" if engine_ms <= ENGINE_TARGET_MS else "MISSES")
    ]
    if e2e_ms is not None:
        verdicts.append(
            f"end-to-end median {e2e_ms:.1f} ms, 1 client (target <= {END_TO_END_TARGET_MS:.0f}): "
            + ("meets" if e2e_ms <= END_TO_END_TARGET_MS else "MISSES")
        )
    print("targets: " + "; ".join(verdicts))
    if failures:
        print(f"{failures} requests did not answer 200 application/json")
    missed = engine_ms > ENGINE_TARGET_MS or (e2e_ms or 0) > END_TO_END_TARGET_MS
    return 1 if args.check and (missed or failures) else 0


if __name__ == "__main__":
    raise SystemExit(main())
