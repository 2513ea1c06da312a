"""Serving a big screen: `/pairs?limit=100`, the compressed `/screen/latest`, 304s, memory.

Prepares a demo database, then publishes a screen of ``--survivors`` survivors (100,000 by
default: the demo screen's survivors repeated under numbered tickers, so every survivor has
the full structure), starts ``pairscreen serve`` (one worker) and prints, side by side from
the same server: the median and p90 latency of ``/pairs?limit=100``, of a filtered page, of
``/screen/latest?limit=100``, of the full ``/pairs`` and ``/screen/latest`` with gzip (and
their sizes compressed and not), of a ``304`` answer to ``If-None-Match``, the first
``/pair`` after start-up, and the server's memory (PSS) after the run.

    .venv/bin/python benchmarks/serve_scale.py [--survivors 100000] [--repeat 100]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil
from _harness import demo_database, live_server, summary


def publish_big_screen(url: str, folder: Path, survivors: int) -> int:
    """Publish a screen of ``survivors`` survivors built from the demo screen's; its size."""
    from pairscreen import clock
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database, write_transaction
    from pairscreen.db.models import Screen
    from pairscreen.screening.screen import latest_screen_json

    rt = build_runtime(load_settings(data_dir=folder, database_url=url))
    with database.connection_context():
        screen = json.loads(latest_screen_json(rt))
        models = screen["survivors"]
        grown = []
        for k in range(survivors):
            s = dict(models[k % len(models)])
            copy = k // len(models)
            s["pair"] = [f"{s['pair'][0]}{copy}", f"{s['pair'][1]}{copy}"]
            s["score"] = s["score"] - copy * 1e-6
            grown.append(s)
        grown.sort(key=lambda s: (-s["score"], s["pair"]))
        screen.update(survivors=grown, n_survivors=survivors)
        payload = json.dumps(screen, allow_nan=False, separators=(",", ":"))
        with write_transaction():
            Screen.create(
                generated_at=clock.now(),
                n_pairs_screened=screen["n_pairs_screened"],
                n_survivors=survivors,
                data_source=screen["data_source"],
                payload=payload,
            )
    database.close()
    return len(payload)


def timed(call: Callable[[], httpx.Response], repeat: int, status: int = 200) -> list[float]:
    """The milliseconds of ``repeat`` calls, each checked for ``status``; the caller has made
    the first call (the one that prepares the screen's view) and timed it on its own."""
    ms = []
    for _ in range(repeat):
        started = time.perf_counter()
        r = call()
        ms.append((time.perf_counter() - started) * 1000)
        if r.status_code != status:
            raise SystemExit(f"{r.request.url} answered {r.status_code}: {r.text[:200]}")
    return ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--survivors", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args()
    with demo_database("serve-scale") as (folder, url, key, _):
        size = publish_big_screen(url, folder, args.survivors)
        print(f"published a screen of {args.survivors:,} survivors ({size / 1e6:.1f} MB of JSON)")
        with live_server(url) as (base, pid):
            auth = {"Authorization": f"Bearer {key}"}
            with httpx.Client(headers=auth, timeout=120) as client:
                started = time.perf_counter()
                first = client.get(f"{base}/pair/ETH/BTC")
                first_ms = (time.perf_counter() - started) * 1000
                print(
                    f"  first /pair/ETH/BTC after start-up: {first.status_code} "
                    f"in {first_ms:.1f} ms"
                )
                server = psutil.Process(pid)
                print(f"  server memory after start-up: {pss_mb(server):.0f} MB")
                gzip_only = {"Accept-Encoding": "gzip"}
                plain = {"Accept-Encoding": "identity"}
                few = max(3, args.repeat // 10)
                tag = ""

                def full_gzip() -> httpx.Response:
                    nonlocal tag
                    response = client.get(f"{base}/screen/latest", headers=gzip_only)
                    tag = response.headers["etag"]
                    return response

                rows: list[tuple[str, Callable[[], httpx.Response], int, int]] = [
                    (
                        "/pairs?limit=100",
                        lambda: client.get(f"{base}/pairs?limit=100"),
                        args.repeat,
                        200,
                    ),
                    (
                        "/pairs?zone=bottom&min_score=0&limit=100",
                        lambda: client.get(f"{base}/pairs?zone=bottom&min_score=0&limit=100"),
                        args.repeat,
                        200,
                    ),
                    (
                        "/pairs gzip",
                        lambda: client.get(f"{base}/pairs", headers=gzip_only),
                        few,
                        200,
                    ),
                    ("/screen/latest gzip", full_gzip, few, 200),
                    (
                        "/screen/latest?limit=100",
                        lambda: client.get(f"{base}/screen/latest?limit=100"),
                        args.repeat,
                        200,
                    ),
                    (
                        "/screen/latest identity",
                        lambda: client.get(f"{base}/screen/latest", headers=plain),
                        few,
                        200,
                    ),
                    (
                        "/screen/latest If-None-Match -> 304",
                        lambda: client.get(f"{base}/screen/latest", headers={"If-None-Match": tag}),
                        args.repeat,
                        304,
                    ),
                ]
                print(f"  {'request':<48} {'first':>9}  {'then':<44} server MB after")
                for label, call, repeat, status in rows:
                    started = time.perf_counter()
                    last = call()  # the first builds what the screen's view needs, once
                    first_ms = (time.perf_counter() - started) * 1000
                    sent = (
                        f" ({last.num_bytes_downloaded / 1e6:.2f} MB sent)" if repeat == few else ""
                    )
                    ms = timed(call, repeat, status)
                    print(
                        f"  {label + sent:<48} {first_ms:>6.0f} ms  {summary(ms):<44} "
                        f"{pss_mb(server):.0f}"
                    )
            print(f"server memory after the run (PSS, all its processes): {pss_mb(server):.0f} MB")


def pss_mb(server: psutil.Process) -> float:
    """The server's memory: the proportional set sizes of it and its children, summed."""
    members = [server, *server.children(recursive=True)]
    return sum(m.memory_full_info().pss for m in members) / 1e6


if __name__ == "__main__":
    main()
