"""Market source ``demo``: a deterministic synthetic market built from a factor model.

Every price is synthetic; the demo universe labels itself "synthetic demo market".

The model
---------
Log prices of the crypto assets are a sum of

* a crypto **market factor** (daily returns with a slowly wandering drift, so it trends),
* a **group factor** per sector-like group (layer 1s, DeFi, memecoins ...), loading 1,
* an **idiosyncratic component** whose style decides how the asset's ratios behave:
  ``trend`` (momentum: returns with a wandering drift, so ratios trend, hurst > 0.5),
  ``revert`` (an Ornstein-Uhlenbeck level around the group, so a pair of two reverting
  assets of one group mean-reverts), ``bleed`` (reverting plus a steady emission drift:
  ratios with it look mean-reverting day to day but fail ADF) and ``flat`` (none).

All shocks are Student-t (4 degrees of freedom, unit variance) scaled by a two-state
volatility regime (calm / turbulent, a Markov chain) shared by the whole market. Quote
volumes scale with the asset's price level, react to the size of the day's move and to the
regime, and dip at weekends.

The references that tokenized assets track are synthetic too: a gold price ``XAU`` and US
stock prices (``AAPL``, ``MSTR`` ...) that move only on weekdays (their latent value keeps
evolving, so Monday absorbs the weekend), and a treasury fund NAV (``USTBNAV``) that accrues
about 4.8 % a year. A token's close is its reference times ``exp(premium)``: a small AR(1)
premium that mean-reverts while the reference trades and drifts a little (a random walk)
while it does not, plus rare short depeg shocks (2-4 %, decaying within days).

Determinism and stability
-------------------------
Every series is simulated forwards from a fixed epoch (:data:`EPOCH`, 2019-01-01) with
recursions that only look back, and every random number comes from a stream keyed by
``(seed, component, block)`` where a block is :data:`BLOCK` consecutive days. The numbers of
a day therefore depend on the seed and the day only: the same seed and end date give
identical candles, and generating one more day never changes the days before it. Levels
are anchored at a fixed day (:data:`ANCHOR`, 2025-01-01: the catalogue's price on that day),
which is also independent of the end date. A source call returns the last ``days`` days
(option, default 1,200) ending at ``until``; the recently listed asset starts
``listed_days`` before ``until`` (so it is always "new"), its prices taken from the same
stable series.

Hourly prices
-------------
:func:`demo_reference_at` and :func:`demo_price_at` derive intraday prices from the daily
series, for peg sampling. A daily close is the value at the end of that day's trading
session (stocks 14:30-21:00 UTC on weekdays, gold 00:00-22:00 UTC on weekdays, the NAV is
struck at 21:00 UTC every day, tokens and crypto trade 24/7 and close at 24:00 UTC). Inside
a session the price follows a Brownian bridge from the previous close to the day's close
whose noise is seeded by ``(seed, symbol, day)`` (so an hour's price is stable too);
outside a session it stays at the last close and ``as_of`` is that close's time, which is
what makes a weekend gold quote or a stock quote overnight stale for a peg check. A token's
intraday price is its reference's intraday price times ``exp(premium)``, the premium
interpolated linearly across the UTC day, so a token tracks its reference at every hour.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any, cast

import numpy as np

from pairscreen import Asset, Candles, hookimpl

log = logging.getLogger(__name__)

EPOCH = date(2019, 1, 1)  # the first simulated day; never changes
ANCHOR = date(2025, 1, 1)  # the catalogue's prices hold on this day
BLOCK = 256  # days per random block: a day's numbers depend on (seed, key, day) only
DEFAULT_SEED = 20250101
DEFAULT_DAYS = 1200
T_DF = 4.0

# Volatility regime: calm <-> turbulent, multiplying every shock.
CALM_MULT, TURBULENT_MULT = 0.8, 1.7
P_CALM_TO_TURBULENT, P_TURBULENT_TO_CALM = 1 / 160, 1 / 50


def _phi(half_life: float) -> float:
    return float(np.exp(-np.log(2.0) / half_life))


# ---------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CryptoSpec:
    """One synthetic crypto asset."""

    symbol: str
    group: str
    price: float  # close on ANCHOR
    volume: float  # quote-currency daily volume at the ANCHOR price level
    beta: float = 1.0  # loading on the market factor
    style: str = "trend"  # trend | revert | bleed | flat
    vol: float = 0.025  # daily idiosyncratic shock size
    half_life: float = 15.0  # revert / bleed: OU half-life in days
    drift_sd: float = 0.006  # trend: stationary sd of the wandering daily drift
    rw: float = 0.0  # revert / bleed: an extra random-walk shock size
    bleed: float = 0.0  # bleed: the steady daily log drift
    listed_days: int | None = None  # a recent listing: history starts this many days ago


@dataclass(frozen=True)
class ReferenceSpec:
    """A price a tokenized asset tracks: a stock, gold, or a fund NAV."""

    symbol: str
    kind: str  # stock | metal | nav
    price: float  # value on ANCHOR
    vol: float = 0.015  # daily latent shock size
    equity_beta: float = 1.0  # loading on the stock-market factor
    crypto_beta: float = 0.0  # loading on the crypto market factor
    drift: float = 0.0003  # mean daily log drift (nav: the accrual rate)
    drift_sd: float = 0.002  # sd of the wandering daily drift (momentum)


@dataclass(frozen=True)
class TokenSpec:
    """A tokenized asset: a reference times a small premium."""

    symbol: str
    reference: str
    volume: float
    premium_sd: float  # daily premium shock while the reference trades
    weekend_sd: float  # daily premium drift while it does not
    shock_rate: float  # depeg shocks per day
    shock_size: tuple[float, float]  # uniform range of a shock's size (log units)


_C = CryptoSpec
CRYPTO: tuple[CryptoSpec, ...] = (
    # majors: BTC is the market itself, ETH a trending follower
    _C("BTC", "majors", 93_500.0, 28e9, beta=1.0, style="flat", vol=0.004),
    _C("ETH", "majors", 3_350.0, 14e9, beta=1.15, vol=0.02, drift_sd=0.003),
    # layer 1s
    _C("SOL", "l1", 190.0, 3.2e9, beta=1.3, vol=0.03),
    _C("ADA", "l1", 0.86, 7.5e8, beta=1.2, style="revert", vol=0.036, half_life=8),
    _C("AVAX", "l1", 36.0, 4.5e8, beta=1.3, vol=0.028),
    _C("DOT", "l1", 6.7, 2.6e8, beta=1.2, style="revert", vol=0.034, half_life=9, rw=0.003),
    _C("NEAR", "l1", 5.1, 3.0e8, beta=1.25, vol=0.03),
    _C("ATOM", "l1", 6.5, 1.8e8, beta=1.2, style="revert", vol=0.036, half_life=7),
    _C("APT", "l1", 8.9, 2.2e8, beta=1.3, vol=0.032, drift_sd=0.0065),
    _C("SUI", "l1", 4.1, 9.0e8, beta=1.35, vol=0.035, drift_sd=0.007),
    _C("BERA", "l1", 6.8, 1.5e8, beta=1.4, vol=0.045, drift_sd=0.007, listed_days=120),
    # DeFi (CRV bleeds against its group: token emissions)
    _C("UNI", "defi", 13.3, 3.2e8, beta=1.3, style="revert", vol=0.036, half_life=8),
    _C("AAVE", "defi", 310.0, 3.5e8, beta=1.3, vol=0.028),
    _C("MKR", "defi", 1_520.0, 8.0e7, beta=1.2, vol=0.026),
    _C("CRV", "defi", 0.88, 2.0e8, beta=1.3, style="bleed", vol=0.02, half_life=8, bleed=-0.0025),
    _C("LDO", "defi", 1.8, 1.2e8, beta=1.35, vol=0.03),
    _C("COMP", "defi", 78.0, 4.5e7, beta=1.3, style="revert", vol=0.034, half_life=10),
    _C("SNX", "defi", 2.1, 4.0e7, beta=1.3, style="revert", vol=0.036, half_life=7, rw=0.002),
    _C("PENDLE", "defi", 5.2, 9.0e7, beta=1.4, vol=0.034, drift_sd=0.0065),
    # memecoins
    _C("DOGE", "memes", 0.32, 2.1e9, beta=1.5, vol=0.035, drift_sd=0.0065),
    _C("SHIB", "memes", 0.0000215, 3.0e8, beta=1.6, style="revert", vol=0.04, half_life=8),
    _C("PEPE", "memes", 0.0000190, 1.1e9, beta=1.7, vol=0.045, drift_sd=0.007),
    _C("FLOKI", "memes", 0.000185, 1.2e8, beta=1.6, style="revert", vol=0.04, half_life=7),
    _C("BONK", "memes", 0.0000310, 3.5e8, beta=1.7, vol=0.045, drift_sd=0.007),
    _C("WIF", "memes", 1.90, 4.5e8, beta=1.8, vol=0.05, drift_sd=0.0075),
    # exchange tokens (GT barely moves against its group: too narrow a range to trade)
    _C("BNB", "exchange", 705.0, 1.6e9, beta=0.8, vol=0.016, drift_sd=0.003),
    _C("OKB", "exchange", 52.0, 2.0e7, beta=0.75, style="revert", vol=0.03, half_life=8),
    _C("CRO", "exchange", 0.145, 3.5e7, beta=0.9, vol=0.025),
    _C("KCS", "exchange", 11.4, 6.0e6, beta=0.75, style="revert", vol=0.03, half_life=9),
    _C("GT", "exchange", 19.5, 1.5e7, beta=0.75, style="revert", vol=0.01, half_life=6),
    # layer 2s (STRK bleeds: token unlocks)
    _C("ARB", "l2", 0.76, 4.2e8, beta=1.35, style="revert", vol=0.036, half_life=8),
    _C("OP", "l2", 1.85, 2.2e8, beta=1.35, style="revert", vol=0.036, half_life=9),
    _C("POL", "l2", 0.47, 1.5e8, beta=1.35, style="revert", vol=0.034, half_life=8),
    _C("IMX", "l2", 1.28, 6.0e7, beta=1.4, vol=0.032),
    _C("STRK", "l2", 0.42, 9.0e7, beta=1.35, style="bleed", vol=0.02, half_life=8, bleed=-0.0025),
)

_R = ReferenceSpec
REFERENCES: tuple[ReferenceSpec, ...] = (
    _R("XAU", "metal", 2_625.0, vol=0.0085, equity_beta=0.0, drift=0.0003, drift_sd=0.0004),
    _R("AAPL", "stock", 250.0, vol=0.011, equity_beta=0.9, drift=0.0003),
    _R(
        "MSTR",
        "stock",
        330.0,
        vol=0.02,
        equity_beta=1.2,
        crypto_beta=1.35,
        drift=-0.0003,
        drift_sd=0.0025,
    ),
    _R(
        "COIN",
        "stock",
        260.0,
        vol=0.018,
        equity_beta=1.3,
        crypto_beta=0.75,
        drift=-0.0002,
        drift_sd=0.0025,
    ),
    _R("NVDA", "stock", 135.0, vol=0.02, equity_beta=1.5, drift=0.0006, drift_sd=0.003),
    _R("TSLA", "stock", 400.0, vol=0.024, equity_beta=1.6, drift=0.0002, drift_sd=0.003),
    _R("GOOGL", "stock", 190.0, vol=0.012, equity_beta=1.0, drift=0.0003),
    _R("USTBNAV", "nav", 10.60, vol=0.0, equity_beta=0.0, drift=0.048 / 365, drift_sd=0.0),
)

_T = TokenSpec
TOKENS: tuple[TokenSpec, ...] = (
    _T("PAXG", "XAU", 6.0e7, 0.0012, 0.0015, 1 / 240, (0.012, 0.022)),
    _T("XAUT", "XAU", 3.5e7, 0.0015, 0.0018, 1 / 200, (0.012, 0.025)),
    _T("AAPLx", "AAPL", 3.0e6, 0.0025, 0.004, 1 / 150, (0.02, 0.035)),
    _T("MSTRx", "MSTR", 6.0e6, 0.003, 0.005, 1 / 120, (0.02, 0.04)),
    _T("COINx", "COIN", 4.0e6, 0.003, 0.005, 1 / 120, (0.02, 0.04)),
    _T("NVDAx", "NVDA", 5.0e6, 0.0025, 0.0045, 1 / 150, (0.02, 0.035)),
    _T("TSLAx", "TSLA", 5.5e6, 0.003, 0.005, 1 / 140, (0.02, 0.04)),
    _T("GOOGLx", "GOOGL", 1.5e6, 0.0025, 0.004, 1 / 160, (0.02, 0.035)),
    _T("USTB", "USTBNAV", 1.2e6, 0.0004, 0.0004, 1 / 365, (0.006, 0.010)),
)

# Group factors: daily shock size and the sd of their wandering drift.
GROUPS: Mapping[str, tuple[float, float]] = {
    "majors": (0.0, 0.0),
    "l1": (0.012, 0.0012),
    "defi": (0.012, 0.0012),
    "memes": (0.018, 0.0015),
    "exchange": (0.008, 0.0008),
    "l2": (0.012, 0.0012),
}

# Stocks: the common equity factor (daily shock and drift sd).
EQUITY_VOL, EQUITY_DRIFT_SD = 0.009, 0.0005
MARKET_VOL, MARKET_DRIFT, MARKET_DRIFT_SD, MARKET_DRIFT_HALF_LIFE = 0.026, 0.0006, 0.0022, 90.0
TREND_HALF_LIFE = 45.0

CRYPTO_BY_SYMBOL: Mapping[str, CryptoSpec] = {c.symbol: c for c in CRYPTO}
REFERENCE_BY_SYMBOL: Mapping[str, ReferenceSpec] = {r.symbol: r for r in REFERENCES}
TOKEN_BY_SYMBOL: Mapping[str, TokenSpec] = {t.symbol: t for t in TOKENS}


def demo_symbols() -> tuple[str, ...]:
    """Every market symbol the demo source knows (crypto assets and tokens)."""
    return tuple(CRYPTO_BY_SYMBOL) + tuple(TOKEN_BY_SYMBOL)


def demo_reference_symbols() -> tuple[str, ...]:
    """Every reference symbol (gold, stocks, the NAV) the demo can price."""
    return tuple(REFERENCE_BY_SYMBOL)


# ---------------------------------------------------------------------------
# Stable random streams
# ---------------------------------------------------------------------------


def _key(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def _stream(seed: int, name: str, n: int, width: int = 1, kind: str = "t") -> np.ndarray:
    """``(n, width)`` random numbers whose row ``i`` depends only on ``(seed, name, i)``.

    Each block of :data:`BLOCK` days has its own generator, so lengthening ``n`` appends
    rows and never changes the earlier ones.
    """
    blocks = max(1, -(-n // BLOCK))
    parts = []
    for b in range(blocks):
        rng = np.random.default_rng([seed & 0xFFFFFFFF, _key(name), b])
        if kind == "t":
            parts.append(rng.standard_t(T_DF, (BLOCK, width)) / np.sqrt(T_DF / (T_DF - 2)))
        elif kind == "normal":
            parts.append(rng.standard_normal((BLOCK, width)))
        else:
            parts.append(rng.random((BLOCK, width)))
    return np.concatenate(parts)[:n]


def _ar1(shocks: np.ndarray, phi: np.ndarray | float) -> np.ndarray:
    """``x[t] = phi[t] * x[t-1] + shocks[t]`` along axis 0, from ``x[-1] = 0``.

    ``shocks`` is ``(n,)`` or ``(n, 1)``; ``phi`` (all > 0) a scalar or ``n`` values. Solved
    in short chunks with ``x[t] = P[t] * (x[start-1] + cumsum(shocks / P)[t])``, ``P`` the
    running product of ``phi`` in the chunk (short, so ``1 / P`` stays well inside float
    range), which is exact up to rounding and far faster than a Python loop.
    """
    e = np.asarray(shocks, dtype=float).reshape(len(shocks))
    p = np.broadcast_to(np.asarray(phi, dtype=float).reshape(-1), e.shape)
    out = np.empty_like(e)
    carry = 0.0
    for start in range(0, len(e), 32):
        prod = np.cumprod(p[start : start + 32])
        chunk = prod * (carry + np.cumsum(e[start : start + 32] / prod))
        out[start : start + 32] = chunk
        carry = float(chunk[-1])
    return out.reshape(np.shape(shocks))


def _days(end: date) -> int:
    return (end - EPOCH).days + 1


# ---------------------------------------------------------------------------
# The simulation
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _World:
    """Every simulated daily series from :data:`EPOCH` to an end day (read-only arrays)."""

    dates: np.ndarray  # datetime64[D]
    regime: np.ndarray  # the volatility multiplier: CALM_MULT or TURBULENT_MULT
    close: Mapping[str, np.ndarray]  # crypto, tokens and references by symbol
    volume: Mapping[str, np.ndarray]  # crypto and tokens
    log_return_sd: Mapping[str, float]  # typical daily |log return| scale per symbol
    premium: Mapping[str, np.ndarray]  # tokens: ln(token / reference)


def _world(seed: int, end: date) -> _World:
    """The world through at least ``end``: simulated to the end of ``end``'s block, so calls
    for nearby days share one cached simulation (the extra days change nothing before)."""
    n = max(_days(end), _days(ANCHOR))  # levels are anchored on ANCHOR: always simulate it
    return _world_for_length(int(seed), -(-n // BLOCK) * BLOCK)


@lru_cache(maxsize=8)
def _world_for_length(seed: int, n: int) -> _World:
    dates = np.datetime64(EPOCH, "D") + np.arange(n)
    weekday = (dates.astype("int64") + 3) % 7  # 0 = Monday (1970-01-01 was a Thursday)
    trading = weekday < 5
    anchor = (ANCHOR - EPOCH).days

    # Volatility regime: a two-state Markov chain.
    states = []
    turbulent = False
    for u in _stream(seed, "market/regime", n, kind="uniform")[:, 0].tolist():
        turbulent = u >= P_TURBULENT_TO_CALM if turbulent else u < P_CALM_TO_TURBULENT
        states.append(turbulent)
    regime = np.where(np.array(states), TURBULENT_MULT, CALM_MULT)

    # Crypto market factor with a wandering drift (momentum).
    m_shock = _stream(seed, "market/shock", n)[:, 0]
    m_drift_phi = _phi(MARKET_DRIFT_HALF_LIFE)
    m_drift = (
        MARKET_DRIFT
        + _ar1(
            (MARKET_DRIFT_SD * np.sqrt(1 - m_drift_phi**2))
            * _stream(seed, "market/drift", n, kind="normal"),
            m_drift_phi,
        )[:, 0]
    )
    market_ret = m_drift + MARKET_VOL * regime * m_shock
    market = np.cumsum(market_ret)

    trend_phi = _phi(TREND_HALF_LIFE)
    group_level: dict[str, np.ndarray] = {}
    for name, (vol, drift_sd) in GROUPS.items():
        if vol == 0.0:
            group_level[name] = np.zeros(n)
            continue
        drift_shock = _stream(seed, f"group/{name}/drift", n, 1, "normal")
        drift = _ar1(drift_sd * np.sqrt(1 - trend_phi**2) * drift_shock, trend_phi)[:, 0]
        shock = _stream(seed, f"group/{name}/shock", n)[:, 0]
        group_level[name] = np.cumsum(drift + vol * regime * shock)

    close: dict[str, np.ndarray] = {}
    volume: dict[str, np.ndarray] = {}
    scale: dict[str, float] = {}
    premium: dict[str, np.ndarray] = {}

    for spec in CRYPTO:
        idio = _idiosyncratic(seed, spec, n, regime, trend_phi)
        level = spec.beta * market + group_level[spec.group] + idio
        log_price = np.log(spec.price) + level - level[anchor]
        close[spec.symbol] = np.exp(log_price)
        group_vol = GROUPS[spec.group][0]
        scale[spec.symbol] = float(np.hypot(np.hypot(spec.beta * MARKET_VOL, group_vol), spec.vol))

    # References: the stock-market factor, gold, the NAV.
    e_drift = _ar1(
        EQUITY_DRIFT_SD * np.sqrt(1 - trend_phi**2) * _stream(seed, "equity/drift", n, 1, "normal"),
        trend_phi,
    )[:, 0]
    equity = np.cumsum(e_drift + EQUITY_VOL * regime**0.5 * _stream(seed, "equity/shock", n)[:, 0])
    last_trading = np.maximum.accumulate(np.where(trading, np.arange(n), 0))
    for ref in REFERENCES:
        if ref.kind == "nav":
            accrual = ref.drift * (np.arange(n) - anchor)
            close[ref.symbol] = ref.price * np.exp(accrual)
            scale[ref.symbol] = 0.0002
            continue
        drift = (
            ref.drift
            + _ar1(
                ref.drift_sd
                * np.sqrt(1 - trend_phi**2)
                * _stream(seed, f"ref/{ref.symbol}/drift", n, 1, "normal"),
                trend_phi,
            )[:, 0]
        )
        shock = _stream(seed, f"ref/{ref.symbol}/shock", n)[:, 0]
        latent = (
            np.cumsum(drift + ref.vol * shock) + ref.equity_beta * equity + ref.crypto_beta * market
        )
        # The reference moves only on weekdays: it shows its latent value of the last one.
        observed = latent[last_trading]
        close[ref.symbol] = ref.price * np.exp(observed - observed[anchor])
        scale[ref.symbol] = float(np.hypot(ref.vol, ref.equity_beta * EQUITY_VOL))

    for token in TOKENS:
        ref_spec = REFERENCE_BY_SYMBOL[token.reference]
        ref_trades = trading if ref_spec.kind != "nav" else np.ones(n, dtype=bool)
        z = _stream(seed, f"token/{token.symbol}/premium", n, 3, "uniform")
        noise = _stream(seed, f"token/{token.symbol}/noise", n)[:, 0]
        sd = np.where(ref_trades, token.premium_sd, token.weekend_sd)
        phi = np.where(ref_trades, 0.45, 1.0)  # pulled back while the reference trades
        base = _ar1((sd * noise)[:, None], phi[:, None])[:, 0]
        hit = z[:, 0] < token.shock_rate
        size = token.shock_size[0] + (token.shock_size[1] - token.shock_size[0]) * z[:, 1]
        sign = np.where(z[:, 2] < 0.5, -1.0, 1.0)
        shocks = _ar1((hit * size * sign)[:, None], 0.55)[:, 0]
        prem = base + shocks
        premium[token.symbol] = prem
        close[token.symbol] = close[token.reference] * np.exp(prem)
        scale[token.symbol] = max(scale[token.reference], 0.0005)

    for spec in CRYPTO:
        volume[spec.symbol] = _volume(
            seed,
            spec.symbol,
            close[spec.symbol],
            spec.price,
            spec.volume,
            scale[spec.symbol],
            regime,
            np.where(weekday >= 5, 0.72, 1.0),
        )
    for token in TOKENS:
        ref_spec = REFERENCE_BY_SYMBOL[token.reference]
        weekend = 0.35 if ref_spec.kind == "stock" else (0.6 if ref_spec.kind == "metal" else 0.5)
        anchor_price = float(close[token.symbol][anchor])
        volume[token.symbol] = _volume(
            seed,
            token.symbol,
            close[token.symbol],
            anchor_price,
            token.volume,
            scale[token.symbol],
            regime,
            np.where(weekday >= 5, weekend, 1.0),
        )

    for arr in (*close.values(), *volume.values(), *premium.values(), regime, dates):
        arr.setflags(write=False)
    return _World(dates, regime, close, volume, scale, premium)


def _idiosyncratic(
    seed: int, spec: CryptoSpec, n: int, regime: np.ndarray, trend_phi: float
) -> np.ndarray:
    shocks = _stream(seed, f"asset/{spec.symbol}/shock", n, 2) * np.sqrt(regime)[:, None]
    if spec.style == "flat":
        return np.cumsum(spec.vol * shocks[:, 0])
    if spec.style == "trend":
        drift = _ar1(
            spec.drift_sd
            * np.sqrt(1 - trend_phi**2)
            * _stream(seed, f"asset/{spec.symbol}/drift", n, 1, "normal"),
            trend_phi,
        )[:, 0]
        return np.cumsum(drift + spec.vol * shocks[:, 0])
    # revert / bleed: an OU level around the group, plus an optional random walk and drift
    level = _ar1((spec.vol * shocks[:, 0])[:, None], _phi(spec.half_life))[:, 0]
    walk = np.cumsum(spec.rw * shocks[:, 1]) if spec.rw else 0.0
    return level + walk + spec.bleed * np.arange(n)


def _volume(
    seed: int,
    symbol: str,
    close: np.ndarray,
    anchor_price: float,
    base: float,
    scale: float,
    regime: np.ndarray,
    weekly: np.ndarray,
) -> np.ndarray:
    """Quote volume: grows with the price level, with |return| and in turbulent regimes."""
    log_ret = np.abs(np.diff(np.log(close), prepend=np.log(close[0])))
    surprise = log_ret / max(scale, 1e-4)
    noise = _ar1(0.25 * _stream(seed, f"volume/{symbol}", len(close), 1, "normal"), 0.6)
    level = (close / anchor_price) ** 0.6
    out = (
        base
        * level
        * weekly
        * (0.55 + 0.3 * np.minimum(surprise, 6.0))
        * np.exp(noise[:, 0] + 0.35 * (regime - CALM_MULT))
    )
    # numpy types ufuncs on untyped-dtype arrays as Any
    return cast(np.ndarray, np.round(out, 2))


# ---------------------------------------------------------------------------
# Public helpers: daily and intraday references and prices
# ---------------------------------------------------------------------------


def demo_reference_daily(
    symbol: str, end: date, *, seed: int = DEFAULT_SEED, days: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Daily closes of a reference (``XAU``, ``AAPL`` ..., ``USTBNAV``) up to ``end``.

    Returns ``(dates, closes)`` (``datetime64[D]`` and float64), from :data:`EPOCH` or the
    last ``days`` days. Stocks and gold hold their Friday close through the weekend. Raises
    ``KeyError`` for a symbol the demo does not know.
    """
    if symbol not in REFERENCE_BY_SYMBOL:
        raise KeyError(f"the demo market has no reference {symbol!r}")
    world = _world(seed, end)
    n = _days(end)
    dates, values = world.dates[:n], world.close[symbol][:n]
    if days is not None:
        dates, values = dates[-days:], values[-days:]
    return dates.copy(), values.copy()


def demo_daily(
    symbol: str, end: date, *, seed: int = DEFAULT_SEED
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dates, close, volume)`` of a demo market symbol from :data:`EPOCH` to ``end``."""
    if symbol not in CRYPTO_BY_SYMBOL and symbol not in TOKEN_BY_SYMBOL:
        raise KeyError(f"the demo market has no symbol {symbol!r}")
    world = _world(seed, end)
    n = _days(end)
    return world.dates[:n].copy(), world.close[symbol][:n].copy(), world.volume[symbol][:n].copy()


# Trading sessions in hours (UTC) of the day a daily close belongs to; None: every day.
_SESSIONS: Mapping[str, tuple[float, float, bool]] = {
    "stock": (14.5, 21.0, True),  # (open, close, weekdays only)
    "metal": (0.0, 22.0, True),
    "nav": (21.0, 21.0, False),  # struck once a day
    "crypto": (0.0, 24.0, False),
}


def _session(kind: str, day: date) -> tuple[datetime, datetime] | None:
    start_h, end_h, weekdays_only = _SESSIONS[kind]
    if weekdays_only and day.weekday() >= 5:
        return None
    midnight = datetime.combine(day, time(0), UTC)
    return midnight + timedelta(hours=start_h), midnight + timedelta(hours=end_h)


def _bridge(seed: int, symbol: str, day: date, fraction: float, sd: float) -> float:
    """A Brownian bridge (0 at both ends) at ``fraction`` of a day's session, seeded per day."""
    steps = 96
    rng = np.random.default_rng([seed & 0xFFFFFFFF, _key(f"intraday/{symbol}"), day.toordinal()])
    walk = np.concatenate([[0.0], np.cumsum(rng.standard_normal(steps))]) * sd / np.sqrt(steps)
    grid = np.linspace(0.0, 1.0, steps + 1)
    bridge = walk - grid * walk[-1]
    return float(np.interp(fraction, grid, bridge))


def _close_on(world: _World, symbol: str, day: date) -> float:
    return float(world.close[symbol][(day - EPOCH).days])


def _aware(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise ValueError("demo market: pass a timezone-aware time (UTC), not a naive one")
    return at.astimezone(UTC)


def _intraday(seed: int, symbol: str, kind: str, at: datetime) -> tuple[float, datetime]:
    """(price, as_of) of a reference or crypto symbol at ``at`` from its daily closes."""
    at = _aware(at)
    day = at.date()
    world = _world(seed, day)
    # the last session that started at or before `at`
    for back in range(0, 10):
        d = day - timedelta(days=back)
        if d < EPOCH + timedelta(days=1):
            break
        session = _session(kind, d)
        if session is None or session[0] > at:
            continue
        opened, closed = session
        close = _close_on(world, symbol, d)
        if at >= closed:
            return close, closed
        prev_day = d - timedelta(days=1)
        while _session(kind, prev_day) is None:
            prev_day -= timedelta(days=1)
        prev = _close_on(world, symbol, prev_day)
        fraction = (at - opened) / (closed - opened)
        sd = world.log_return_sd.get(symbol, 0.0) * 0.5
        log_price = (
            np.log(prev)
            + fraction * (np.log(close) - np.log(prev))
            + _bridge(seed, symbol, d, fraction, sd)
        )
        return float(np.exp(log_price)), at
    raise ValueError(f"{at.isoformat()} is before the demo market's first day")


def demo_reference_at(
    symbol: str, at: datetime, *, seed: int = DEFAULT_SEED
) -> tuple[float, datetime]:
    """A reference's price at ``at`` and the time it is from (``as_of``).

    During its session (stocks 14:30-21:00 UTC weekdays, gold 00:00-22:00 UTC weekdays) the
    price is a bridge between daily closes and ``as_of == at``; outside it the last close
    and its time, so a weekend gold quote or an overnight stock quote is visibly old. The
    NAV is struck daily at 21:00 UTC. ``at`` must be timezone-aware.
    """
    spec = REFERENCE_BY_SYMBOL.get(symbol)
    if spec is None:
        raise KeyError(f"the demo market has no reference {symbol!r}")
    return _intraday(seed, symbol, spec.kind, at)


def demo_price_at(symbol: str, at: datetime, *, seed: int = DEFAULT_SEED) -> float:
    """A demo market symbol's price at ``at`` (it trades 24/7; daily close at 24:00 UTC).

    A token is its reference's intraday price times ``exp(premium)``, the premium moving
    linearly from the previous day's to the day's, so at midnight it equals the candle.
    """
    at = _aware(at)
    token = TOKEN_BY_SYMBOL.get(symbol)
    if token is None:
        if symbol not in CRYPTO_BY_SYMBOL:
            raise KeyError(f"the demo market has no symbol {symbol!r}")
        return _intraday(seed, symbol, "crypto", at)[0]
    ref_spec = REFERENCE_BY_SYMBOL[token.reference]
    ref_price, _ = _intraday(seed, token.reference, ref_spec.kind, at)
    day = at.date()
    world = _world(seed, day)
    i = (day - EPOCH).days
    fraction = (at - datetime.combine(day, time(0), UTC)) / timedelta(days=1)
    prem = world.premium[symbol]
    value = (1 - fraction) * prem[max(i - 1, 0)] + fraction * prem[i]
    return float(ref_price * np.exp(value))


# ---------------------------------------------------------------------------
# The market source
# ---------------------------------------------------------------------------


class DemoMarketSource:
    """The ``demo`` market-data source. Options: ``seed`` (int), ``days`` (history length)."""

    name = "demo"

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        seed = int(options.get("seed", DEFAULT_SEED))
        days = int(options.get("days", DEFAULT_DAYS))
        if days < 1:
            raise ValueError(f"demo market: days must be at least 1, got {days}")
        if until < EPOCH:
            return
        world = _world(seed, until)
        n = _days(until)
        for asset in assets:
            symbol = asset.market_symbol
            if symbol not in world.volume:
                log.warning(
                    "demo market: no synthetic series for %s (symbol %r); skipped",
                    asset.ticker,
                    symbol,
                )
                continue
            spec = CRYPTO_BY_SYMBOL.get(symbol)
            history = days
            if spec is not None and spec.listed_days is not None:
                history = min(history, spec.listed_days)
            first = max(0, n - history)
            last_stored = since.get(asset.ticker)
            if last_stored is not None:
                first = max(first, (last_stored - EPOCH).days + 1)
            if first >= n:
                continue
            yield Candles(
                ticker=asset.ticker,
                dates=world.dates[first:n].copy(),
                close=world.close[symbol][first:n].copy(),
                volume=world.volume[symbol][first:n].copy(),
            )


@hookimpl
def pairscreen_register_market_sources() -> list[DemoMarketSource]:
    return [DemoMarketSource()]
