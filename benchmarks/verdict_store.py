"""Stored verdicts of a 2,000-asset universe: bytes per screen and one pair's lookup time.

    .venv/bin/python benchmarks/verdict_store.py [--assets 2000] [--lookups 2000]

A real screen of 1,999,000 pairs takes hours on a small machine, so the verdicts are
synthesised with the shape a real screen gives them (the demo screen's mix of reasons, a
5 % survivor rate, 2 % stale pairs, some reasons kept as text) and float64 values drawn at
random (random mantissas: the worst case for compression, a real screen's values are no
more compressible). They go through the same code a published screen's do
(:func:`~pairscreen.screen_store.verdicts.finish`,
:func:`~pairscreen.screen_store.verdict_store.encode` and ``store``) into a fresh SQLite
database, then random pairs are looked up as ``/screen/latest/pairs/{a}/{b}`` does
(one block read and decoded, the reason said again by the filter's rule).
Prints the bytes stored, the bytes the screen holds for them while it runs, the encode and
store times, and the lookup median and p90.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _harness import machine_line

# The demo screen's mix of reasons (pairs per kind, out of 1.0), by kind name.
MIX = {
    "hurst": 0.45,
    "adf": 0.18,
    "touches": 0.17,
    "range_width": 0.03,
    "survivor": 0.05,
    "short": 0.05,
    "stale": 0.02,
    "no_candles": 0.01,
    "text": 0.01,
    "coint_q": 0.03,
}


def synthetic_log(n_assets: int, table, rng):  # type: ignore[no-untyped-def]
    """A VerdictLog of every pair of ``n_assets`` in universe order, kinds drawn from MIX."""
    from pairscreen.screen_store.verdicts import Part, VerdictLog, arities

    ia, ib = np.triu_indices(n_assets, 1)
    n = ia.size
    names = {k.code if k.how in ("rule", "wide") else k.how: i for i, k in enumerate(table)}
    names.pop("none", None)
    labels = list(MIX)
    picked = rng.choice(len(labels), size=n, p=np.array(list(MIX.values())))
    kind = np.array([names[label] for label in labels], dtype=np.uint8)[picked]
    arity = arities(table)[kind]
    values = rng.normal(0.5, 0.15, int(arity.sum()))
    starts = np.concatenate([[0], np.cumsum(arity)[:-1]])
    for label in ("touches",):
        rows = starts[kind == names[label]]
        values[rows] = rng.integers(0, 5, rows.size)
        values[rows + 1] = rng.integers(0, 5, rows.size)
    survivors = np.flatnonzero(kind == names["survivor"])
    values[starts[survivors] + 2] = rng.integers(0, 3, survivors.size)  # the zone
    wide = np.flatnonzero(kind == names["coint_q"])
    values[starts[wide] + 2] = rng.integers(0, 3, wide.size)
    history = rng.choice([1200, 900, 540, 150], size=n, p=[0.7, 0.15, 0.1, 0.05])
    texts = {
        int(p): f"depeg: T{p % 50} is in an active depeg event since 2026-11-20T14:00:00+00:00"
        for p in np.flatnonzero(kind == names["text"])
    }
    legs = ia.astype(np.int32), ib.astype(np.int32)  # as a chunk records them
    part = Part(False, *legs, kind, history.astype(np.uint16), values, texts)
    log = VerdictLog([part])
    log.stale = {f"T{k}": ("2026-11-01", 25, 3) for k in range(0, n_assets, 40)}
    log.no_candles = [f"T{k}" for k in range(5, n_assets, 200)]
    return log, survivors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--assets", type=int, default=2000)
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()
    os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings
    from pairscreen.contracts import Asset
    from pairscreen.db.connection import database
    from pairscreen.screen_store.verdict_store import encode, load_head, store, verdict
    from pairscreen.screen_store.verdicts import finish, kinds

    print(machine_line())
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="pairscreen-verdicts-bench-") as tmp:
        folder = Path(tmp)
        url = f"sqlite:///{folder / 'pairscreen.sqlite3'}"
        rt = build_runtime(load_settings(data_dir=folder, database_url=url))
        choice = rt.screen_filter
        table = kinds(rt.plugins.filters.get(choice.name), choice.thresholds)
        n = args.assets
        tickers = [f"T{k}" for k in range(n)]
        log, survivors = synthetic_log(n, table, rng)
        pairs = n * (n - 1) // 2
        held = sum(
            p.a.nbytes + p.b.nbytes + p.kind.nbytes + p.history.nbytes + p.values.nbytes
            for p in log.parts
        )
        started = time.perf_counter()
        done = finish(log, table, np.arange(n), [], [], {t: k for k, t in enumerate(tickers)})
        for rank, p in enumerate(survivors, start=1):
            done.values[done.start[p] + 3] = rank
        facts = {
            "generated_at": "2026-11-26T18:00:00+00:00",
            "n_survivors": int(survivors.size),
            "filter": choice.name,
            "thresholds": dict(choice.thresholds),
            "screen_rules": {**choice.screen_wide, "coint_q_below": 0.05},
            "min_history_days": rt.settings.min_history_days,
        }
        encoded = encode(done, log, table, tickers, facts)
        encode_s = time.perf_counter() - started
        with database.connection_context():
            from pairscreen.db.models import Screen

            screen = Screen.create(
                generated_at=datetime(2026, 11, 26, 18, tzinfo=UTC),
                n_pairs_screened=pairs,
                n_survivors=0,
            )
            started = time.perf_counter()
            with database.atomic():
                store(screen.id, encoded)
            store_s = time.perf_counter() - started
            started = time.perf_counter()
            head = load_head(screen.id)
            head_ms = (time.perf_counter() - started) * 1000
            times = []
            codes: dict[str, int] = {}
            for _ in range(args.lookups):
                i, j = rng.choice(n, 2, replace=False)
                a, b = Asset(tickers[i], "s"), Asset(tickers[j], "s")
                started = time.perf_counter()
                body = verdict(rt.plugins, head, a, b)
                times.append((time.perf_counter() - started) * 1000)
                codes[body["reason_code"]] = codes.get(body["reason_code"], 0) + 1
        database.close()
    stored = encoded.stored_bytes
    print(f"{n:,} assets, {pairs:,} pairs, {survivors.size:,} survivors")
    print(
        f"stored: {stored / 1e6:.2f} MB ({stored / pairs:.2f} bytes a pair; head "
        f"{len(encoded.head) / 1e3:.1f} kB, {len(encoded.blocks)} blocks)"
    )
    print(f"held while the screen runs: {held / 1e6:.1f} MB ({held / pairs:.1f} bytes a pair)")
    print(f"encode {encode_s:.2f} s, store {store_s:.2f} s, first head read {head_ms:.1f} ms")
    times.sort()
    print(
        f"lookup of one pair ({args.lookups} random pairs, one block read and decoded, the "
        f"reason said again): median {statistics.median(times):.2f} ms, "
        f"p90 {times[int(0.9 * len(times))]:.2f} ms"
    )
    print(
        "reasons looked up:", ", ".join(f"{k or 'survivor'} {v}" for k, v in sorted(codes.items()))
    )


if __name__ == "__main__":
    main()
