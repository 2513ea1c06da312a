"""Market source ``ccxt``: daily candles, or bars of 4h, 1h or 15m, from any exchange the
ccxt library supports.

Needs the ``pairscreen[ccxt]`` extra; ccxt is imported only when the source is used, so the
plugin loads (and the other sources work) without it.

Options (the ``[plugins.ccxt_source]`` table; ``[market]`` for one more release)::

    [components]
    market_source = "ccxt"
    [plugins.ccxt_source]
    exchange = "binance"      # a ccxt exchange id (required)
    quote = "USDT"            # quote currency of assets whose symbol names none (default USDT)
    timeframe = "1d"          # follows the universe's [market] bar; leave it out (a value
                              # other than the bar is refused)
    history_days = 1200       # how far back (calendar days) the first sync of an asset goes
    page_limit = 1000         # candles asked for per request (exchanges may send fewer)
    volume_unit = "base"      # what the exchange's OHLCV volume counts: "base" or "quote"
                              # (``volume``, its former name, is still read)
    max_retries = 5           # retries of a request refused for rate limiting or a network error
    backoff_seconds = 1.0     # first retry delay; doubles each retry (at least Retry-After)
    [plugins.ccxt_source.exchange_config]  # passed to the ccxt exchange constructor as is: API
    # keys if the exchange needs them for market data, a proxy, ccxt "options", or "urls" for
    # a mirror (a secret option: pairscreen plugins does not show its values)

Symbols: an asset's ``symbol`` in the universe (``Asset.market_symbol``, the ticker by
default) is the exchange's unified ccxt symbol when it contains a slash (``"BTC/USDT"``,
``"PAXG/USDT"``), else the base currency, completed with ``/<quote>``.

What is stored:

* Closed days only. A day's candle is returned once the day is over (after 24:00 UTC) and
  never while it is still forming, even when ``until`` is today. Incremental syncs ask only
  for the days after the last stored one, so a partial candle stored once would never be
  corrected; leaving it out keeps every stored day final.
* Bars (``fetch_bars``, a universe whose ``[market] bar`` is 4h, 1h or 15m) by their close
  time: ccxt stamps a candle with its **open** time, so the bar stamped 13:00 of an hourly
  history is returned as the bar closing at 14:00 (docs/bar_sizes.md). A bar still forming at
  the service's clock is left out, as a forming day is. An exchange that does not offer the
  bar's timeframe (``exchange.timeframes``) is refused in one line before any request.
* Volume in the quote currency, like every pairscreen source: ccxt's OHLCV volume is the base
  volume on most exchanges, so the quote volume is that times the day's close (``volume =
  "quote"`` when the exchange already reports quote volume). A candle without a volume has an
  unknown volume (NaN, served as ``null``), never 0.
* Gaps stay gaps: a day the exchange has no candle for is missing, never filled in (the
  engine joins the legs of a pair by date).
* Candles with a missing or non-positive close are dropped with a warning.

Requests: ccxt's own rate limiter (``enableRateLimit``, on by default) spaces the calls; a
request refused anyway (``RateLimitExceeded``, ``DDoSProtection``: HTTP 429/418) or failing on
the network is retried after an exponential backoff that honours the exchange's
``Retry-After``. History comes in pages of ``fetch_ohlcv(symbol, timeframe, since=ms,
limit=page_limit)`` until the wanted range is covered or the exchange has nothing more; each
page starts after the newest candle of the one before (an exchange sends at most ~1000). For
bars, an empty page is a gap on an exchange that answers only the window after ``since``
(an outage longer than a page), not the end: the next page starts one page's span later
(the longest page the exchange has sent for the symbol, else ``page_limit`` bars), until
``since`` passes the last closed bar.

An asset the exchange does not list (delisted, misspelt: ``BadSymbol``) is skipped with a
warning, and so is one whose requests still fail after the retries; the other assets go on,
and the next sync asks for the skipped ones again. When the markets cannot be loaded, or
every listed asset failed on the network, the exchange is unreachable and the sync stops
with a ``ConnectionError``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Candles, PluginOption, hookimpl
from pairscreen.contracts.bars import DAILY, BarSize, bar_size

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
EPOCH = date(1970, 1, 1)
_First = TypeVar("_First")  # where an asset's history starts: a day, or an open time in ms
_Rows = TypeVar("_Rows")  # what a history returns per asset
_Key = TypeVar("_Key", date, int)  # a daily row's day, or a bar's close time in ms


def utc_today() -> date:
    """Today's UTC date: candles of this day and later are still forming."""
    return clock.today()


def day_ms(day: date) -> int:
    """Milliseconds since the epoch at 00:00 UTC of ``day``."""
    return (day - EPOCH).days * DAY_MS


def ms_day(ms: int) -> date:
    """The UTC day of a millisecond timestamp."""
    return EPOCH + timedelta(days=int(ms) // DAY_MS)


@dataclass(frozen=True)
class CcxtOptions:
    exchange: str
    quote: str = "USDT"
    history_days: int = 1200
    page_limit: int = 1000
    volume_is_quote: bool = False
    max_retries: int = 5
    backoff_seconds: float = 1.0
    exchange_config: Mapping[str, Any] | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any], bar: str = DAILY.name) -> CcxtOptions:
        """The source's options for a universe whose ``[market] bar`` is ``bar``."""
        exchange = options.get("exchange")
        if not isinstance(exchange, str) or not exchange:
            raise ValueError(
                'ccxt market source: set exchange = "<ccxt exchange id>" (e.g. "binance") '
                "in [plugins.ccxt_source]"
            )
        timeframe = options.get("timeframe", bar)
        if timeframe != bar:
            raise ValueError(
                f'ccxt market source: timeframe must be "{bar}", the universe\'s [market] bar '
                f"(leave timeframe out: it follows the bar), got {timeframe!r}"
            )
        volume = options.get("volume_unit", options.get("volume", "base"))
        if volume not in ("base", "quote"):
            raise ValueError(
                f'ccxt market source: volume_unit must be "base" or "quote", got {volume!r}'
            )
        config = options.get("exchange_config", {})
        if not isinstance(config, Mapping):
            raise ValueError("ccxt market source: exchange_config must be a table")
        try:
            parsed = cls(
                exchange=exchange,
                quote=str(options.get("quote", "USDT")),
                history_days=int(options.get("history_days", 1200)),
                page_limit=int(options.get("page_limit", 1000)),
                volume_is_quote=volume == "quote",
                max_retries=int(options.get("max_retries", 5)),
                backoff_seconds=float(options.get("backoff_seconds", 1.0)),
                exchange_config=dict(config),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"ccxt market source: bad option value ({exc})") from None
        if parsed.history_days < 1 or parsed.page_limit < 1 or parsed.max_retries < 0:
            raise ValueError(
                "ccxt market source: history_days and page_limit must be positive and "
                "max_retries not negative"
            )
        return parsed

    def symbol(self, asset: Asset) -> str:
        symbol = asset.market_symbol
        return symbol if "/" in symbol else f"{symbol}/{self.quote}"


def _import_ccxt() -> Any:
    try:
        import ccxt
    except ImportError:
        raise ValueError(
            "the ccxt market source needs the ccxt library: pip install 'pairscreen[ccxt]'"
        ) from None
    return ccxt


def make_exchange(options: CcxtOptions) -> Any:
    """The ccxt exchange object: rate limited, with the universe's ``exchange_config``."""
    ccxt = _import_ccxt()
    factory = getattr(ccxt, options.exchange, None)
    if factory is None or options.exchange not in ccxt.exchanges:
        raise ValueError(
            f"ccxt market source: {options.exchange!r} is not a ccxt exchange id "
            "(see ccxt.exchanges)"
        )
    return factory({"enableRateLimit": True, **dict(options.exchange_config or {})})


class _Requests:
    """Exchange calls with retries on rate limiting and transient network failures."""

    def __init__(self, ccxt: Any, exchange: Any, options: CcxtOptions):
        self.ccxt = ccxt
        self.exchange = exchange
        self.options = options

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        attempt = 0
        while True:
            try:
                return fn(*args, **kwargs)
            except self.ccxt.NetworkError as exc:  # includes RateLimitExceeded, DDoSProtection
                if attempt >= self.options.max_retries:
                    raise
                delay = max(self.options.backoff_seconds * 2**attempt, self._retry_after_seconds())
                attempt += 1
                log.warning(
                    "ccxt %s: %s failed (%s); retry %d of %d in %.2f s",
                    self.options.exchange,
                    what,
                    type(exc).__name__,
                    attempt,
                    self.options.max_retries,
                    delay,
                )
                time.sleep(delay)

    def _retry_after_seconds(self) -> float:
        headers = getattr(self.exchange, "last_response_headers", None) or {}
        try:
            value = float(headers.get("Retry-After", 0))
        except (TypeError, ValueError, AttributeError):
            return 0.0
        return value if math.isfinite(value) and value > 0 else 0.0


def offered_timeframe(exchange: Any, options: CcxtOptions, bar: str) -> None:
    """Refuse, in one line and before any request, an exchange that has no ``bar`` candles
    (ccxt lists an exchange's timeframes without asking it)."""
    timeframes = getattr(exchange, "timeframes", None) or {}
    if timeframes and bar not in timeframes:
        offered = ", ".join(str(t) for t in timeframes)
        raise ValueError(
            f"ccxt market source: {options.exchange} does not serve {bar} candles (its "
            f"timeframes: {offered}); choose another exchange or another [market] bar"
        )


class CcxtMarketSource:
    """The ``ccxt`` market-data source (options in the module docstring)."""

    name = "ccxt"

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        opts = CcxtOptions.parse(options)
        last_day = min(until, utc_today() - timedelta(days=1))  # closed days only
        wanted = []
        for asset in assets:
            after = since.get(asset.ticker)
            first = (
                after + timedelta(days=1)
                if after
                else last_day - timedelta(days=opts.history_days - 1)
            )
            if first <= last_day:
                wanted.append((asset, first))
        if not wanted:
            return
        ccxt = _import_ccxt()
        exchange = make_exchange(opts)
        requests = _Requests(ccxt, exchange, opts)

        def history(symbol: str, first: date) -> dict[date, tuple[float, float]]:
            return self._history(requests, exchange, symbol, first, last_day)

        for asset, rows in _each_listed(requests, wanted, "candles", history):
            yield self._candles(asset.ticker, rows, opts)

    def fetch_bars(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        bar: str,
        since: Mapping[str, datetime | None],
        until: datetime,
    ) -> Iterator[Candles]:
        """The bars of size ``bar`` closing after ``since[ticker]`` (``history_days`` back
        when None) and at or before ``until``, never one still forming at the service's
        clock; ``dates`` are close times (``datetime64[s]``, UTC)."""
        size = bar_size(bar)
        opts = CcxtOptions.parse(options, bar=size.name)
        ccxt = _import_ccxt()
        exchange = make_exchange(opts)
        offered_timeframe(exchange, opts, size.name)
        step = size.seconds * 1000
        last_close = 1000 * min(
            size.last_closed(until), size.last_closed(clock.now())
        )  # closed bars only
        wanted: list[tuple[Asset, int]] = []
        for asset in assets:
            after = since.get(asset.ticker)
            if after is None:
                first_open = last_close - opts.history_days * DAY_MS
            else:
                after_ms = int(after.timestamp() * 1000)
                first_open = after_ms - after_ms % step  # closes after ``after``
            if first_open + step <= last_close:
                wanted.append((asset, first_open))
        if not wanted:
            return
        requests = _Requests(ccxt, exchange, opts)
        history = _BarHistory(requests, exchange, size, last_close)
        for asset, rows in _each_listed(requests, wanted, f"{size.name} bars", history):
            yield self._bars(asset.ticker, rows, opts)

    @staticmethod
    def _history(
        requests: _Requests, exchange: Any, symbol: str, first: date, last: date
    ) -> dict[date, tuple[float, float]]:
        """Every candle of ``symbol`` from ``first`` to ``last`` (UTC days), page by page."""
        limit = requests.options.page_limit
        rows: dict[date, tuple[float, float]] = {}
        since_ms = day_ms(first)
        end_ms = day_ms(last)
        while since_ms <= end_ms:
            page = requests.call(
                f"candles of {symbol}",
                exchange.fetch_ohlcv,
                symbol,
                "1d",
                since=since_ms,
                limit=limit,
            )
            if not page:
                break
            newest = since_ms - 1
            for candle in page:
                stamp, close, volume = int(candle[0]), candle[4], candle[5]
                newest = max(newest, stamp)
                day = ms_day(stamp)
                if not first <= day <= last:
                    continue
                if _unusable(close):
                    log.warning(
                        "ccxt: %s on %s has no usable close (%r); day skipped", symbol, day, close
                    )
                    continue
                rows[day] = (float(close), math.nan if volume is None else float(volume))
            if newest < since_ms:  # the exchange went backwards: nothing newer to get
                break
            since_ms = day_ms(ms_day(newest)) + DAY_MS
        return rows

    @staticmethod
    def _candles(ticker: str, rows: dict[date, tuple[float, float]], opts: CcxtOptions) -> Candles:
        days, close, volume = _columns(rows, opts)
        return Candles(
            ticker=ticker, dates=np.array(days, dtype="datetime64[D]"), close=close, volume=volume
        )

    @staticmethod
    def _bars(ticker: str, rows: dict[int, tuple[float, float]], opts: CcxtOptions) -> Candles:
        """Bars keyed by close time (ms) as :class:`Candles` (volume in the quote currency)."""
        stamps, close, volume = _columns(rows, opts)
        seconds = np.array(stamps, dtype=np.int64) // 1000
        return Candles(
            ticker=ticker, dates=seconds.astype("datetime64[s]"), close=close, volume=volume
        )


def _columns(
    rows: Mapping[_Key, tuple[float, float]], opts: CcxtOptions
) -> tuple[list[_Key], np.ndarray, np.ndarray]:
    """Rows keyed by day or close time, sorted, as their keys, closes and volumes in the
    quote currency (a base volume times its close)."""
    keys = sorted(rows)
    close = np.array([rows[k][0] for k in keys], dtype=np.float64)
    volume = np.array([rows[k][1] for k in keys], dtype=np.float64)
    if not opts.volume_is_quote:
        volume = volume * close
    return keys, close, volume


def _unusable(close: float | None) -> bool:
    """A close the exchange gave that no price can be: missing, not finite, or not above 0."""
    return close is None or not math.isfinite(close) or close <= 0


@dataclass(frozen=True)
class _BarHistory:
    """One symbol's bars from a first open time to the last closed bar, page by page."""

    requests: _Requests
    exchange: Any
    size: BarSize
    last_close: int  # ms: the close of the newest bar wanted

    def __call__(self, symbol: str, first_open: int) -> dict[int, tuple[float, float]]:
        """Close time (ms) -> (close, base or quote volume) of every bar opening at or after
        ``first_open`` (ms) and closing at or before ``last_close``. ccxt stamps a candle with
        its open time; the bar is named by its close, ``size`` later. An empty page skips one
        page's span (a gap longer than a page), bounded by the last closed bar."""
        step = self.size.seconds * 1000
        limit = self.requests.options.page_limit
        longest = 0  # the longest page the exchange has sent: what an empty page skips
        rows: dict[int, tuple[float, float]] = {}
        since_ms = first_open
        while since_ms + step <= self.last_close:
            page = self.requests.call(
                f"{self.size.name} bars of {symbol}",
                self.exchange.fetch_ohlcv,
                symbol,
                self.size.name,
                since=since_ms,
                limit=limit,
            )
            if not page:  # nothing in this page's window: a gap, skipped a page at a time
                since_ms += (longest or limit) * step
                continue
            longest = max(longest, len(page))
            newest = since_ms - 1
            for candle in page:
                opened, close, volume = int(candle[0]), candle[4], candle[5]
                newest = max(newest, opened)
                closes_at = opened + step
                if opened < first_open or closes_at > self.last_close:
                    continue  # asked for before, or still forming
                if _unusable(close):
                    log.warning(
                        "ccxt: %s, the %s bar opening %s, has no usable close (%r); bar skipped",
                        symbol,
                        self.size.name,
                        datetime.fromtimestamp(opened / 1000, UTC).isoformat(),
                        close,
                    )
                    continue
                rows[closes_at] = (float(close), math.nan if volume is None else float(volume))
            if newest < since_ms:  # the exchange went backwards: nothing newer to get
                break
            since_ms = newest - newest % step + step
        return rows


def _each_listed(
    requests: _Requests,
    wanted: Sequence[tuple[Asset, _First]],
    what: str,
    history: Callable[[str, _First], _Rows],
) -> Iterator[tuple[Asset, _Rows]]:
    """``history(symbol, first)`` of each wanted asset the exchange lists, after loading its
    markets: an asset the exchange refuses, or that still fails after the retries, is skipped
    with a warning; the markets not loading, or every listed asset failing on the network,
    is the exchange being unreachable (:class:`ConnectionError`)."""
    ccxt, exchange, opts = requests.ccxt, requests.exchange, requests.options
    try:
        requests.call("loading markets", exchange.load_markets)
    except ccxt.BaseError as exc:
        raise ConnectionError(
            f"ccxt market source: cannot load the markets of {opts.exchange} "
            f"({type(exc).__name__}); no {what} were synced. Try again later."
        ) from exc
    attempted = network_failures = 0
    for asset, first in wanted:
        symbol = opts.symbol(asset)
        if symbol not in exchange.markets:
            log.warning(
                "ccxt %s: %s (%s) is not listed (delisted or misspelt symbol); skipped",
                opts.exchange,
                asset.ticker,
                symbol,
            )
            continue
        attempted += 1
        try:
            rows = history(symbol, first)
        except ccxt.BadSymbol as exc:
            log.warning(
                "ccxt %s: %s (%s) is refused by the exchange (%s); skipped",
                opts.exchange,
                asset.ticker,
                symbol,
                exc,
            )
            continue
        except ccxt.NetworkError as exc:
            network_failures += 1
            log.error(
                "ccxt %s: %s (%s) still fails after %d retries (%s); skipped until the next sync",
                opts.exchange,
                asset.ticker,
                symbol,
                opts.max_retries,
                type(exc).__name__,
            )
            continue
        # Listed but without a candle in the range: an empty answer, not no answer (a sync
        # compares it with the stored span it asked for again).
        yield asset, rows
    if network_failures and network_failures == attempted:
        raise ConnectionError(
            f"ccxt market source: {opts.exchange} failed for every asset (rate limited or "
            f"unreachable); no {what} were synced. Try again later."
        )


@hookimpl
def pairscreen_register_market_sources() -> list[CcxtMarketSource]:
    return [CcxtMarketSource()]


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.ccxt_source]`` table; a key left out is not given to the source, which
    applies the same defaults."""
    return [
        PluginOption("exchange", "", 'a ccxt exchange id, e.g. "binance" (required)'),
        PluginOption("quote", "USDT", "quote currency of assets whose symbol names none"),
        PluginOption(
            "timeframe",
            "1d",
            "the candles' timeframe: the universe's [market] bar (leave it out; another value "
            "is refused)",
        ),
        PluginOption(
            "history_days", 1200, "how far back (calendar days) the first sync of an asset goes"
        ),
        PluginOption("page_limit", 1000, "candles asked for per request"),
        PluginOption(
            "volume_unit", "base", 'what the exchange\'s OHLCV volume counts, "base" or "quote"'
        ),
        PluginOption("volume", "base", "the former name of volume_unit (read when it is unset)"),
        PluginOption(
            "max_retries", 5, "retries of a request refused for rate limiting or a network error"
        ),
        PluginOption(
            "backoff_seconds", 1.0, "first retry delay; doubles each retry (at least Retry-After)"
        ),
        PluginOption(
            "exchange_config",
            {},
            "passed to the ccxt exchange constructor as is (API keys, a proxy, ccxt options, "
            "urls of a mirror)",
            secret=True,
        ),
    ]
