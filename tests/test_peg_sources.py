"""The built-in peg reference sources: ``csv`` on files, ``http_json`` against a local HTTP
server, ``demo`` on the synthetic market, each including its failures, alone and through
the sampler."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from pairscreen_plugins.pegs import csv_reference, demo_reference, http_json
from pairscreen_plugins.pegs.csv_reference import CsvPegSource
from pairscreen_plugins.pegs.demo_reference import DemoPegSource, wobble_pct
from pairscreen_plugins.pegs.http_json import HttpJsonPegSource

from pairscreen import ReferenceQuote, clock, hookimpl
from pairscreen.config import load_settings
from pairscreen.contracts import Asset, Candles, PegConfig
from pairscreen.db.connection import database, init_database
from pairscreen.db.models import PegEvent, PegSample
from pairscreen.engine.filtering import FilterChoice
from pairscreen.pegs.sampling import backfill_pegs, sample_pegs
from pairscreen.plugin_system.loader import new_plugin_manager
from pairscreen.plugin_system.registry import Plugins
from pairscreen.runtime import Runtime
from pairscreen.universe import Universe, load_demo_universe, load_universe_file

PEG_PLUGINS = (demo_reference, csv_reference, http_json)


class StaticCandles:
    """Stands in for the candle cache: fixed candles, no database."""

    def __init__(self, candles: dict[str, Candles] | None = None) -> None:
        self.candles = candles or {}

    def get(self) -> dict[str, Candles]:
        return self.candles


def peg_runtime(
    tmp_path: Path, universe: Universe, *extra: object, candles: dict[str, Candles] | None = None
) -> Runtime:
    """A runtime with a fresh database, the built-in peg sources and ``extra`` plugins."""
    url = f"sqlite:///{tmp_path / 'pegs.sqlite3'}"
    init_database(url)
    pm = new_plugin_manager()
    for module in PEG_PLUGINS:
        pm.register(module, name=module.__name__)
    for plugin in extra:
        pm.register(plugin)
    settings = load_settings(data_dir=tmp_path, database_url=url)
    plugins = Plugins(pm, settings)
    return Runtime(
        settings,
        plugins,
        universe,
        FilterChoice(universe.screen_filter, {}),  # peg sampling never screens
        StaticCandles(candles),  # type: ignore[arg-type]
    )


def daily(ticker: str, last_day: str, closes: list[float]) -> Candles:
    end = np.datetime64(last_day, "D")
    dates = end - np.arange(len(closes))[::-1]
    return Candles(ticker, dates, np.array(closes, dtype=float), np.ones(len(closes)))


@pytest.fixture(autouse=True)
def _close_database() -> Iterator[None]:
    yield
    if database.obj is not None:
        database.close()


# ---------------------------------------------------------------------------
# csv
# ---------------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_answers_the_last_row_at_or_before_the_time(tmp_path):
    write(
        tmp_path / "refs" / "XAU.csv",
        "timestamp,price\n"
        "2025-03-03T16:00:00Z,2900.5\n"
        "2025-03-03T15:00:00+00:00,2890\n"  # rows need not be sorted
        "2025-03-04 10:00,2910\n"  # no offset: UTC
        "2025-03-05,2920\n",  # a bare date: 00:00 UTC
    )
    source, options = CsvPegSource(), {"folder": str(tmp_path / "refs")}
    at = datetime(2025, 3, 3, 15, 30, tzinfo=UTC)
    quote = source.reference_price("XAU", at, options)
    assert (quote.source, quote.reference, quote.price) == ("csv", "XAU", 2890.0)
    assert quote.as_of == datetime(2025, 3, 3, 15, tzinfo=UTC)
    later = source.reference_price("XAU", datetime(2025, 3, 4, 12, tzinfo=UTC), options)
    assert (later.price, later.as_of) == (2910.0, datetime(2025, 3, 4, 10, tzinfo=UTC))
    # A bare date is a daily bar, observed at its close (24:00 UTC): not before the day ends.
    today = source.reference_price("XAU", datetime(2025, 3, 5, 23, 59, tzinfo=UTC), options)
    assert today.price == 2910
    closed = source.reference_price("XAU", datetime(2025, 3, 6, tzinfo=UTC), options)
    assert (closed.price, closed.as_of) == (2920, datetime(2025, 3, 6, tzinfo=UTC))
    assert source.reference_price("XAU", datetime(2025, 3, 1, tzinfo=UTC), options) is None
    # With close_time the bar is final at that time of its own day.
    at_close = {**options, "close_time": "21:00"}
    quote = source.reference_price("XAU", datetime(2025, 3, 5, 21, tzinfo=UTC), at_close)
    assert (quote.price, quote.as_of) == (2920, datetime(2025, 3, 5, 21, tzinfo=UTC))
    with pytest.raises(ValueError, match='close_time must be a UTC time of day such as "21:00"'):
        source.reference_price(
            "XAU", datetime(2025, 3, 6, tzinfo=UTC), {**options, "close_time": "9pm"}
        )


def test_csv_skips_bad_rows_rejects_a_bad_header_and_a_bad_name(tmp_path, caplog):
    folder = tmp_path / "refs"
    write(
        folder / "AAPL.csv",
        "price,timestamp\n200,2025-03-03T20:00Z\nabc,2025-03-03T21:00Z\n201,yesterday\n\n",
    )
    write(folder / "GOLD.csv", "time,value\n2025-03-03,1\n")
    source, options = CsvPegSource(), {"folder": str(folder)}
    at = datetime(2025, 3, 4, tzinfo=UTC)
    with caplog.at_level(logging.WARNING):
        quote = source.reference_price("AAPL", at, options)
    assert quote.price == 200.0  # column order is free; bad rows are skipped
    assert "AAPL.csv line 3" in caplog.text and "AAPL.csv line 4" in caplog.text
    with pytest.raises(ValueError, match="timestamp,price"):
        source.reference_price("GOLD", at, options)
    assert source.reference_price("NVDA", at, options) is None  # no file: no answer
    with pytest.raises(ValueError, match="cannot name a file"):
        source.reference_price("../XAU", at, options)
    with pytest.raises(ValueError, match="folder"):
        source.reference_price("AAPL", at, {})


def test_csv_rereads_a_file_that_changed(tmp_path):
    path = write(tmp_path / "XAU.csv", "timestamp,price\n2025-03-03T10:00Z,2900\n")
    source, options = CsvPegSource(), {"path": str(tmp_path)}
    at = datetime(2025, 3, 3, 12, tzinfo=UTC)
    assert source.reference_price("XAU", at, options).price == 2900
    write(path, "timestamp,price\n2025-03-03T10:00Z,2900\n2025-03-03T11:00Z,2911.25\n")
    assert source.reference_price("XAU", at, options).price == 2911.25


def test_csv_through_the_sampler_with_the_universe_file(tmp_path, monkeypatch):
    """[peg_sources.csv] folder is relative to the universe file; units_per_token scales the
    reference (a fix at 24:00 UTC, the moment of the day's close); an old row (read on
    Sunday) is stale: unknown, not a guess."""
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "36500")  # samples of 2025
    write(
        tmp_path / "conf" / "refs" / "XAU.csv",
        "timestamp,price\n2025-03-06T15:00Z,2000\n2025-03-08T00:00Z,2010\n",
    )
    universe_file = write(
        tmp_path / "conf" / "universe.toml",
        '[components]\nmarket_source = "csv"\n\n'
        '[plugins.csv_source]\npath = "prices"\nvolume_unit = "quote"\n\n'
        '[peg_sources.csv]\nfolder = "refs"\n\n'
        '[[asset]]\nticker = "BTC"\nsector = "majors"\n\n'
        '[[asset]]\nticker = "GLD1"\nsector = "gold"\nasset_class = "tokenized_metal"\n'
        'peg = { reference = "XAU", sources = ["csv"], units_per_token = 0.01 }\n',
    )
    universe = load_universe_file(universe_file)
    refs = (tmp_path / "conf" / "refs").resolve()
    assert universe.peg_source_options["csv"]["folder"] == str(refs)
    assert universe.asset("GLD1").peg.threshold_pct == 1.0  # the asset class's default
    # daily closes: the last full day before the sampling time is 2025-03-07 (20.30)
    candles = {"GLD1": daily("GLD1", "2025-03-08", [20.0, 20.1, 20.3, 99.0])}
    rt = peg_runtime(tmp_path, universe, candles=candles)
    report = sample_pegs(rt, datetime(2025, 3, 8, 9, tzinfo=UTC))  # Saturday 09:00
    (reading,) = report.readings
    assert reading.market_price == 20.3
    assert reading.reference_price == pytest.approx(20.10)
    assert reading.drift_pct == pytest.approx(100 * (20.3 / 20.1 - 1))
    assert (reading.status, reading.reference_source) == ("healthy", "csv")
    sunday = sample_pegs(rt, datetime(2025, 3, 9, 18, tzinfo=UTC)).readings[0]
    assert (sunday.status, sunday.reference_source, sunday.drift_pct) == ("unknown", "", None)
    assert sunday.market_price == 99.0


# ---------------------------------------------------------------------------
# http_json, against a local server
# ---------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def log_message(self, *args):  # keep the test output quiet
        pass

    def do_GET(self):
        Handler.requests.append(self.path)
        route = self.path.split("/")[1]
        now = clock.now()
        bodies = {
            "ok": {"data": {"price": 2650.5, "time": now.isoformat()}},
            "string": {"quotes": [{"last": "2650.25"}]},
            "epoch": {"p": 2651, "ts": int(now.timestamp() * 1000)},
            "old": {"price": 2650, "time": (now - timedelta(hours=3)).isoformat()},
            "negative": {"price": -5},
            "zero": {"price": 0},
            "huge": {"price": 265050.0},  # quoted in cents: 100x the market
            "bool": {"price": True},
        }
        if route == "slow":
            time.sleep(1.5)
        if route in bodies:
            self._send(200, json.dumps(bodies[route]).encode(), "application/json")
        elif route == "nan":
            self._send(200, b'{"price": NaN}', "application/json")
        elif route == "html":
            self._send(200, b"<html>maintenance</html>", "text/html")
        elif route == "error":
            self._send(500, b"internal error", "text/plain")
        else:
            self._send(404, b"not found", "text/plain")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def ask_http(server: str, route: str, **options):
    options = {"url": f"{server}/{route}/{{reference}}", **options}
    return HttpJsonPegSource().reference_price("XAU", clock.now(), options)


def test_http_json_reads_the_price_and_its_time(server):
    quote = ask_http(server, "ok", json_path="data.price", timestamp_path="data.time")
    assert (quote.source, quote.reference, quote.price) == ("http_json", "XAU", 2650.5)
    assert abs(clock.now() - quote.as_of) < timedelta(seconds=30)
    assert ask_http(server, "string", json_path="quotes.0.last").price == 2650.25
    epoch = ask_http(server, "epoch", json_path="p", timestamp_path="ts")
    assert epoch.price == 2651 and abs(clock.now() - epoch.as_of) < timedelta(seconds=30)
    before = clock.now()
    assert ask_http(server, "nan").as_of >= before  # no timestamp path: as of receipt
    HttpJsonPegSource().reference_price(
        "BRK/B", clock.now(), {"url": f"{server}/ok/{{reference}}", "json_path": "data.price"}
    )
    assert Handler.requests[-1] == "/ok/BRK%2FB"  # the symbol is URL-quoted


@pytest.mark.parametrize(
    ("route", "options", "error"),
    [
        ("slow", {"timeout": 0.3}, "timed out"),
        ("html", {}, "not JSON"),
        ("error", {}, "500"),
        ("missing", {}, "404"),
        ("ok", {"json_path": "data.bid"}, "nothing at 'bid'"),
        ("bool", {}, "not a number"),
    ],
)
def test_http_json_failures_raise_with_the_reason(server, route, options, error):
    with pytest.raises(Exception, match=error):
        ask_http(server, route, **options)


def test_http_json_does_not_pass_todays_price_off_as_history(server):
    source = HttpJsonPegSource()
    options = {"url": f"{server}/ok/{{reference}}", "json_path": "data.price"}
    count = len(Handler.requests)
    assert source.reference_price("XAU", clock.now() - timedelta(hours=2), options) is None
    assert len(Handler.requests) == count  # not even asked
    options["max_age_hours"] = 3
    assert source.reference_price("XAU", clock.now() - timedelta(hours=2), options)


def gold_universe(*sources: str, **peg_options: dict) -> Universe:
    paxg = Asset("PAXG", "gold", "tokenized_metal", peg=PegConfig("XAU", sources, 1.0, 1.0))
    return Universe(assets=(paxg,), market_source="csv", peg_source_options=peg_options)


@pytest.mark.parametrize(
    ("route", "json_path", "why"),
    [
        ("negative", "price", "not a positive number"),
        ("zero", "price", "not a positive number"),
        ("nan", "price", "not a positive number"),
        ("huge", "price", "away from the market price"),
        ("old", "price", "stale"),
        ("slow", "price", "timed out"),
        ("html", "price", "not JSON"),
        ("error", "price", "500"),
    ],
)
def test_absurd_or_failing_answers_make_the_sample_unknown(
    tmp_path, server, caplog, route, json_path, why
):
    options = {
        "url": f"{server}/{route}/{{reference}}",
        "json_path": json_path,
        "timestamp_path": "time" if route == "old" else "",
        "timeout": 0.3,
    }
    if route != "old":
        del options["timestamp_path"]
    now = clock.now()
    candles = {"PAXG": daily("PAXG", str(now.date()), [2600.0, 2649.0, 2700.0])}
    rt = peg_runtime(tmp_path, gold_universe("http_json", http_json=options), candles=candles)
    with caplog.at_level(logging.INFO, logger="pairscreen.pegs.sampling"):
        (reading,) = sample_pegs(rt, now).readings
    assert reading.status == "unknown" and reading.reference_price is None
    assert reading.market_price == 2649.0  # the last full day's close
    assert "http_json" in caplog.text and why in caplog.text


def test_sources_are_combined_by_median_and_named_in_order(tmp_path, server):
    """Three sources answer: the median counts, all three are named; a failing fourth is
    skipped, and so is a source name nobody installed."""
    now = clock.now().replace(microsecond=0)
    write(tmp_path / "refs" / "XAU.csv", f"timestamp,price\n{now.isoformat()},2700\n")

    class Fixed:
        name = "fixed"
        max_age = timedelta(hours=1)

        def reference_price(self, reference, at, options):
            return ReferenceQuote("fixed", reference, 2600.0, at)

    class Raising:
        name = "raising"
        max_age = timedelta(hours=1)

        def reference_price(self, reference, at, options):
            raise ConnectionError("oracle down")

    class Provider:
        @hookimpl
        def pairscreen_register_peg_sources(self):
            return [Fixed(), Raising()]

    day = {"max_skew_hours": 24}  # yesterday's close against quotes of now: within a day
    universe = gold_universe(
        "csv",
        "raising",
        "http_json",
        "fixed",
        "nowhere",
        csv={"folder": str(tmp_path / "refs"), **day},
        http_json={"url": f"{server}/ok/{{reference}}", "json_path": "data.price", **day},
        fixed=day,
    )
    candles = {"PAXG": daily("PAXG", str(now.date()), [2640.0, 2000.0])}
    rt = peg_runtime(tmp_path, universe, Provider(), candles=candles)
    (reading,) = sample_pegs(rt, now).readings
    assert reading.reference_source == "csv+http_json+fixed"
    assert reading.reference_price == 2650.5  # median of 2700, 2650.5, 2600
    assert reading.drift_pct == pytest.approx(100 * (2640 / 2650.5 - 1))
    assert reading.status == "healthy"


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------

WEDNESDAY = datetime(2025, 3, 5, 16, tzinfo=UTC)
SATURDAY = datetime(2025, 3, 8, 12, tzinfo=UTC)


def test_demo_stock_quotes_are_fresh_only_while_the_market_is_open():
    source = DemoPegSource()
    open_quote = source.reference_price("AAPL", WEDNESDAY, {})
    assert open_quote.as_of == WEDNESDAY and open_quote.price > 0
    overnight = source.reference_price("AAPL", WEDNESDAY + timedelta(hours=9), {})
    assert overnight.as_of == datetime(2025, 3, 5, 21, tzinfo=UTC)  # the close
    weekend = source.reference_price("AAPL", SATURDAY, {})
    assert weekend.as_of == datetime(2025, 3, 7, 21, tzinfo=UTC)  # Friday's close
    assert SATURDAY - weekend.as_of > source.max_age
    gold = source.reference_price("XAU", SATURDAY, {})
    assert gold.as_of == datetime(2025, 3, 7, 22, tzinfo=UTC)  # a weekend gold quote is old
    assert source.reference_price("XAU", WEDNESDAY, {}).as_of == WEDNESDAY
    assert source.reference_price("NOPE", WEDNESDAY, {}) is None


def test_demo_nav_is_an_indicative_nav_accruing_by_the_hour():
    source = DemoPegSource()
    a = source.reference_price("USTBNAV", SATURDAY, {})
    b = source.reference_price("USTBNAV", SATURDAY + timedelta(hours=1), {})
    assert a.as_of == SATURDAY and b.as_of == SATURDAY + timedelta(hours=1)
    assert b.price / a.price == pytest.approx(math.exp(0.048 / 365 / 24), rel=1e-9)


def test_demo_market_price_wobbles_below_every_threshold_outside_the_script():
    source = DemoPegSource()
    xaut = Asset("XAUT", "gold", "tokenized_metal", peg=PegConfig("XAU", ("demo",), 1.0, 1.0))
    for hour in range(0, 24 * 7, 5):
        at = WEDNESDAY + timedelta(hours=hour)
        reference = source.reference_price("XAU", at, {}).price
        market = source.market_price(xaut, at, {"scenario": False})
        assert abs(100 * (market / reference - 1)) < 0.2
        assert 100 * (market / reference - 1) == pytest.approx(wobble_pct("XAUT", at))
    crypto = Asset("BTC", "majors")
    assert source.market_price(crypto, WEDNESDAY, {}) is None


def demo_rt(tmp_path: Path, anchor: datetime, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    """The demo universe with its script anchored at ``anchor`` (long ago: keep the samples),
    the clock at the anchor."""
    monkeypatch.setenv("PAIRSCREEN_PEG_RETENTION_DAYS", "36500")
    monkeypatch.setattr(clock, "now", lambda: anchor)
    options = {"demo": {"scenario_anchor": anchor.isoformat()}}
    return peg_runtime(tmp_path, replace(load_demo_universe(), peg_source_options=options))


@pytest.mark.parametrize(
    "anchor",
    [
        datetime(2025, 3, 5, 10, tzinfo=UTC),  # Wednesday morning
        datetime(2025, 3, 9, 12, tzinfo=UTC),  # Sunday: gold has not traded since Friday
        datetime(2025, 3, 10, 1, tzinfo=UTC),  # Monday, one hour into gold's week
        datetime(2025, 3, 8, 23, tzinfo=UTC),  # Saturday night
    ],
    ids=["wednesday", "sunday", "monday-01h", "saturday-night"],
)
def test_demo_script_gives_one_sustained_depeg_and_one_blip(tmp_path, anchor, monkeypatch):
    rt = demo_rt(tmp_path, anchor, monkeypatch)
    reports = backfill_pegs(rt, 72, anchor)
    events = list(PegEvent.select())
    assert [(e.ticker, e.active) for e in events] == [("PAXG", True)]
    paxg = events[0]
    assert paxg.median_drift_pct == pytest.approx(-2.5, abs=0.2)
    assert paxg.reference_source == "demo"
    assert paxg.sample_count == 21
    assert paxg.last_unhealthy - paxg.first_unhealthy >= timedelta(hours=20)
    assert [(c.ticker, c.change) for r in reports for c in r.changes] == [("PAXG", "opened")]
    # the blip: six unhealthy hours of USTB, then healthy again
    blip = PegSample.select().where(
        (PegSample.ticker == "USTB") & (PegSample.status == "unhealthy")
    )
    times = sorted(s.sampled_at for s in blip)
    assert len(times) == 6 and times[-1] - times[0] == timedelta(hours=5)
    last = {r.ticker: r for r in reports[-1].readings}
    assert last["USTB"].status == "healthy" and last["XAUT"].status in ("healthy", "unknown")
    weekend = anchor.weekday() >= 5 or (anchor.weekday() == 4 and anchor.hour >= 22)
    equities = [r for r in last.values() if r.ticker.endswith("x")]
    assert len(equities) == 6
    if weekend:  # stock markets closed: unknown, never a false depeg
        assert {r.status for r in equities} == {"unknown"}
        assert last["PAXG"].status == "unknown"
    # the depeg ends four hours after the anchor; the first healthy sample closes the event
    after = [sample_pegs(rt, anchor + timedelta(hours=h)) for h in range(1, 80)]
    closed = [c for r in after for c in r.changes]
    assert [(c.ticker, c.change) for c in closed] == [("PAXG", "closed")]
    assert not PegEvent.get().active
