"""The screen's rules on real hourly closes (docs/methodology.md, "The rules on hourly bars").

Give it a folder of hourly ``TICKER.csv`` or ``TICKER.csv.gz`` files (``timestamp,close``,
the UTC time each bar closed, one row per hour). It builds an hourly ``csv`` universe of the
crypto files it finds in a temporary folder (``[market] bar = "1h"``, one sector, every pair,
the default rules with spans for hourly bars: ``window_days``, ``backtest_days`` and
``min_history_days`` below), syncs it into a fresh SQLite database with the clock pinned
after the last bar (not timed; the real moves the sync holds as implausible, such as the
day XRP and XLM jumped 60-70 % in July 2023, are accepted as the sync's message names them
and listed), then times one ``pairscreen evaluate --json`` through the
CLI and prints, per horizon, the screen's rows (survivors and rest n, difference with its
95 % interval, p, adjusted p, reading, ``min_detectable``, independent periods), the
warnings, the wall time and the machine line.

    .venv/bin/python benchmarks/hourly_evaluation_study.py --data DIR [--every 6h]
        [--horizon 24h,72h,7d] [--from TIME] [--to TIME] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _harness import machine_line

ROOT = Path(__file__).resolve().parents[1]
CRYPTO = [
    "BTC", "ETH", "BNB", "XRP", "ADA", "DOGE", "LTC", "LINK", "BCH", "ETC",
    "ATOM", "DOT", "FIL", "AVAX", "NEAR", "AAVE", "SOL", "TRX", "XLM", "UNI",
]  # fmt: skip
# Spans for hourly bars: a 30-day band window (720 bars), backtests of 7, 14 and 30 days (the
# screen's own is 30), and 60 days of history (the window and the backtest) before a pair is
# screened; every threshold of the filter is the default's.
SCREEN = "[screen]\nwindow_days = 30\nbacktest_days = [7, 14, 30]\nmin_history_days = 60\n"


def read_rows(source: Path) -> str:
    if source.suffix == ".gz":
        with gzip.open(source, "rt", encoding="utf-8") as handle:
            return handle.read()
    return source.read_text(encoding="utf-8")


def build_universe(data: Path, folder: Path) -> tuple[Path, str]:
    """The hourly csv universe of the crypto files found in ``data``; its newest close."""
    prices = folder / "prices"
    prices.mkdir()
    lines = [
        'label = "real hourly closes (Binance spot, 2021-01 to 2023-12)"',
        "",
        '[market]\nbar = "1h"\n',
        '[components]\nmarket_source = "csv"\n',
        '[plugins.csv_source]\npath = "prices"\n',
        SCREEN,
    ]
    newest = ""
    for ticker in CRYPTO:
        found = [data / f"{ticker}.csv", data / f"{ticker}.csv.gz"]
        source = next((f for f in found if f.exists()), None)
        if source is None:
            continue
        text = read_rows(source)
        (prices / f"{ticker}.csv").write_text(text, encoding="utf-8")
        newest = max(newest, text.rstrip().rsplit("\n", 1)[-1].split(",", 1)[0])
        lines += ["[[asset]]", f'ticker = "{ticker}"', 'sector = "crypto"', ""]
    if not newest:
        sys.exit(f"no hourly TICKER.csv(.gz) of {', '.join(CRYPTO)} in {data}")
    universe = folder / "universe.toml"
    universe.write_text("\n".join(lines), encoding="utf-8")
    return universe, newest


def pinned_env(newest: str) -> dict[str, str]:
    """The environment with the clock an hour after the newest close (nothing is stale)."""
    from pairscreen import clock

    last = datetime.fromisoformat(newest.replace("Z", "+00:00")).astimezone(UTC)
    moment = datetime.fromtimestamp(last.timestamp() + 3600, UTC)
    return dict(
        os.environ, PAIRSCREEN_LOAD_PLUGINS="", **{clock.SHIFT_VARIABLE: clock.shift_to(moment)}
    )


def run(
    folder: Path, universe: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    command = [
        str(ROOT / ".venv/bin/pairscreen"),
        "--data-dir", str(folder), "--universe", str(universe),
        "--database-url", f"sqlite:///{folder / 'study.sqlite3'}", "--quiet", *args,
    ]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def pairscreen(folder: Path, universe: Path, env: dict[str, str], *args: str) -> str:
    done = run(folder, universe, env, *args)
    if done.returncode != 0:
        sys.exit(f"pairscreen {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def sync(folder: Path, universe: Path, env: dict[str, str]) -> list[str]:
    """``data sync``, then again accepting every move it held; the moves accepted."""
    done = run(folder, universe, env, "data", "sync")
    if done.returncode == 0:
        return []
    held = re.findall(r"data sync --accept (\S+)'", done.stderr)
    if not held:
        sys.exit(f"pairscreen data sync failed: {done.stderr.strip()}")
    accepted = [item for items in held for item in items.split(",")]
    pairscreen(folder, universe, env, "data", "sync", "--accept", ",".join(accepted))
    return accepted


def pp(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.2f}"


def table(body: dict) -> str:  # type: ignore[type-arg]
    """The screen's rows as Markdown."""
    lines = [
        f"as-of closes {body['from_close']} → {body['to_close']} every {body['every_hours']:g} h "
        f"({len(body['rule_sets'][0]['per_date'])} closes), {body['pairs_screened']} pairs, "
        f"data through {body['data_through_close']}",
        "",
        "| h | survivors n (pairs) | rest n | difference, pp [95 %] | p | p adjusted | reading "
        "| min_detectable, pp | independent periods (block, as-of closes) |",
        "|---:|---|---:|---|---:|---:|---|---:|---|",
    ]
    for h in body["rule_sets"][0]["horizons"]:
        rev = h["reversion"]
        s, r, d = rev["survivors"], rev["rest"], rev["difference"]
        ci = d["ci95"] or [None, None]
        p = "-" if d["p_value"] is None else f"{d['p_value']:.3f}"
        holm = "-" if d["p_holm"] is None else f"{d['p_holm']:.3f}"
        lines.append(
            f"| {h['horizon_hours']:g} h | {s['n']} ({s['distinct_pairs']}) | {r['n']} "
            f"| {pp(d['estimate'])} [{pp(ci[0])}, {pp(ci[1])}] | {p} | {holm} "
            f"| {d['reading'].replace('_', ' ')} | {pp(d['min_detectable'])} "
            f"| {s['independent_days']} ({d['block_days']}) |"
        )
    return "\n".join(lines)


def _children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes and their workers."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of hourly files")
    parser.add_argument("--every", default="6h")
    parser.add_argument("--horizon", default="24h,72h,7d")
    parser.add_argument("--from", dest="start")
    parser.add_argument("--to", dest="end")
    parser.add_argument("--out", type=Path, help="write the evaluation's JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pairscreen-hourly-study-") as tmp:
        folder = Path(tmp)
        universe, newest = build_universe(args.data.resolve(), folder)
        env = pinned_env(newest)
        pairscreen(folder, universe, env, "db", "upgrade")
        accepted = sync(folder, universe, env)
        if accepted:
            print(f"accepted {len(accepted)} held moves: {', '.join(accepted)}")
        span = [*(["--from", args.start] if args.start else [])]
        span += ["--to", args.end] if args.end else []
        command = ["evaluate", "--every", args.every, "--horizon", args.horizon, *span, "--json"]
        print(machine_line(), flush=True)
        started, used = time.perf_counter(), _children_cpu()
        body = json.loads(pairscreen(folder, universe, env, *command))
        wall, cpu = time.perf_counter() - started, _children_cpu() - used
    if args.out:
        args.out.write_text(json.dumps(body, indent=1), encoding="utf-8")
    print(f"pairscreen {' '.join(command)}: {wall:.0f} s wall, {cpu:.0f} s CPU")
    print()
    print(table(body))
    print()
    for warning in body["warnings"]:
        print(f"- {warning}")


if __name__ == "__main__":
    main()
