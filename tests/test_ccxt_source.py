"""The ``ccxt`` market source, tested at the network edge.

A local HTTP server answers like Binance's public REST API from the recordings in
``tests/fixtures/ccxt/`` (``/api/v3/exchangeInfo``; ``/api/v3/klines`` sliced by
``startTime``/``endTime``/``limit`` as Binance does), and the real ccxt ``binance`` exchange
is pointed at it through ``exchange_config.urls``. Everything between ccxt's HTTP request
and the stored candles is the production code path.

Hourly and 4-hour klines (``interval=1h|4h``) are Binance's real hourly closes of
``tests/fixtures/hourly`` (March 2023, see its README) in the shape Binance sends them:
stamped with the bar's **open** time, open = high = low = close (the files keep closes only)
and a base volume of :data:`BAR_BASE_VOLUME`; a 4-hour kline is the hour closing on the
4-hour grid (its close is the 4-hour bar's). A 15-minute kline is made up from them
(:func:`quarter_close`): the one closing on the hour has that hour's close, the three before
it the hour's close moved by -0.03, -0.02 and -0.01 %, so each bar's name shows in its value.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

import numpy as np
import pytest

from pairscreen import Asset

ccxt = pytest.importorskip("ccxt", reason="the ccxt extra is not installed")
from pairscreen_plugins.market import ccxt_source  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ccxt"
DAY_MS = 86_400_000
FIRST, LAST = date(2023, 1, 1), date(2023, 12, 31)
GAP = [date(2023, 6, 10), date(2023, 6, 11), date(2023, 6, 12)]


def ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)


def recorded_klines(symbol: str) -> list[list]:
    return json.loads((FIXTURES / f"binance_klines_{symbol}.json").read_text())


HOURLY = Path(__file__).resolve().parent / "fixtures" / "hourly"
BAR_BASE_VOLUME = 2.5  # the base volume of every served hourly and 4-hour kline
BAR_SECONDS = {"1h": 3600, "4h": 4 * 3600, "15m": 900}


def hourly_closes(symbol: str) -> list[tuple[int, str]]:
    """(close time in epoch seconds, close as written) of ``tests/fixtures/hourly``."""
    lines = (HOURLY / f"{symbol.removesuffix('USDT')}.csv").read_text().splitlines()[1:]
    out = []
    for line in lines:
        stamp, close = line.split(",")
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        out.append((int(moment.timestamp()), close))
    return out


def quarter_close(hour_close: str, quarters_before: int) -> str:
    """The close of the 15-minute bar ``quarters_before`` bars before the hour's close."""
    return repr(float(hour_close) * (1 - quarters_before / 10_000))


def bar_closes(symbol: str, interval: str) -> list[tuple[int, str]]:
    """(close time in epoch seconds, close) of every bar of ``interval`` the fake serves."""
    seconds = BAR_SECONDS[interval]
    if interval == "15m":
        return [
            (t - k * seconds, close if k == 0 else quarter_close(close, k))
            for t, close in hourly_closes(symbol)
            for k in (3, 2, 1, 0)
        ]
    return [(t, close) for t, close in hourly_closes(symbol) if t % seconds == 0]


def bar_klines(symbol: str, interval: str) -> list[list]:
    """Binance klines of ``interval`` built from the real hourly closes (open-time stamps)."""
    seconds = BAR_SECONDS[interval]
    rows = []
    for closes_at, close in bar_closes(symbol, interval):
        opened = (closes_at - seconds) * 1000
        volume = f"{BAR_BASE_VOLUME:.8f}"
        closed = closes_at * 1000 - 1
        rows.append([opened, close, close, close, close, volume, closed, "0", 1, "0", "0", "0"])
    return rows


@dataclass
class Exchange:
    """What the fake Binance serves and what it was asked."""

    base: str = ""
    max_limit: int = 1000  # Binance's spot maximum; lower it to mimic a stingier exchange
    # An exchange that answers only the window of ``limit`` bars after ``startTime`` (an
    # empty page inside a gap longer than a page), where Binance skips to the next candle.
    windowed: bool = False
    outages: dict[str, tuple[int, int]] = field(default_factory=dict)  # symbol -> open ms span
    refusals: dict[str, list[tuple[int, str]]] = field(
        default_factory=dict
    )  # symbol -> [(status, Retry-After)]
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)

    def klines_requests(self, symbol: str) -> list[dict[str, str]]:
        return [q for p, q in self.requests if p == "/api/v3/klines" and q.get("symbol") == symbol]


class BinanceRecording(BaseHTTPRequestHandler):
    exchange: Exchange

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        ex = self.exchange
        ex.requests.append((url.path, query))
        if url.path == "/api/v3/exchangeInfo":
            self._send(200, (FIXTURES / "binance_exchangeInfo.json").read_bytes())
        elif url.path == "/api/v3/klines":
            self._klines(query)
        else:
            ex.unexpected.append(self.path)
            self._send(404, b'{"code":-1,"msg":"not recorded"}')

    def _klines(self, query: dict[str, str]) -> None:
        ex = self.exchange
        symbol = query.get("symbol", "")
        pending = ex.refusals.get(symbol)
        if pending:
            status, retry_after = pending.pop(0)
            body = (FIXTURES / "binance_error_too_many_requests.json").read_bytes()
            self._send(status, body, {"Retry-After": retry_after})
            return
        path = FIXTURES / f"binance_klines_{symbol}.json"
        if not path.is_file():
            self._send(400, (FIXTURES / "binance_error_invalid_symbol.json").read_bytes())
            return
        interval = query.get("interval")
        if interval != "1d" and interval not in BAR_SECONDS:
            ex.unexpected.append(self.path)
            self._send(400, b'{"code":-1120,"msg":"Invalid interval."}')
            return
        rows = json.loads(path.read_text()) if interval == "1d" else bar_klines(symbol, interval)
        if symbol in ex.outages:
            first, last = ex.outages[symbol]
            rows = [r for r in rows if not first <= r[0] <= last]
        start = int(query.get("startTime", 0))
        end = int(query.get("endTime", 2**62))
        limit = min(int(query.get("limit", 500)), ex.max_limit)
        if ex.windowed and interval in BAR_SECONDS:
            end = min(end, start + limit * BAR_SECONDS[interval] * 1000 - 1)
        page = [r for r in rows if start <= r[0] <= end][:limit]
        self._send(200, json.dumps(page).encode())


@pytest.fixture()
def exchange(monkeypatch: pytest.MonkeyPatch) -> Iterator[Exchange]:
    state = Exchange()
    handler = type("Handler", (BinanceRecording,), {"exchange": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    # Every day of the recordings is closed: "today" is the day after the last one.
    monkeypatch.setattr(ccxt_source, "utc_today", lambda: LAST + timedelta(days=1))
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
    assert state.unexpected == [], "ccxt asked for endpoints that were not recorded"


def local_urls(base: str) -> dict[str, str]:
    """Binance's API URLs with the scheme and host replaced by the local server's."""
    local = urlsplit(base)
    urls = {}
    for name, url in ccxt.binance().urls["api"].items():
        if isinstance(url, str):
            parts = urlsplit(url)
            urls[name] = urlunsplit((local.scheme, local.netloc, parts.path, "", ""))
    return urls


def options(server: Exchange, /, **extra: object) -> dict[str, object]:
    return {
        "exchange": "binance",
        "quote": "USDT",
        "timeframe": "1d",
        "history_days": 365,
        "backoff_seconds": 0.01,
        "exchange_config": {
            "urls": {"api": local_urls(server.base)},
            "options": {"fetchMarkets": {"types": ["spot"]}},
        },
        **extra,
    }


def fetch(
    server: Exchange,
    assets: list[Asset],
    /,
    *,
    since: dict | None = None,
    until: date = LAST,
    **extra: object,
) -> dict[str, object]:
    source = ccxt_source.CcxtMarketSource()
    out = source.fetch_candles(assets, options(server, **extra), since=since or {}, until=until)
    return {c.ticker: c for c in out}


BTC = Asset("BTC", "majors")
ETH = Asset("ETH", "majors")
SOL = Asset("SOL", "majors")


def test_full_history_in_pages_with_quote_volume(exchange: Exchange):
    got = fetch(exchange, [BTC, ETH], page_limit=100)
    for ticker, symbol in (("BTC", "BTCUSDT"), ("ETH", "ETHUSDT")):
        rows = recorded_klines(symbol)
        candles = got[ticker]
        assert len(candles.dates) == 365
        assert candles.dates[0] == np.datetime64(FIRST) and candles.dates[-1] == np.datetime64(LAST)
        close = np.array([float(r[4]) for r in rows])
        base_volume = np.array([float(r[5]) for r in rows])
        np.testing.assert_array_equal(candles.close, close)
        np.testing.assert_array_equal(candles.volume, base_volume * close)
        starts = [int(q["startTime"]) for q in exchange.klines_requests(symbol)]
        assert starts == [ms(FIRST) + k * 100 * DAY_MS for k in range(4)]
        assert {q["limit"] for q in exchange.klines_requests(symbol)} == {"100"}


def test_pages_shorter_than_asked_still_cover_the_range(exchange: Exchange):
    exchange.max_limit = 150  # the exchange sends at most 150 candles whatever we ask
    got = fetch(exchange, [BTC])
    assert len(got["BTC"].dates) == 365
    assert len(exchange.klines_requests("BTCUSDT")) == 3


def test_incremental_sync_asks_only_for_new_days(exchange: Exchange):
    got = fetch(exchange, [BTC, ETH], since={"BTC": date(2023, 12, 20), "ETH": LAST})
    assert "ETH" not in got
    assert got["BTC"].dates.tolist() == [date(2023, 12, d) for d in range(21, 32)]
    assert [q["startTime"] for q in exchange.klines_requests("BTCUSDT")] == [
        str(ms(date(2023, 12, 21)))
    ]
    assert exchange.klines_requests("ETHUSDT") == []
    exchange.requests.clear()
    assert fetch(exchange, [BTC], since={"BTC": LAST}) == {}
    assert exchange.requests == [], "nothing new to fetch: not even the markets are loaded"


def test_todays_forming_candle_is_never_stored(exchange: Exchange, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ccxt_source, "utc_today", lambda: LAST)  # the last recorded day is forming
    got = fetch(exchange, [BTC], since={"BTC": date(2023, 12, 1)}, until=LAST)
    assert got["BTC"].dates[-1] == np.datetime64(LAST - timedelta(days=1))
    # The next day's sync picks it up, final, and only it.
    monkeypatch.setattr(ccxt_source, "utc_today", lambda: LAST + timedelta(days=1))
    got = fetch(exchange, [BTC], since={"BTC": LAST - timedelta(days=1)})
    assert got["BTC"].dates.tolist() == [LAST]


def test_until_caps_the_range(exchange: Exchange):
    got = fetch(exchange, [BTC], until=date(2023, 3, 31), history_days=31)
    assert got["BTC"].dates.tolist() == [date(2023, 3, d) for d in range(1, 32)]


def test_gaps_stay_gaps(exchange: Exchange):
    got = fetch(exchange, [SOL], page_limit=100)
    days = got["SOL"].dates.astype(object).tolist()
    assert len(days) == 365 - len(GAP)
    assert not set(GAP) & set(days)
    assert days == sorted(set(days))
    assert days[days.index(date(2023, 6, 9)) + 1] == date(2023, 6, 13)


def test_delisted_and_unknown_symbols_are_skipped(
    exchange: Exchange, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.WARNING)
    luna = Asset("LUNA", "majors")  # listed with status BREAK; klines answers -1121
    old = Asset("OLD", "majors")  # not listed at all
    got = fetch(exchange, [luna, BTC, old])
    assert set(got) == {"BTC"} and len(got["BTC"].dates) == 365
    assert "LUNA (LUNA/USDT) is refused by the exchange" in caplog.text
    assert "OLD (OLD/USDT) is not listed" in caplog.text
    assert len(exchange.klines_requests("LUNAUSDT")) == 1, "a refused symbol is not retried"


def test_symbol_mapping_from_the_universe(exchange: Exchange):
    ether = Asset("ETHER", "majors", symbol="ETH/USDT")  # a full ccxt symbol is used as is
    bitcoin = Asset("XBT", "majors", symbol="BTC")  # a base currency gets /<quote>
    got = fetch(
        exchange, [ether, bitcoin], since={"ETHER": date(2023, 12, 30), "XBT": date(2023, 12, 30)}
    )
    assert set(got) == {"ETHER", "XBT"}
    assert got["ETHER"].close[-1] == float(recorded_klines("ETHUSDT")[-1][4])
    assert got["XBT"].close[-1] == float(recorded_klines("BTCUSDT")[-1][4])


def test_rate_limit_answers_are_retried_after_backoff(
    exchange: Exchange, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.WARNING)
    exchange.refusals["BTCUSDT"] = [(429, "0"), (429, "0")]
    exchange.refusals["ETHUSDT"] = [(418, "0")]  # Binance's ban answer: DDoSProtection
    got = fetch(exchange, [BTC, ETH], page_limit=200)
    assert len(got["BTC"].dates) == 365 and len(got["ETH"].dates) == 365
    np.testing.assert_array_equal(
        got["BTC"].close, [float(r[4]) for r in recorded_klines("BTCUSDT")]
    )
    assert len(exchange.klines_requests("BTCUSDT")) == 2 + 2  # two refusals, then two pages
    assert len(exchange.klines_requests("ETHUSDT")) == 1 + 2
    assert caplog.text.count("retry 1 of 5") == 2 and caplog.text.count("retry 2 of 5") == 1


def test_retry_after_is_honoured(exchange: Exchange):
    exchange.refusals["BTCUSDT"] = [(429, "1")]
    started = time.monotonic()
    got = fetch(exchange, [BTC], since={"BTC": date(2023, 12, 30)})
    assert time.monotonic() - started >= 1.0
    assert got["BTC"].dates.tolist() == [LAST]


def test_persistent_rate_limiting_skips_the_asset_then_fails_the_sync(exchange: Exchange):
    exchange.refusals["BTCUSDT"] = [(429, "0")] * 10
    got = fetch(exchange, [BTC, ETH], max_retries=2)
    assert set(got) == {"ETH"}, "the other assets go on"
    assert len(exchange.klines_requests("BTCUSDT")) == 3  # the first try and two retries
    exchange.refusals["BTCUSDT"] = [(429, "0")] * 10
    with pytest.raises(ConnectionError, match="failed for every asset"):
        fetch(exchange, [BTC], max_retries=2)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"exchange": ""}, "set exchange"),
        ({"exchange": "no_such_exchange"}, "not a ccxt exchange id"),
        ({"timeframe": "1h"}, "timeframe must be"),
        ({"volume": "notional"}, "volume_unit must be"),
        ({"volume_unit": "coins"}, "volume_unit must be"),
        ({"page_limit": 0}, "must be positive"),
    ],
)
def test_bad_options_are_one_clear_error(exchange: Exchange, bad: dict, message: str):
    with pytest.raises(ValueError, match=message):
        fetch(exchange, [BTC], **bad)


def test_the_plugin_loads_without_ccxt_and_says_what_to_install():
    script = (
        "import sys; sys.modules['ccxt'] = None\n"
        "from datetime import date\n"
        "from pairscreen.plugin_system.registry import Plugins\n"
        "from pairscreen.plugin_system.loader import load_plugins\n"
        "from pairscreen.config import Settings\n"
        "source = Plugins(load_plugins(Settings()), Settings()).market_sources.get('ccxt')\n"
        "try:\n"
        "    list(source.fetch_candles([], {'exchange': 'binance'}, since={},\n"
        "                              until=date.today()))\n"
        "    list(source.fetch_candles([__import__('pairscreen').Asset('BTC', 'm')],\n"
        "                              {'exchange': 'binance'}, since={}, until=date.today()))\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'pairscreen[ccxt]'" in done.stdout


def test_data_sync_from_a_universe_file_is_incremental(exchange: Exchange, empty_runtime, tmp_path):
    """The whole path: a ccxt universe file (options in ``[plugins.ccxt_source]``, the
    exchange's config a table in it), ``sync_candles`` into the database, then a re-sync."""
    from pairscreen.bootstrap import load_configured_plugins
    from pairscreen.db.connection import database
    from pairscreen.db.models import Candle
    from pairscreen.market.sync import sync_candles
    from pairscreen.universe import load_universe_file

    api = "\n".join(f'{name} = "{url}"' for name, url in local_urls(exchange.base).items())
    path = tmp_path / "universe.toml"
    path.write_text(
        f"""
label = "recorded Binance answers"

[components]
market_source = "ccxt"

[plugins.ccxt_source]
exchange = "binance"
quote = "USDT"
history_days = 365
backoff_seconds = 0.01

[plugins.ccxt_source.exchange_config.options.fetchMarkets]
types = ["spot"]

[plugins.ccxt_source.exchange_config.urls.api]
{api}

[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETHER"
sector = "majors"
symbol = "ETH/USDT"

[[asset]]
ticker = "LUNA"
sector = "majors"
"""
    )
    plugins, universe = load_configured_plugins(empty_runtime.settings, load_universe_file(path))
    assert plugins.options["ccxt_source"]["history_days"] == 365
    first = sync_candles(universe, plugins, until=LAST)
    assert first.inserted == {"BTC": 365, "ETHER": 365}
    assert first.missing == ("LUNA",)
    with database.connection_context():
        assert Candle.select().count() == 730
        last = Candle.get((Candle.ticker == "ETHER") & (Candle.day == LAST))
    assert last.close == float(recorded_klines("ETHUSDT")[-1][4])
    exchange.requests.clear()
    again = sync_candles(universe, plugins, until=LAST)
    assert not again.changed and not again.conflicts
    # Only the overlap is asked for again: one page from the 7th-last stored day.
    overlap_start = str(ccxt_source.day_ms(LAST - timedelta(days=6)))
    for symbol in ("BTCUSDT", "ETHUSDT"):
        (request,) = exchange.klines_requests(symbol)
        assert request["startTime"] == overlap_start


def test_a_candle_without_volume_has_an_unknown_volume_never_zero(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """Klines whose volume is null come back as NaN (served as null), not as 0."""
    for recording in FIXTURES.iterdir():
        (tmp_path / recording.name).write_bytes(recording.read_bytes())
    rows = recorded_klines("BTCUSDT")
    for row in rows[:10]:
        row[5] = None  # the exchange gives no volume for the first ten days
    (tmp_path / "binance_klines_BTCUSDT.json").write_text(json.dumps(rows))
    monkeypatch.setattr(sys.modules[__name__], "FIXTURES", tmp_path)
    volume = fetch(exchange, [BTC])["BTC"].volume
    assert np.isnan(volume[:10]).all()
    assert np.isfinite(volume[10:]).all() and (volume[10:] > 0).all()


# --- bars: a universe whose [market] bar is 4h, 1h or 15m -------------------------------------

HOUR_MS = 3_600_000
FIRST_HOURLY_OPEN = datetime(2023, 3, 10, tzinfo=UTC)  # the fixture's first bar opens then
LAST_HOURLY_CLOSE = datetime(2023, 4, 1, tzinfo=UTC)  # and its last closes then


def at(moment: datetime, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the service's clock (``pairscreen.clock``) to ``moment`` for this test."""
    from pairscreen import clock

    monkeypatch.setenv(clock.SHIFT_VARIABLE, clock.shift_to(moment))


def fetch_bars(
    server: Exchange,
    assets: list[Asset],
    /,
    *,
    bar: str = "1h",
    since: dict | None = None,
    until: datetime = LAST_HOURLY_CLOSE,
    **extra: object,
) -> dict[str, object]:
    source = ccxt_source.CcxtMarketSource()
    opts = options(server, **{"timeframe": bar, **extra})
    out = source.fetch_bars(assets, opts, bar=bar, since=since or {}, until=until)
    return {c.ticker: c for c in out}


def test_hourly_bars_come_in_pages_named_by_their_close_time(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch
):
    at(LAST_HOURLY_CLOSE + timedelta(minutes=30), monkeypatch)
    got = fetch_bars(exchange, [BTC, ETH], page_limit=200, history_days=30)
    for ticker, symbol in (("BTC", "BTCUSDT"), ("ETH", "ETHUSDT")):
        bars = got[ticker]
        expected = hourly_closes(symbol)
        assert bars.dates.dtype == np.dtype("datetime64[s]")
        # ccxt's open-time stamp + 1 h: exactly the close times of the file, gap included
        assert bars.dates.astype(np.int64).tolist() == [t for t, _ in expected]
        assert len(bars.dates) == 527
        assert bars.dates[-1] == np.datetime64("2023-04-01T00:00:00", "s")
        close = np.array([float(c) for _, c in expected])
        np.testing.assert_array_equal(bars.close, close)
        np.testing.assert_array_equal(bars.volume, BAR_BASE_VOLUME * close)  # quote volume
        asked = exchange.klines_requests(symbol)
        assert {q["interval"] for q in asked} == {"1h"} and {q["limit"] for q in asked} == {"200"}
        first_open = int(LAST_HOURLY_CLOSE.timestamp() * 1000) - 30 * DAY_MS
        # Three pages: each starts an hour after the newest bar of the one before.
        opens = [r[0] for r in bar_klines(symbol, "1h")]
        assert [int(q["startTime"]) for q in asked] == [
            first_open,
            opens[199] + HOUR_MS,
            opens[399] + HOUR_MS,
        ]


def test_pages_shorter_than_asked_cover_the_bars_too(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch
):
    at(LAST_HOURLY_CLOSE, monkeypatch)
    exchange.max_limit = 100  # the exchange sends at most 100 bars whatever we ask
    got = fetch_bars(exchange, [SOL], history_days=30)
    assert len(got["SOL"].dates) == 527
    assert len(exchange.klines_requests("SOLUSDT")) == 6


def test_an_exchange_gap_longer_than_a_page_does_not_end_the_sync(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch
):
    """An exchange answering only the window after ``since`` sends empty pages before the
    asset's first bar and inside an outage of 150 bars (a page is 100): the sync skips them
    a page at a time and goes on to the last closed bar."""
    at(LAST_HOURLY_CLOSE + timedelta(minutes=30), monkeypatch)
    exchange.windowed = True
    outage = (ms(date(2023, 3, 12)), ms(date(2023, 3, 12)) + 149 * HOUR_MS)  # 150 bars' opens
    exchange.outages["BTCUSDT"] = outage
    got = fetch_bars(exchange, [BTC], page_limit=100, history_days=30)
    served = [
        (t, c)
        for t, c in bar_closes("BTCUSDT", "1h")
        if not outage[0] < t * 1000 <= outage[1] + HOUR_MS
    ]
    assert len(served) == 527 - 150
    times = got["BTC"].dates.astype(np.int64).tolist()
    assert times == [t for t, _ in served]  # both sides of the outage, to the last closed bar
    assert times[-1] == int(LAST_HOURLY_CLOSE.timestamp())
    np.testing.assert_array_equal(got["BTC"].close, [float(c) for _, c in served])
    asked = [int(q["startTime"]) for q in exchange.klines_requests("BTCUSDT")]
    first_open = int(LAST_HOURLY_CLOSE.timestamp() * 1000) - 30 * DAY_MS
    # nothing listed for the first 8 days: an empty page of 100 bars, skipped
    assert asked[:2] == [first_open, first_open + 100 * HOUR_MS]
    # a page whose whole window lies in the outage came back empty, and the sync went on
    # (skipping by the longest page sent so far: never past a bar the exchange has)
    empty = [s for s in asked if outage[0] <= s and s + 40 * HOUR_MS <= outage[1]]
    assert empty and asked[-1] > outage[1] and asked == sorted(set(asked))
    assert asked[-1] < int(LAST_HOURLY_CLOSE.timestamp() * 1000)
    assert len(asked) == 9


def test_fifteen_minute_bars_page_resume_and_leave_the_forming_bar_out(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch
):
    at(LAST_HOURLY_CLOSE - timedelta(minutes=1), monkeypatch)  # the 00:00 bar is forming
    got = fetch_bars(exchange, [BTC], bar="15m", page_limit=100, history_days=3)
    bars = got["BTC"]
    last = LAST_HOURLY_CLOSE - timedelta(minutes=15)  # the last closed bar
    first = last - timedelta(days=3)  # history_days back from it
    expected = [
        (t, c) for t, c in bar_closes("BTCUSDT", "15m") if first.timestamp() < t <= last.timestamp()
    ]
    assert len(expected) == 3 * 96  # three days of quarters to the last closed one
    assert bars.dates.astype(np.int64).tolist() == [t for t, _ in expected]
    assert bars.dates[0] == np.datetime64("2023-03-29T00:00:00", "s")  # its close, not open
    assert bars.dates[-1] == np.datetime64("2023-03-31T23:45:00", "s")
    np.testing.assert_array_equal(bars.close, [float(c) for _, c in expected])
    asked = exchange.klines_requests("BTCUSDT")
    assert {q["interval"] for q in asked} == {"15m"}
    assert len(asked) == 3  # 288 bars in pages of 100
    # resumed after the last stored bar once the next has closed: that bar alone
    at(LAST_HOURLY_CLOSE + timedelta(minutes=1), monkeypatch)
    exchange.requests.clear()
    since = {"BTC": datetime(2023, 3, 31, 23, 45, tzinfo=UTC)}
    got = fetch_bars(exchange, [BTC], bar="15m", since=since)
    assert got["BTC"].dates.tolist() == [LAST_HOURLY_CLOSE.replace(tzinfo=None)]
    assert got["BTC"].close.tolist() == [float(hourly_closes("BTCUSDT")[-1][1])]
    assert len(exchange.klines_requests("BTCUSDT")) == 1


def test_four_hour_bars_close_on_the_four_hour_grid(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch
):
    at(LAST_HOURLY_CLOSE, monkeypatch)
    got = fetch_bars(exchange, [BTC], bar="4h", history_days=30)
    times = got["BTC"].dates.astype(np.int64)
    expected = [(t, float(c)) for t, c in hourly_closes("BTCUSDT") if t % (4 * 3600) == 0]
    assert times.tolist() == [t for t, _ in expected] and len(times) == 22 * 6
    np.testing.assert_array_equal(got["BTC"].close, [c for _, c in expected])
    assert {q["interval"] for q in exchange.klines_requests("BTCUSDT")} == {"4h"}


def test_the_bar_still_forming_is_left_out_until_it_closes(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch
):
    at(LAST_HOURLY_CLOSE - timedelta(minutes=1), monkeypatch)  # the last bar is forming
    since = {"BTC": datetime(2023, 3, 31, 12, tzinfo=UTC)}
    got = fetch_bars(exchange, [BTC], since=since)
    times = got["BTC"].dates
    assert times[0] == np.datetime64("2023-03-31T13:00:00", "s")  # closing after ``since``
    assert times[-1] == np.datetime64("2023-03-31T23:00:00", "s") and len(times) == 11
    at(LAST_HOURLY_CLOSE, monkeypatch)  # a bar closing exactly now has closed
    got = fetch_bars(exchange, [BTC], since={"BTC": datetime(2023, 3, 31, 23, tzinfo=UTC)})
    assert got["BTC"].dates.tolist() == [LAST_HOURLY_CLOSE.replace(tzinfo=None)]
    # ``until`` caps the range as well as the clock does.
    got = fetch_bars(exchange, [BTC], since=since, until=datetime(2023, 3, 31, 15, tzinfo=UTC))
    assert got["BTC"].dates[-1] == np.datetime64("2023-03-31T15:00:00", "s")
    exchange.requests.clear()
    assert fetch_bars(exchange, [BTC], since={"BTC": LAST_HOURLY_CLOSE}) == {}
    assert exchange.requests == [], "nothing closed after the last stored bar: no request"


def test_bars_are_retried_after_rate_limits_and_a_dead_exchange_is_one_error(
    exchange: Exchange, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.WARNING)
    at(LAST_HOURLY_CLOSE, monkeypatch)
    exchange.refusals["BTCUSDT"] = [(429, "0"), (418, "0")]
    got = fetch_bars(exchange, [BTC], history_days=30)
    assert len(got["BTC"].dates) == 527
    assert "retry 2 of 5" in caplog.text
    exchange.refusals["BTCUSDT"] = [(429, "0")] * 10
    with pytest.raises(
        ConnectionError,
        match=r"binance failed for every asset \(rate limited or unreachable\); no 1h bars were "
        "synced",
    ):
        fetch_bars(exchange, [BTC], max_retries=1, history_days=30)


def test_an_exchange_without_the_timeframe_is_refused_before_any_request():
    source = ccxt_source.CcxtMarketSource()
    with pytest.raises(ValueError) as refused:
        list(
            source.fetch_bars(
                [BTC],
                {"exchange": "coinbaseexchange", "quote": "USD"},
                bar="4h",
                since={},
                until=LAST_HOURLY_CLOSE,
            )
        )
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(
        "ccxt market source: coinbaseexchange does not serve 4h candles (its timeframes: 1m, "
    )
    assert message.endswith("choose another exchange or another [market] bar")


def test_a_timeframe_other_than_the_bar_is_refused(exchange: Exchange):
    with pytest.raises(ValueError, match=r'timeframe must be "1h", the universe\'s \[market\] bar'):
        fetch_bars(exchange, [BTC], timeframe="1d")


def test_an_hourly_ccxt_universe_syncs_then_resumes_from_its_overlap(
    exchange: Exchange, empty_runtime, tmp_path, monkeypatch: pytest.MonkeyPatch
):
    """The whole path: an hourly ccxt universe file, ``sync_bars`` into the database, then a
    later sync that asks only from the stored overlap on and adds the bars closed since."""
    from pairscreen.bootstrap import load_configured_plugins
    from pairscreen.contracts.bars import bar_size
    from pairscreen.db.connection import database
    from pairscreen.market.bar_store import load_bars
    from pairscreen.market.bar_sync import sync_bars
    from pairscreen.universe import load_universe_file

    api = "\n".join(f'{name} = "{url}"' for name, url in local_urls(exchange.base).items())
    path = tmp_path / "universe.toml"
    path.write_text(
        f"""
[market]
bar = "1h"

[components]
market_source = "ccxt"

[plugins.ccxt_source]
exchange = "binance"
history_days = 30
page_limit = 500
backoff_seconds = 0.01

[plugins.ccxt_source.exchange_config.options.fetchMarkets]
types = ["spot"]

[plugins.ccxt_source.exchange_config.urls.api]
{api}

[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "SOL"
sector = "majors"
"""
    )
    plugins, universe = load_configured_plugins(empty_runtime.settings, load_universe_file(path))
    at(datetime(2023, 3, 25, 0, 30, tzinfo=UTC), monkeypatch)
    first = sync_bars(universe, plugins)
    assert first.inserted == {"BTC": 359, "SOL": 359} and not first.needs_review
    exchange.requests.clear()
    at(LAST_HOURLY_CLOSE + timedelta(minutes=5), monkeypatch)
    second = sync_bars(universe, plugins)
    assert second.inserted == {"BTC": 168, "SOL": 168} and not second.needs_review
    # Resumed from the overlap: the bars of the last 7 stored UTC days (2023-03-18 on).
    overlap_open = int(datetime(2023, 3, 18, tzinfo=UTC).timestamp() * 1000)
    for symbol in ("BTCUSDT", "SOLUSDT"):
        asked = exchange.klines_requests(symbol)
        assert int(asked[0]["startTime"]) == overlap_open and len(asked) == 1
    with database.connection_context():
        stored = load_bars(bar_size("1h"))
    for ticker in ("BTC", "SOL"):
        expected = hourly_closes(f"{ticker}USDT")
        assert stored[ticker].dates.astype(np.int64).tolist() == [t for t, _ in expected]
        np.testing.assert_array_equal(stored[ticker].close, [float(c) for _, c in expected])


def hourly_ccxt_universe(folder: Path, exchange_id: str, api: dict[str, str], bar: str) -> Path:
    """A ccxt universe file at ``bar`` whose exchange's API is ``api`` (one asset, BTC)."""
    urls = "\n".join(f'{name} = "{url}"' for name, url in api.items())
    path = folder / "universe.toml"
    path.write_text(
        f'[market]\nbar = "{bar}"\n\n[components]\nmarket_source = "ccxt"\n\n'
        f'[plugins.ccxt_source]\nexchange = "{exchange_id}"\nmax_retries = 0\n'
        "backoff_seconds = 0.01\n\n"
        "[plugins.ccxt_source.exchange_config.options.fetchMarkets]\n"
        'types = ["spot"]\n\n'
        f"[plugins.ccxt_source.exchange_config.urls.api]\n{urls}\n\n"
        '[[asset]]\nticker = "BTC"\nsector = "majors"\n',
        encoding="utf-8",
    )
    return path


def test_data_sync_of_bars_says_in_one_line_what_the_exchange_cannot_do(tmp_path):
    """On the command line: an exchange without the bar's timeframe is a usage error, an
    unreachable one a failure; each one line, nothing synced."""
    from pairscreen.cli import exits
    from tests.support.cli import newcomer_env, run_cli

    def sync(universe: Path) -> subprocess.CompletedProcess[str]:
        argv = ("--data-dir", str(tmp_path / "data"), "--universe", str(universe), "--quiet")
        return run_cli(*argv, "data", "sync", env=newcomer_env(tmp_path), timeout=120)

    no_4h = sync(hourly_ccxt_universe(tmp_path, "coinbaseexchange", {}, "4h"))
    assert no_4h.returncode == exits.USAGE and no_4h.stderr.count("\n") == 1, no_4h.stderr
    assert no_4h.stderr.startswith(
        "pairscreen: error: ccxt market source: coinbaseexchange does not serve 4h candles"
    )
    with socket.socket() as probe:  # a port nothing listens on: the exchange is unreachable
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    unreachable = sync(hourly_ccxt_universe(tmp_path, "binance", local_urls(dead), "1h"))
    assert unreachable.returncode == exits.FAILURE, unreachable.stderr
    assert unreachable.stderr.count("\n") == 1, unreachable.stderr
    assert unreachable.stderr.startswith(
        "pairscreen: error: ccxt market source: cannot load the markets of binance ("
    )
    assert unreachable.stderr.rstrip().endswith("no 1h bars were synced. Try again later.")
