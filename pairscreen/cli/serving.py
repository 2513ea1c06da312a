"""``serve`` and ``demo``."""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import signal
import socket
import subprocess
import sys

from pairscreen.bootstrap import build_runtime, check_setup
from pairscreen.cli.common import add_setting_options, require_database, settings_of
from pairscreen.cli.demo_lock import describe_holder, hold_demo_lock
from pairscreen.cli.hints import command_line
from pairscreen.cli.listening import bind_port, run_server
from pairscreen.cli.progress import ProgressDisplay
from pairscreen.config import Settings, default_database_url, export_settings, load_settings
from pairscreen.contracts.bars import DAILY
from pairscreen.market.sync import freshness_line
from pairscreen.universe import Universe
from pairscreen.wording import plural


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="serve the API under uvicorn")
    add_setting_options(serve, "host", "port", "workers", "metrics")
    serve.set_defaults(handler=_serve)

    demo = commands.add_parser(
        "demo", help="fresh embedded setup on the synthetic demo market, then serve it"
    )
    add_setting_options(demo, "host", "port")
    demo.add_argument(
        "--no-serve", action="store_true", help="prepare only, do not serve (default: serve)"
    )
    demo.set_defaults(handler=_demo)


def _serve(args: argparse.Namespace) -> None:
    settings = settings_of(args)
    require_database(settings)
    # The port before anything else: a taken one stops the command here.
    listener = bind_port(settings.host, settings.port)
    export_settings(settings)  # the uvicorn workers read them back from the environment
    rt = build_runtime(settings)  # migrates and fails fast on a bad universe or database
    print(banner(settings, listener), flush=True)
    print(f"prices: {prices_line(rt.universe)}", flush=True)
    run_server(listener, settings.workers, log_format=settings.log_format, settings=settings)


def prices_line(universe: Universe) -> str:
    """How fresh the stored prices are; for an intraday universe, its bar and which parts
    serve it so far (docs/bar_sizes.md)."""
    if universe.bar == DAILY.name:
        return freshness_line(universe)
    return (
        f"{universe.market_source}: {universe.bar} bars; the screen, /pair, its chart and "
        "series run on them, the other endpoints still read daily candles (docs/bar_sizes.md)"
    )


def banner(settings: Settings, listener: socket.socket, key: str = "rr_…") -> str:
    """Where the website and the API are (first), what data it serves, how to try it and how
    to stop it."""
    from pairscreen.universe import load_universe

    host, port = listener.getsockname()[:2]
    base = f"http://{host}:{port}/api/v1"
    lines = [
        f"pairscreen website http://{host}:{port}/  (sign in with an API key)",
        f"pairscreen serving {base}  (UI: {base}/ui, contract: {base}/openapi.json)",
        "press Ctrl-C to stop",
        *_data_lines(settings, load_universe(settings)),
        f"try:  curl -H 'Authorization: Bearer {key}' {base}/pairs",
    ]
    return "\n".join(lines)


def _data_lines(settings: Settings, universe: Universe) -> list[str]:
    label = universe.label or f"market source {universe.market_source}"
    synthetic = "synthetic" in label.lower()
    return [
        f"data: {label}" + ("  *** SYNTHETIC DATA, NOT REAL PRICES ***" if synthetic else ""),
        f"database: {settings.database_url}",
    ]


def _demo(args: argparse.Namespace) -> None:
    from pairscreen.demo import PERSONAL_EMAIL, PRO_EMAIL, prepare_demo

    given = settings_of(args)
    # The lock and the port first: a second demo must not replace the running one's data.
    lock = hold_demo_lock(given.data_dir)
    listener = None if args.no_serve else bind_port(given.host, given.port)
    folder = given.data_dir / "demo"
    # The demo's own folder and universe; a database or a universe file (the demo market
    # with another filter, say) only when given on the command line.
    universe = given.universe_path if getattr(args, "universe_path", None) else None
    settings = dataclasses.replace(
        given,
        data_dir=folder,
        universe_path=universe.resolve() if universe is not None else None,
        database_url=args.database_url or default_database_url(folder),
    )
    check_setup(settings)  # a broken plugin stops the demo before its old data is removed
    if folder.exists():
        shutil.rmtree(folder)
    rt = build_runtime(settings)
    with ProgressDisplay(quiet=args.quiet) as display:
        setup = prepare_demo(rt, display.step)
    accounts = [
        f"demo accounts (data dir {folder}):",
        f"  personal  {PERSONAL_EMAIL}  key {setup.personal_key}",
        f"  pro       {PRO_EMAIL}  key {setup.pro_key}",
        f"first screen: {plural(setup.screen.n_pairs_screened, 'pair')} screened, "
        f"{plural(setup.screen.n_survivors, 'survivor')}",
        f"prices: {freshness_line(rt.universe)}",
        "",
        f"CLI on this setup:  {command_line(settings, 'users', 'list')}",
    ]
    if listener is None:
        serve = ["serve"]
        if settings.port != load_settings().port:
            serve += ["--port", str(settings.port)]
        print(
            "\n".join(
                [
                    "pairscreen demo prepared, not started (--no-serve):",
                    *_data_lines(settings, rt.universe),
                    *accounts,
                    f"serve it with:  {command_line(settings, *serve)}",
                ]
            ),
            flush=True,
        )
        return
    host, port = listener.getsockname()[:2]
    describe_holder(lock, f"serving http://{host}:{port}/api/v1")
    print(banner(settings, listener, setup.pro_key), flush=True)
    print(
        "\n".join(
            [
                *accounts,
                f"try as personal:  curl -H 'Authorization: Bearer {setup.personal_key}' "
                f"http://{host}:{port}/api/v1/pair/ETH/BTC",
            ]
        ),
        flush=True,
    )
    # For the schedule's worker process; only now, as the hints are written for the
    # environment the command was started in.
    export_settings(settings)
    worker = start_worker()  # the schedule (screen, pegs, notifications) beside the API
    # uvicorn re-raises the SIGTERM it handled once it has stopped: turn it into SystemExit
    # so the worker is stopped too instead of being orphaned.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        run_server(listener, log_format=settings.log_format, settings=settings)
    finally:
        stop_worker(worker)


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def start_worker() -> subprocess.Popen[bytes]:
    """``pairscreen worker`` in a child process with this process's settings (environment)."""
    proc = subprocess.Popen([sys.executable, "-m", "pairscreen", "worker"])
    print(
        f"worker started (pid {proc.pid}): screen after each bar closes, peg sampling hourly, "
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
