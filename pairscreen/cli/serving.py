"""``serve`` and ``demo``."""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import signal
import subprocess
import sys

from pairscreen.bootstrap import build_runtime
from pairscreen.cli.common import add_setting_options, settings_of
from pairscreen.config import Settings, default_database_url, export_settings
from pairscreen.market.sync import freshness_line


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="serve the API under uvicorn")
    add_setting_options(serve, "host", "port", "workers", "metrics")
    serve.set_defaults(handler=_serve)

    demo = commands.add_parser(
        "demo", help="fresh embedded setup on the synthetic demo market, then serve it"
    )
    add_setting_options(demo, "host", "port")
    demo.add_argument("--no-serve", action="store_true", help="prepare only, do not serve")
    demo.set_defaults(handler=_demo)


def _serve(args: argparse.Namespace) -> None:
    settings = settings_of(args)
    export_settings(settings)  # the uvicorn workers read them back from the environment
    rt = build_runtime(settings)  # migrates and fails fast on a bad universe or database
    print(banner(settings, settings.host, settings.port))
    print(f"prices: {freshness_line(rt.universe)}")
    run_server(settings.host, settings.port, settings.workers, log_format=settings.log_format)


def run_server(host: str, port: int, workers: int = 1, *, log_format: str = "text") -> None:
    """uvicorn on the app; in JSON its own loggers go to the root's JSON handler too."""
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    # In JSON, uvicorn installs no handlers of its own, so its lines reach the root's.
    log_config = LOGGING_CONFIG if log_format == "text" else None

    uvicorn.run(
        "pairscreen.app:asgi_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,  # the app logs each request itself (pairscreen.access)
        log_config=log_config,
    )


def banner(settings: Settings, host: str, port: int, key: str = "rr_…") -> str:
    from pairscreen.universe import load_universe

    universe = load_universe(settings)
    label = universe.label or f"market source {universe.market_source}"
    synthetic = "synthetic" in label.lower()
    base = f"http://{host}:{port}/api/v1"
    lines = [
        f"pairscreen serving {base}  (database: {settings.database_url})",
        f"data: {label}" + ("  *** SYNTHETIC DATA, NOT REAL PRICES ***" if synthetic else ""),
        f"API reference: {base}/ui  (contract: {base}/openapi.json)",
        f"try: curl -H 'Authorization: Bearer {key}' {base}/pairs",
    ]
    return "\n".join(lines)


def _demo(args: argparse.Namespace) -> None:
    from pairscreen.demo import PERSONAL_EMAIL, PRO_EMAIL, prepare_demo

    given = settings_of(args)
    folder = given.data_dir / "demo"
    if folder.exists():
        shutil.rmtree(folder)
    # The demo's own folder and universe; a database only when given on the command line.
    settings = dataclasses.replace(
        given,
        data_dir=folder,
        universe_path=None,
        database_url=args.database_url or default_database_url(folder),
    )
    export_settings(settings)  # for the API's worker processes and the schedule's worker
    rt = build_runtime(settings)
    setup = prepare_demo(rt)
    base = f"http://{settings.host}:{settings.port}/api/v1"
    print(banner(settings, settings.host, settings.port, setup.pro_key))
    print(f"prices: {freshness_line(rt.universe)}")
    print(
        "\n".join(
            [
                "",
                f"demo accounts (data dir {folder}):",
                f"  personal  {PERSONAL_EMAIL}  key {setup.personal_key}",
                f"  pro       {PRO_EMAIL}  key {setup.pro_key}",
                f"first screen: {setup.screen.n_pairs_screened} pairs screened, "
                f"{setup.screen.n_survivors} survivors",
                "",
                f"  curl -H 'Authorization: Bearer {setup.personal_key}' {base}/pair/ETH/BTC",
                f"  CLI on this setup: pairscreen --data-dir {folder} users list",
            ]
        ),
        flush=True,
    )
    if not args.no_serve:
        worker = start_worker()  # the schedule (screen, pegs, notifications) beside the API
        # uvicorn re-raises the SIGTERM it handled once it has stopped: turn it into SystemExit
        # so the worker is stopped too instead of being orphaned.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            run_server(settings.host, settings.port)
        finally:
            stop_worker(worker)


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def start_worker() -> subprocess.Popen[bytes]:
    """``pairscreen worker`` in a child process with this process's settings (environment)."""
    proc = subprocess.Popen([sys.executable, "-m", "pairscreen", "worker"])
    print(
        f"worker started (pid {proc.pid}): screen every 6 h, peg sampling hourly, "
        "notifications after each, outbox delivery every 10 s",
        flush=True,
    )
    return proc


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the worker finishes its running job and releases its lock), then wait."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
