"""Every plugin example of ``docs/plugins.md`` runs and does what the page says.

A runnable example is a fenced ``python`` block whose first line is ``# plugin: <file>.py``.
Each one is written to its own ``PAIRSCREEN_PLUGINS_DIR``, the service is built with it (as
any process of a deployment would load it), and a check of its own below verifies its effect.
A new runnable example without a check, or a check whose example is gone, fails the suite.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import struct
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database, write_transaction
from pairscreen.runtime import Runtime
from tests.conftest import make_client

ROOT = Path(__file__).resolve().parents[1]
PLUGINS_DOC = ROOT / "docs" / "plugins.md"
BLOCK = re.compile(r"```python\n(# plugin: ([\w-]+\.py)\n.*?)```", re.S)


def examples() -> dict[str, str]:
    """The runnable examples of docs/plugins.md by file name."""
    found = {name: source for source, name in BLOCK.findall(PLUGINS_DOC.read_text())}
    assert found, "docs/plugins.md has no runnable example"
    return found


@pytest.fixture()
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """Write one example into a fresh plugins folder and point PAIRSCREEN_PLUGINS_DIR at it."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.setenv("PAIRSCREEN_PLUGINS_DIR", str(folder))

    def install(name: str) -> Path:
        (folder / name).write_text(examples()[name])
        return folder

    yield install
    for module in [m for m in sys.modules if m.startswith("pairscreen_local_plugin_")]:
        del sys.modules[module]


def with_settings(rt: Runtime, **changes: object) -> Runtime:
    """A runtime on the same database with the plugins folder loaded and ``changes`` applied."""
    return build_runtime(dataclasses.replace(rt.settings, **changes))


def write_universe(folder: Path, text: str) -> Path:
    path = folder / "universe.toml"
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------
# One check per example
# ---------------------------------------------------------------------------


def check_sine_market(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.market.sync import sync_candles
    from pairscreen.screening.screen import run_screen

    universe = write_universe(
        tmp_path,
        'label = "made-up sine market"\n\n[components]\nmarket_source = "sine"\n\n'
        "[market]\ndays = 400\n"
        'period_days = 60\n\n[[asset]]\nticker = "UP"\nsector = "waves"\n\n'
        '[[asset]]\nticker = "DOWN"\nsector = "waves"\n',
    )
    url = request.getfixturevalue("empty_database_url")
    rt = build_runtime(load_settings(data_dir=tmp_path, database_url=url, universe=universe))
    assert "sine" in rt.plugins.market_sources
    report = sync_candles(rt.universe, rt.plugins)
    assert report.total == 800
    assert sync_candles(rt.universe, rt.plugins).total == 0  # incremental: nothing new today
    candles = rt.candles.get()
    assert len(candles["UP"].dates) == len(candles["DOWN"].dates) == 400
    last_closed = clock.today() - timedelta(days=1)  # today's candle is still forming
    assert candles["UP"].dates[-1] == np.datetime64(last_closed, "D")
    assert run_screen(rt, processes=1).n_pairs_screened == 1
    database.close()


def check_momentum_plugin(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.engine.panels import align

    runtime: Runtime = request.getfixturevalue("runtime")
    keys = request.getfixturevalue("keys")
    rt = with_settings(runtime)
    assert rt.plugins.metrics.owner("momentum") == "local:momentum_plugin.py"
    c = make_client(rt)
    with c.client:
        body = c.get("/api/v1/pair/ETH/BTC", keys.personal).json()
    candles = rt.candles.get()
    pair = align(candles["ETH"], candles["BTC"])
    r = np.log(pair.close_a / pair.close_b)
    assert body["metrics"]["momentum_30d"] == pytest.approx(r[-1] - r[-31], abs=1e-12)


def check_wide_range_filter(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.screening.screen import compute_screen

    runtime: Runtime = request.getfixturevalue("runtime")
    demo_universe = Path(clock.__file__).resolve().parent / "demo_universe.toml"
    # The universe file's choice and [screen] table exactly as docs/plugins.md shows them.
    shown = re.search(
        r"```toml\n\[components\]\n(filter = .*?\n)\n(\[screen\]\n.*?)```",
        PLUGINS_DOC.read_text(),
        re.S,
    )
    assert shown, "docs/plugins.md shows the [components] and [screen] tables of the example"
    demo = demo_universe.read_text().replace("[components]\n", "[components]\n" + shown[1], 1)
    universe = write_universe(tmp_path, demo + "\n" + shown[2])
    rt = with_settings(runtime, universe_path=universe)
    assert rt.plugins.filters.owner("wide_range") == "local:wide_range_filter.py"
    screen = compute_screen(rt, clock.now(), processes=1)
    default = compute_screen(runtime, clock.now(), processes=1)
    assert screen["filter"] == {"name": "wide_range", "thresholds": {"min_width": 0.5}}
    assert list(screen["rejected"]) == [
        "stale",
        "insufficient_history",
        "depeg",
        "narrow",
        "coint_q",
        "adf_q",
        "persistence",
    ]
    assert screen["rejected"]["narrow"] > 0
    assert sum(screen["rejected"].values()) + screen["n_survivors"] == screen["n_pairs_screened"]
    assert screen["survivors"], "the demo market has wide pairs"
    assert all(s["metrics"]["range_width"] >= 0.5 for s in screen["survivors"])
    # Pairs the default filter rejects (hurst, adf, touches) survive this one.
    assert screen["n_survivors"] > default["n_survivors"]


def check_hold_strategy(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.screening.snapshot import compute_snapshot

    rt = with_settings(request.getfixturevalue("runtime"), strategy="hold")
    snapshot = compute_snapshot(rt, *rt.universe.pair("ETH", "BTC"), 90)
    assert snapshot["backtest"]["history_days"] == 90
    for leg in ("A", "B"):
        assert snapshot["backtest"][leg]["growth_pct"] == 0.0
        assert snapshot["backtest"][leg]["n_trades"] == 0
        assert snapshot["backtest"][leg]["buy_hold"] is None


def check_edge_score(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.screening.screen import compute_screen

    rt = with_settings(request.getfixturevalue("runtime"), scorer="edge")
    screen = compute_screen(rt, clock.now(), processes=1)
    assert screen["survivors"], "the demo market has survivors"
    for survivor in screen["survivors"]:
        edge = min(1.0, abs(survivor["metrics"]["position"] - 0.5) / 0.5)
        assert survivor["score"] == pytest.approx(100.0 * edge)
    scores = [s["score"] for s in screen["survivors"]]
    assert scores == sorted(scores, reverse=True)


def check_line_chart(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.screening.chart import chart_png

    runtime: Runtime = request.getfixturevalue("runtime")
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setenv("PAIRSCREEN_CHART_RENDERER", "line")
    settings = load_settings(
        data_dir=runtime.settings.data_dir, database_url=runtime.settings.database_url
    )
    rt = build_runtime(settings)
    assert rt.settings.chart_renderer == "line"
    for size, expected in (("desktop", (1280, 720)), ("phone", (720, 480))):
        png = chart_png(rt, *rt.universe.pair("ETH", "BTC"), 90, size=size)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", png[16:24]) == expected


PEG_UNIVERSE = """\
label = "peg test market"

[components]
market_source = "csv"

[market]
path = "prices"
volume_unit = "quote"

[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "PAXG"
sector = "gold"
asset_class = "tokenized_metal"
peg = { reference = "XAU", sources = ["fixed"], units_per_token = 1.0, threshold_pct = 1.0 }

[peg_sources.fixed]
prices = { XAU = 1950.0 }
"""


def check_fixed_reference(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.market.sync import sync_candles
    from pairscreen.pegs.sampling import sample_pegs

    prices = tmp_path / "prices"
    prices.mkdir()
    days = [clock.today() - timedelta(days=d) for d in range(30, 0, -1)]  # up to yesterday
    for ticker, close in (("BTC", 60000.0), ("PAXG", 2000.0)):
        rows = "".join(f"{day.isoformat()},{close},1000000\n" for day in days)
        (prices / f"{ticker}.csv").write_text("date,close,volume\n" + rows)
    universe = write_universe(tmp_path, PEG_UNIVERSE)
    url = request.getfixturevalue("empty_database_url")
    rt = build_runtime(load_settings(data_dir=tmp_path, database_url=url, universe=universe))
    sync_candles(rt.universe, rt.plugins)
    (reading,) = sample_pegs(rt).readings
    assert reading.ticker == "PAXG"
    assert reading.reference_source == "fixed"
    assert reading.reference_price == pytest.approx(1950.0)
    assert reading.market_price == pytest.approx(2000.0)
    assert reading.drift_pct == pytest.approx(100.0 * (2000.0 / 1950.0 - 1.0))
    assert reading.status == "unhealthy"  # 2.56 % above XAU, threshold 1 %
    database.close()


def check_depeg_log(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.pegs.sampling import backfill_pegs

    caplog: pytest.LogCaptureFixture = request.getfixturevalue("caplog")
    rt = with_settings(request.getfixturevalue("runtime"))
    with caplog.at_level(logging.WARNING, logger="depeg_log"):
        # The demo market's scripted gold-token depeg opens an event within these hours, on
        # any weekday (72 hours span a weekend of stale gold quotes, as in `pairscreen demo`).
        backfill_pegs(rt, 72)
    opened = [r.getMessage() for r in caplog.records if r.name == "depeg_log"]
    assert any(m.startswith("depeg event opened: PAXG (tokenized_metal)") for m in opened), opened


def check_file_notifier(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.notify.outbox import OutboxMessage, deliver_pending, enqueue

    runtime: Runtime = request.getfixturevalue("runtime")
    demo_universe = (Path(clock.__file__).resolve().parent / "demo_universe.toml").read_text()
    table = re.search(
        r"```toml\n(\[plugins\.\"local:file_notifier\.py\"\]\n.*?)```",
        PLUGINS_DOC.read_text(),
        re.S,
    )
    assert table, "docs/plugins.md shows the notifier's [plugins] table"
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    shown = table[1].replace("/var/lib/pairscreen/inbox", str(inbox))
    rt = with_settings(runtime, universe_path=write_universe(tmp_path, demo_universe + shown))
    assert rt.plugins.options["local:file_notifier.py"] == {"folder": str(inbox)}
    message = OutboxMessage("docs.example.1", None, "file", "ops", "Hello", "From the outbox.")
    with write_transaction():
        assert enqueue([message]) == 1
    report = deliver_pending(rt, worker_id="docs-example")
    assert report.sent == 1
    written = (inbox / "docs.example.1.txt").read_text()
    assert written == "To: ops\nSubject: Hello\n\nFrom the outbox.\n"

    unset = with_settings(runtime)  # no [plugins] table: the folder is "", a permanent failure
    with write_transaction():
        enqueue([dataclasses.replace(message, idempotency_key="docs.example.2")])
    assert deliver_pending(unset, worker_id="docs-example").failed == 1


def check_ntfy_channel(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.db.models import Channel
    from pairscreen.notify.outbox import OutboxMessage, deliver_pending, enqueue
    from tests.support.receivers import HttpReceiver

    rt = with_settings(request.getfixturevalue("runtime"))
    keys = request.getfixturevalue("keys")
    assert rt.plugins.channel_kinds.owners["ntfy"] == "local:ntfy_channel.py"
    text = " ".join(PLUGINS_DOC.read_text().split())

    def said_in_the_doc(body: object) -> bool:
        return " ".join(json.dumps(body, ensure_ascii=False).split()) in text

    receiver = HttpReceiver().start()
    try:
        c = make_client(rt)
        with c.client:
            (listed,) = [
                k
                for k in c.get("/api/v1/me/channels/kinds", keys.personal).json()["kinds"]
                if k["name"] == "ntfy"
            ]
            assert said_in_the_doc(listed)
            auth = {"Authorization": f"Bearer {keys.personal}"}
            said = c.request(
                "PUT",
                "/api/v1/me/channels/ntfy",
                headers=auth,
                json={"address": "https://ntfy.sh/desk-alerts"},
            ).json()
            assert said_in_the_doc(said)
            r = c.request(
                "PUT",
                "/api/v1/me/channels/ntfy",
                headers=auth,
                json={"address": receiver.url + "/desk-alerts"},
            )
            assert r.status_code == 200, r.text
            refused = c.request(
                "PUT",
                "/api/v1/me/channels/ntfy",
                headers=auth,
                json={"address": "https://ntfy.sh/a/secret"},
            )
            assert refused.status_code == 400 and "secret" not in refused.text
        with write_transaction():
            address = Channel.get(Channel.kind == "ntfy").address
            enqueue(
                [OutboxMessage("docs.ntfy.1", None, "ntfy", address, "Hello", "From the outbox.")]
            )
        assert deliver_pending(rt, worker_id="docs-example").sent == 1
    finally:
        receiver.stop()
    (posted,) = receiver.requests
    assert (posted.path, posted.headers["Title"], posted.body) == (
        "/desk-alerts",
        "Hello",
        b"From the outbox.",
    )


def check_hello_command(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pairscreen.cli import main

    capsys: pytest.CaptureFixture[str] = request.getfixturevalue("capsys")
    text = PLUGINS_DOC.read_text()
    assert main(["--help"]) == 0
    assert "commands of the plugin local:hello_command.py" in capsys.readouterr().out
    assert main(["hello", "greet", "Ann"]) == 0
    out = capsys.readouterr().out
    assert out == "hello, Ann: the universe is the demo\n"
    assert f"`pairscreen hello greet Ann` prints `{out.strip()}`" in text
    assert main(["hello", "greet", "Ann", "--shout"]) == 0
    assert capsys.readouterr().out == "HELLO, ANN: THE UNIVERSE IS THE DEMO\n"
    assert main(["hello", "greet", " "]) == 6
    err = capsys.readouterr().err
    assert err == (
        "pairscreen: error: plugin 'local:hello_command.py' failed: command 'hello greet' "
        "raised ValueError: a name is needed (run again with --verbose for the traceback)\n"
    )


CHECKS: dict[str, Callable[[pytest.FixtureRequest, Path], None]] = {
    "sine_market.py": check_sine_market,
    "momentum_plugin.py": check_momentum_plugin,
    "wide_range_filter.py": check_wide_range_filter,
    "hold_strategy.py": check_hold_strategy,
    "edge_score.py": check_edge_score,
    "line_chart.py": check_line_chart,
    "fixed_reference.py": check_fixed_reference,
    "depeg_log.py": check_depeg_log,
    "file_notifier.py": check_file_notifier,
    "ntfy_channel.py": check_ntfy_channel,
    "hello_command.py": check_hello_command,
}


def test_every_example_has_a_check():
    assert set(examples()) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_plugin_example(name: str, plugin_dir, request: pytest.FixtureRequest, tmp_path: Path):
    plugin_dir(name)
    CHECKS[name](request, tmp_path)


def test_every_hook_has_an_example_or_a_section():
    """Each hook of hookspecs.py is named in docs/plugins.md."""
    import inspect

    import pairscreen.plugin_system.hookspecs as hookspecs

    text = PLUGINS_DOC.read_text()
    for name, _ in inspect.getmembers(hookspecs, inspect.isfunction):
        if name.startswith("pairscreen_"):
            assert name in text, f"{name} is not described in docs/plugins.md"
