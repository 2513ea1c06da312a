"""Load run on loopback: pairscreen versus a bare connexion app, side by side in one run.

    .venv/bin/python benchmarks/load.py [--duration 5] [--rounds 3] [--connections 32]
                                        [--tool auto|wrk|python] [--only /pairs,...] [--check]

What it does:

1. prepares a fresh demo database in a temporary folder (synthetic demo market, one Pro
   account, the first screen), exactly as ``pairscreen demo`` does;
2. starts ``pairscreen serve`` on it (one uvicorn worker, the daily and in-flight limits raised
   through ``PAIRSCREEN_DAILY_LIMIT_PRO`` / ``PAIRSCREEN_IN_FLIGHT_PRO`` so that the load measures
   the service, not its 429s and 409s), and records the bodies of ``/screen/latest``,
   ``/pairs`` and ``/pair/{a}/{b}``;
3. starts a *bare* connexion ``AsyncApp`` on the same ``openapi.yaml`` (same validation,
   same security scheme) whose handlers return those recorded bodies and whose bearer
   function accepts any key: the ceiling a connexion service can reach on this machine;
4. loads each endpoint of both servers with the same generator (``wrk`` when installed,
   else an asyncio + httpx generator), same connections and duration, alternating the two
   servers for a few rounds (medians, so a busy machine hurts both alike), and prints
   throughput, p50 / p99 latency and the server's CPU time per request side by side, with
   pairscreen's share of the bare app's throughput. Target: >= 80 % on the cached endpoints
   (``/pairs``, ``/screen/latest``).

The Python generator is slower than either server on two cores (it measures itself more
than them): install Debian's ``wrk`` for real figures.

Any non-200 answer during a run is counted and reported; ``--check`` exits 1 when a
cached endpoint is below target or a run saw non-200 answers.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _harness import free_port, prepare, server_process

REPO = Path(__file__).resolve().parents[1]
PAYLOADS_ENV = "PAIRSCREEN_BENCH_PAYLOADS"
CACHED = ("/pairs", "/screen/latest")
TARGET = 0.80


# --------------------------------------------------------------------------- the bare app


def _bare_bearer(token: str) -> dict:
    """Accepts any bearer token: the bare app measures connexion, not key lookups."""
    return {"sub": "bench"}


def bare_app():  # type: ignore[no-untyped-def]
    """A minimal connexion AsyncApp on pairscreen's spec, answering with recorded bodies.

    Factory for uvicorn (``--factory load:bare_app``); the bodies come from the JSON file
    named by ``PAIRSCREEN_BENCH_PAYLOADS`` (operationId -> body text).
    """
    import connexion
    import yaml
    from connexion.resolver import Resolver
    from starlette.responses import Response

    payloads: dict[str, str] = json.loads(Path(os.environ[PAYLOADS_ENV]).read_text())
    spec = yaml.safe_load((REPO / "openapi.yaml").read_text())
    for scheme in spec["components"]["securitySchemes"].values():
        if "x-bearerInfoFunc" in scheme:
            scheme["x-bearerInfoFunc"] = f"{__name__}._bare_bearer"

    def handler_for(operation_id: str):  # type: ignore[no-untyped-def]
        body = payloads.get(operation_id)

        async def handler(*args, **kwargs) -> Response:  # type: ignore[no-untyped-def]
            if body is None:
                return Response(
                    "not recorded\n", status_code=404, media_type="text/plain; charset=utf-8"
                )
            return Response(body, media_type="application/json")

        return handler

    app = connexion.AsyncApp(__name__)
    app.add_api(spec, strict_validation=True, resolver=Resolver(function_resolver=handler_for))
    return app


# --------------------------------------------------------------------------- servers


# --------------------------------------------------------------------------- load generators


@dataclass(frozen=True)
class Result:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_200: int
    cpu_us: float = 0.0  # server CPU time (user + system, all threads) per request


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not match:
        raise ValueError(f"cannot read wrk latency {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_wrk(output: str) -> Result:
    """Throughput, p50, p99 and non-2xx count from ``wrk --latency`` output."""

    def find(pattern: str) -> str:
        match = re.search(pattern, output, re.MULTILINE)
        if not match:
            raise ValueError(f"wrk output lacks {pattern!r}:\n{output}")
        return match.group(1)

    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    failed = int(errors.group(1)) if errors else 0
    if socket_errors:
        failed += sum(int(g) for g in socket_errors.groups())
    return Result(
        rps=float(find(r"^Requests/sec:\s+([\d.]+)")),
        p50_ms=_ms(find(r"^\s+50%\s+(\S+)")),
        p99_ms=_ms(find(r"^\s+99%\s+(\S+)")),
        requests=int(find(r"^\s+(\d+) requests in")),
        non_200=failed,
    )


def run_wrk(url: str, key: str, connections: int, duration: float) -> Result:
    cmd = [
        "wrk", "-t1", f"-c{connections}", f"-d{max(1, round(duration))}s",
        "--latency", "--timeout", "30s",
        "-H", f"Authorization: Bearer {key}", url,
    ]  # fmt: skip
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return parse_wrk(out)


def run_python(url: str, key: str, connections: int, duration: float) -> Result:
    """A closed-loop asyncio + httpx generator: ``connections`` clients, back to back."""
    import httpx

    async def main() -> Result:
        latencies: list[float] = []
        non_200 = 0
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        async with httpx.AsyncClient(
            limits=limits, headers={"Authorization": f"Bearer {key}"}
        ) as client:
            stop = time.perf_counter() + duration

            async def worker() -> None:
                nonlocal non_200
                while time.perf_counter() < stop:
                    t0 = time.perf_counter()
                    try:
                        response = await client.get(url, timeout=30)
                        ok = response.status_code == 200
                    except httpx.HTTPError:
                        ok = False
                    latencies.append((time.perf_counter() - t0) * 1000)
                    non_200 += not ok

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(connections)))
            elapsed = time.perf_counter() - started
        cuts = statistics.quantiles(latencies, n=100, method="inclusive")
        return Result(len(latencies) / elapsed, cuts[49], cuts[98], len(latencies), non_200)

    return asyncio.run(main())


# --------------------------------------------------------------------------- the run


def pick_pair(base: str, headers: dict[str, str]) -> tuple[str, str]:
    import httpx

    pairs = httpx.get(f"{base}/pairs", headers=headers, timeout=30).json()["pairs"]
    if pairs:
        return pairs[0]["a"], pairs[0]["b"]
    return "ETH", "BTC"


def record_payloads(base: str, headers: dict[str, str], paths: dict[str, str]) -> dict[str, str]:
    """operationId -> body, read from pairscreen itself so both servers send the same bytes."""
    import httpx

    out = {}
    for operation_id, path in paths.items():
        response = httpx.get(f"{base}{path}", headers=headers, timeout=60)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path} -> {response.status_code}: {response.text}")
        out[operation_id] = response.text
    return out


def operation_ids() -> dict[str, str]:
    """Spec path -> operationId for the GET operations of ``openapi.yaml``."""
    import yaml

    spec = yaml.safe_load((REPO / "openapi.yaml").read_text())
    return {path: ops["get"]["operationId"] for path, ops in spec["paths"].items() if "get" in ops}


def measure(load, url: str, key: str, connections: int, duration: float, pid: int) -> Result:  # type: ignore[no-untyped-def]
    """One load run, with the server's CPU time per request."""
    before = cpu_seconds(pid)
    result = load(url, key, connections, duration)
    spent = cpu_seconds(pid) - before
    return dataclasses.replace(result, cpu_us=1e6 * spent / max(1, result.requests))


def median_result(results: list[Result]) -> Result:
    """The median of each figure over the rounds (non-200s are summed)."""
    med = statistics.median
    return Result(
        rps=med(r.rps for r in results),
        p50_ms=med(r.p50_ms for r in results),
        p99_ms=med(r.p99_ms for r in results),
        requests=sum(r.requests for r in results),
        non_200=sum(r.non_200 for r in results),
        cpu_us=med(r.cpu_us for r in results),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run (default 5)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating runs per server and endpoint (default 3)"
    )
    parser.add_argument(
        "--connections", type=int, default=32, help="concurrent connections (default 32)"
    )
    parser.add_argument("--tool", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--only", default="", help="comma-separated endpoints to run, e.g. /pairs")
    parser.add_argument("--check", action="store_true", help="exit 1 below target or on non-200s")
    args = parser.parse_args(argv)
    tool = args.tool
    if tool == "auto":
        tool = "wrk" if shutil.which("wrk") else "python"
    load = run_wrk if tool == "wrk" else run_python

    folder = Path(tempfile.mkdtemp(prefix="pairscreen-load-"))
    try:
        print(f"preparing the demo database in {folder} ...", flush=True)
        url, key, _ = prepare(folder)
        headers = {"Authorization": f"Bearer {key}"}
        ids = operation_ids()
        py = sys.executable
        pairscreen_port, bare_port = free_port(), free_port()
        pairscreen_base = f"http://127.0.0.1:{pairscreen_port}/api/v1"
        bare_base = f"http://127.0.0.1:{bare_port}/api/v1"
        pairscreen_env = {
            "DATABASE_URL": url,
            "PAIRSCREEN_LOAD_PLUGINS": "",
            "PAIRSCREEN_DAILY_LIMIT_PRO": str(10**9),
            "PAIRSCREEN_IN_FLIGHT_PRO": str(max(64, 2 * args.connections)),
        }
        pairscreen_cmd = [
            py,
            "-m",
            "pairscreen",
            "serve",
            "--port",
            str(pairscreen_port),
            "--workers",
            "1",
        ]
        with server_process(
            pairscreen_cmd, pairscreen_env, f"{pairscreen_base}/me", headers
        ) as pairscreen_pid:
            a, b = pick_pair(pairscreen_base, headers)
            paths = {
                "/pairs": "/pairs",
                "/screen/latest": "/screen/latest",
                "/pair/{a}/{b}": f"/pair/{a}/{b}",
            }
            if args.only:
                paths = {t: c for t, c in paths.items() if t in args.only.split(",")}
            recorded = record_payloads(
                pairscreen_base, headers, {ids[p]: c for p, c in paths.items()}
            )
            payload_file = folder / "payloads.json"
            payload_file.write_text(json.dumps(recorded))
            bare_cmd = [
                py, "-m", "uvicorn", "load:bare_app", "--factory",
                "--app-dir", str(REPO / "benchmarks"),
                "--host", "127.0.0.1", "--port", str(bare_port),
                "--log-level", "warning", "--no-access-log",
            ]  # fmt: skip
            bare_env = {PAYLOADS_ENV: str(payload_file), "PYTHONPATH": str(REPO)}
            with server_process(bare_cmd, bare_env, f"{bare_base}/pairs", headers) as bare_pid:
                servers = (
                    ("pairscreen", pairscreen_base, pairscreen_pid),
                    ("bare", bare_base, bare_pid),
                )
                print(
                    f"load: {tool}, {args.connections} connections, {args.rounds} alternating "
                    f"rounds of {args.duration:g} s per server and endpoint (medians), "
                    "one uvicorn worker each, "
                    f"loopback; pair {a}/{b}; {os.cpu_count()} CPUs, load average "
                    f"{os.getloadavg()[0]:.1f} at start",
                    flush=True,
                )
                rows = []
                for template, concrete in paths.items():
                    runs: dict[str, list[Result]] = {name: [] for name, _, _ in servers}
                    for _, base, _ in servers:  # warm-up
                        load(f"{base}{concrete}", key, args.connections, min(2.0, args.duration))
                    for _ in range(args.rounds):
                        for name, base, pid in servers:
                            runs[name].append(
                                measure(
                                    load,
                                    f"{base}{concrete}",
                                    key,
                                    args.connections,
                                    args.duration,
                                    pid,
                                )
                            )
                    rows.append(
                        (template, median_result(runs["pairscreen"]), median_result(runs["bare"]))
                    )
        return report(rows, args.check)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def report(rows: list[tuple[str, Result, Result]], check: bool) -> int:
    head = (
        f"{'endpoint':<16} | {'pairscreen req/s':>14} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'CPU us/req':>10} | "
        f"{'bare req/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'CPU us/req':>10} | {'share':>6}  verdict"
    )
    print(head)
    print("-" * len(head))
    failed = False
    for template, ours, bare in rows:
        share = ours.rps / bare.rps if bare.rps else 0.0
        if template in CACHED:
            verdict = "ok" if share >= TARGET else f"BELOW TARGET ({TARGET:.0%})"
            failed |= share < TARGET
        else:
            verdict = "compute (no target)"
        if ours.non_200 or bare.non_200:
            verdict += f"  non-200: pairscreen {ours.non_200}, bare {bare.non_200}"
            failed = True
        print(
            f"{template:<16} | {ours.rps:>14.0f} {ours.p50_ms:>7.2f} {ours.p99_ms:>7.2f} "
            f"{ours.cpu_us:>10.0f} | "
            f"{bare.rps:>10.0f} {bare.p50_ms:>7.2f} {bare.p99_ms:>7.2f} {bare.cpu_us:>10.0f} | "
            f"{share:>6.0%}  {verdict}"
        )
    print(
        "share: pairscreen's throughput / the bare app's (target >= 80 % on the cached endpoints); "
        "CPU us/req: server CPU time per request, steadier than req/s on a busy machine"
    )
    return 1 if (check and failed) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
