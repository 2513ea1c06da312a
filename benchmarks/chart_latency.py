"""Chart latency: ``/pair/{a}/{b}/chart.png`` in-process and end-to-end against a live server.

    .venv/bin/python benchmarks/chart_latency.py [--requests 40] [--no-live] [--check]

What it does:

1. prepares a fresh demo database in a temporary folder (synthetic demo market, accounts,
   the first screen), as ``pairscreen demo`` does, and picks pairs: ETH/BTC and the top
   survivors of the screen;
2. in-process, per size (desktop 1280x720, phone 720x480): the median time of the chart
   service's computation (resolve the pair, metrics, both legs with trades, rolling bands),
   of the renderer alone, and of the whole ``chart_png``;
3. unless ``--no-live``: starts ``pairscreen serve`` (one uvicorn worker, the Pro daily and
   in-flight limits raised so the run measures the service and not its 429s and 409s) on
   that database and times ``GET /pair/{a}/{b}/chart.png`` over HTTP from one client
   (requests one after another) and from four concurrent clients, per size; prints the
   median, p90 and throughput. Target (docs/performance.md): median <= 150 ms end to end.

``--check`` exits 1 when the single-client end-to-end median (or, with ``--no-live``, the
in-process median) is above the target, or when any request did not answer 200.
Timings depend on the machine's load: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial
from pathlib import Path

from _harness import Timings, demo_database, hammer, live_server, sequential, summary

TARGET_MS = 150.0
SIZES = ("desktop", "phone")


def in_process(
    url: str, folder: Path, pairs: list[tuple[str, str]], repeat: int
) -> dict[str, float]:
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database
    from pairscreen.screening.chart import SIZES as PIXELS
    from pairscreen.screening.chart import chart_data, chart_png

    rt = build_runtime(load_settings(data_dir=folder, database_url=url), migrate=False)
    renderer = rt.plugins.chart_renderers.get(rt.settings.chart_renderer)
    medians: dict[str, float] = {}
    names = ", ".join(f"{a}/{b}" for a, b in pairs)
    print(f"in-process (one thread), {len(pairs)} pairs ({names}), bt=360:")
    each = repeat // len(pairs) + 1
    with database.connection_context():
        data = Timings()
        for a, b in pairs:
            data.run(partial(chart_data, rt, *rt.universe.pair(a, b), 360), each)
        print(f"  chart data (metrics, both legs, bands)   {data}")
        charts = [chart_data(rt, *rt.universe.pair(a, b), 360) for a, b in pairs]
        for size in SIZES:
            width, height = PIXELS[size]
            render, total = Timings(), Timings()
            for (a, b), chart in zip(pairs, charts, strict=True):
                render.run(partial(renderer.render, chart, width_px=width, height_px=height), each)
                total.run(partial(chart_png, rt, *rt.universe.pair(a, b), 360, size=size), each)
            print(f"  render only, {size:7s}                   {render}")
            print(f"  chart_png, {size:7s}                     {total}")
            medians[size] = statistics.median(total.wall)
    database.close()
    return medians


def end_to_end(
    base: str, pid: int, key: str, pairs: list[tuple[str, str]], repeat: int
) -> tuple[dict[str, float], int]:
    import httpx

    headers = {"Authorization": f"Bearer {key}"}
    failures = 0
    medians: dict[str, float] = {}
    print(f"end-to-end, pairscreen serve (1 worker) at {base}, bt=360:")
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

    with demo_database("chart") as (folder, url, key, pairs):
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
