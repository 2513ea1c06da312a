"""Market source ``ccxt``: daily candles from any exchange the ccxt library supports.

Needs the ``pairscreen[ccxt]`` extra; ccxt is imported only when the source is used, so the
plugin loads (and the other sources work) without it.

Options (the ``[plugins.ccxt_source]`` table; ``[market]`` for one more release)::

    [components]
    market_source = "ccxt"
    [plugins.ccxt_source]
    exchange = "binance"      # a ccxt exchange id (required)
    quote = "USDT"            # quote currency of assets whose symbol names none (default USDT)
    timeframe = "1d"          # pairscreen works on UTC daily candles: only "1d" is accepted
    history_days = 1200       # how far back the first sync of an asset goes
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
``Retry-After``. History comes in pages of ``fetch_ohlcv(symbol, "1d", since=ms,
limit=page_limit)`` until the wanted range is covered or the exchange has nothing more.

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
from datetime import date, timedelta
from typing import Any

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Candles, PluginOption, hookimpl

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
EPOCH = date(1970, 1, 1)


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
    def parse(cls, options: Mapping[str, Any]) -> CcxtOptions:
        exchange = options.get("exchange")
        if not isinstance(exchange, str) or not exchange:
            raise ValueError(
                'ccxt market source: set exchange = "<ccxt exchange id>" (e.g. "binance") '
                "in [plugins.ccxt_source]"
            )
        timeframe = options.get("timeframe", "1d")
        if timeframe != "1d":
            raise ValueError(
                f'ccxt market source: timeframe must be "1d" (pairscreen works on daily '
                f"candles), got {timeframe!r}"
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
        try:
            requests.call("loading markets", exchange.load_markets)
        except ccxt.BaseError as exc:
            raise ConnectionError(
                f"ccxt market source: cannot load the markets of {opts.exchange} "
                f"({type(exc).__name__}); no candles were synced. Try again later."
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
                rows = self._history(requests, exchange, symbol, first, last_day)
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
                    "ccxt %s: %s (%s) still fails after %d retries (%s); skipped until the "
                    "next sync",
                    opts.exchange,
                    asset.ticker,
                    symbol,
                    opts.max_retries,
                    type(exc).__name__,
                )
                continue
            # Listed but without a day in the range: an empty answer, not no answer (a sync
            # compares it with the stored days it asked for again).
            yield self._candles(asset.ticker, rows, opts)
        if network_failures and network_failures == attempted:
            raise ConnectionError(
                f"ccxt market source: {opts.exchange} failed for every asset (rate limited or "
                "unreachable); no candles were synced. Try again later."
            )

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
                if close is None or not math.isfinite(close) or close <= 0:
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
        days = sorted(rows)
        close = np.array([rows[d][0] for d in days], dtype=np.float64)
        volume = np.array([rows[d][1] for d in days], dtype=np.float64)
        if not opts.volume_is_quote:
            volume = volume * close
        return Candles(
            ticker=ticker, dates=np.array(days, dtype="datetime64[D]"), close=close, volume=volume
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
        PluginOption("timeframe", "1d", 'the candles\' timeframe; only "1d" is accepted'),
        PluginOption("history_days", 1200, "how far back the first sync of an asset goes"),
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
