"""Serving a big screen: `/pairs?limit=100`, the compressed `/screen/latest`, 304s, memory.

Prepares a demo database, then publishes a screen of ``--survivors`` survivors (100,000 by
default: the demo screen's survivors repeated under numbered tickers, so every survivor has
the full structure), starts ``pairscreen serve`` (one worker) and prints, side by side from
the same server: the median and p90 latency of ``/pairs?limit=100``, of a filtered page, of
``/screen/latest?limit=100``, of the full ``/pairs`` and ``/screen/latest`` with gzip (and
their sizes compressed and not), of a ``304`` answer to ``If-None-Match``, the first
``/pair`` after start-up, and the server's memory (PSS) after the run.

First it prints what the page index and the page items stored at publish cost and save: the
time to build and store them (as ``screen run`` does in its publishing transaction; the
index alone, as built before the items were stored, timed apart), then the first filtered
page and the first ``?limit=100`` page of ``/pairs`` and of ``/screen/latest``, each from a
fresh server process: with the stored index and items (read from their blocks), with the
index but no items (a screen published before they were stored: cut from the payload), and
with neither (published before the index: the view is parsed).

    .venv/bin/python benchmarks/serve_scale.py [--survivors 100000] [--repeat 100]
    .venv/bin/python benchmarks/serve_scale.py --first-only   # the first pages, no table
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
from _harness import demo_database, live_server, summary

FILTERED = "zone=bottom&min_score=0&limit=100"  # the first filtered page asked of each view
FIRST_PAGES = (FILTERED, "limit=100")


@dataclass(frozen=True)
class Published:
    screen_id: int
    size: int  # characters of the payload
    build_seconds: float  # building its page index and items (before the transaction)
    index_seconds: float  # building the index alone, as before the items were stored
    store_seconds: float  # storing them (inside)
    index_bytes: int
    blocks_bytes: int


def publish_big_screen(url: str, folder: Path, survivors: int) -> Published:
    """Publish a screen of ``survivors`` survivors built from the demo screen's, with its page
    index stored in the same transaction, as ``screen run`` publishes one."""
    from pairscreen import clock
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.db.connection import database, write_transaction
    from pairscreen.db.models import Screen, ScreenPayload
    from pairscreen.screen_store.page_index import payload_index
    from pairscreen.screen_store.payload_parts import PayloadParts
    from pairscreen.screen_store.stored_pages import prepare_page_index
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
        started = time.perf_counter()
        payload_index(payload)
        index_seconds = time.perf_counter() - started
        started = time.perf_counter()
        page_index = prepare_page_index(PayloadParts.of(screen))
        build_seconds = time.perf_counter() - started
        with write_transaction():
            row = Screen.create(
                generated_at=clock.now(),
                n_pairs_screened=screen["n_pairs_screened"],
                n_survivors=survivors,
                data_source=screen["data_source"],
            )
            ScreenPayload.create(screen=row.id, payload=payload)
            started = time.perf_counter()
            page_index.store(row.id)
            store_seconds = time.perf_counter() - started
    database.close()
    size = len(payload)
    return Published(
        row.id,
        size,
        build_seconds,
        index_seconds,
        store_seconds,
        len(page_index.arrays),
        page_index.blocks.stored_bytes,
    )


def drop_stored(url: str, screen_id: int, index: bool) -> None:
    """Make the screen one published before screens stored their page items (and, with
    ``index``, their page index)."""
    from pairscreen.db.connection import connect, database
    from pairscreen.db.models import ScreenPageBlock, ScreenPageIndex

    connect(url)
    with database.connection_context():
        ScreenPageBlock.delete().where(ScreenPageBlock.screen == screen_id).execute()
        if index:
            ScreenPageIndex.delete().where(ScreenPageIndex.screen == screen_id).execute()
    database.close()


def first_pages(url: str, key: str) -> dict[str, tuple[float, float]]:
    """The first page of each of ``FIRST_PAGES`` of each view, each from a fresh server (the
    first request of a process: it reads the screen's index and items, or the payload, or
    parses it): milliseconds of wall time and of the server's CPU, by request."""
    out = {}
    for query in FIRST_PAGES:
        for path in ("/pairs", "/screen/latest"):
            with live_server(url) as (base, pid):
                server = psutil.Process(pid)
                cpu = server_cpu_ms(server)
                started = time.perf_counter()
                r = httpx.get(
                    f"{base}{path}?{query}",
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=120,
                )
                wall = (time.perf_counter() - started) * 1000
                out[f"{path}?{query}"] = (wall, server_cpu_ms(server) - cpu)
                if r.status_code != 200 or r.json()["count"] != 100:
                    raise SystemExit(f"{path} answered {r.status_code}: {r.text[:200]}")
    return out


def payload_read_ms(url: str, screen_id: int) -> float:
    """Milliseconds to read the screen's payload from the database, as a server does before
    any answer about a new screen (the part of a first page no index saves)."""
    from pairscreen.db.connection import connect, database
    from pairscreen.screen_store.published import stored_payload

    connect(url)
    with database.connection_context():
        started = time.perf_counter()
        stored_payload(screen_id)
        elapsed = (time.perf_counter() - started) * 1000
    database.close()
    return elapsed


def server_cpu_ms(server: psutil.Process) -> float:
    """User and system CPU time of the server and its children so far."""
    members = [server, *server.children(recursive=True)]
    return sum(sum(m.cpu_times()[:2]) for m in members) * 1000


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
    parser.add_argument(
        "--first-only", action="store_true", help="only the first filtered pages, no table"
    )
    args = parser.parse_args()
    with demo_database("serve-scale") as (folder, url, key, _):
        published = publish_big_screen(url, folder, args.survivors)
        print(
            f"published a screen of {args.survivors:,} survivors "
            f"({published.size / 1e6:.1f} MB of JSON); its page index and items: built in "
            f"{published.build_seconds:.2f} s (the index alone: "
            f"{published.index_seconds:.2f} s), stored in "
            f"{published.store_seconds * 1000:.0f} ms (index {published.index_bytes / 1e6:.2f} "
            f"MB, items {published.blocks_bytes / 1e6:.2f} MB)"
        )
        stored = first_pages(url, key)
        if not args.first_only:
            serve(url, key, args.repeat)
        drop_stored(url, published.screen_id, index=False)
        cut = first_pages(url, key)
        drop_stored(url, published.screen_id, index=True)
        parsed = first_pages(url, key)
        read = payload_read_ms(url, published.screen_id)
        print(
            "first page of a fresh server, wall ms (server CPU ms); "
            f"reading the payload alone: {read:.0f} ms"
        )
        columns = ("stored index+items", "stored index only", "parsed, neither")
        print(f"  {'request':<52}" + "".join(f"{c:>22}" for c in columns))
        for name in stored:
            cells = [f"{run[name][0]:.0f} ({run[name][1]:.0f})" for run in (stored, cut, parsed)]
            print(f"  {name:<52}" + "".join(f"{c:>22}" for c in cells))


def serve(url: str, key: str, repeat: int) -> None:
    """The table: each request's first answer and its latencies after, from one server."""
    with live_server(url) as (base, pid):
        auth = {"Authorization": f"Bearer {key}"}
        with httpx.Client(headers=auth, timeout=120) as client:
            started = time.perf_counter()
            first = client.get(f"{base}/pair/ETH/BTC")
            first_ms = (time.perf_counter() - started) * 1000
            print(f"  first /pair/ETH/BTC after start-up: {first.status_code} in {first_ms:.1f} ms")
            server = psutil.Process(pid)
            print(f"  server memory after start-up: {pss_mb(server):.0f} MB")
            gzip_only = {"Accept-Encoding": "gzip"}
            plain = {"Accept-Encoding": "identity"}
            few = max(3, repeat // 10)
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
                    repeat,
                    200,
                ),
                (
                    "/pairs?zone=bottom&min_score=0&limit=100",
                    lambda: client.get(f"{base}/pairs?zone=bottom&min_score=0&limit=100"),
                    repeat,
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
                    repeat,
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
                    repeat,
                    304,
                ),
            ]
            print(f"  {'request':<48} {'first':>9}  {'then':<44} server MB after")
            for label, call, repeat, status in rows:
                started = time.perf_counter()
                last = call()  # the first builds what the screen's view needs, once
                first_ms = (time.perf_counter() - started) * 1000
                sent = f" ({last.num_bytes_downloaded / 1e6:.2f} MB sent)" if repeat == few else ""
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
