"""The demo market's factor model: every synthetic daily and intraday price.
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

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import cast

import numpy as np

from pairscreen_plugins.demo_market.catalogue import (
    ANCHOR,
    BLOCK,
    CALM_MULT,
    CRYPTO,
    CRYPTO_BY_SYMBOL,
    DEFAULT_SEED,
    EPOCH,
    EQUITY_DRIFT_SD,
    EQUITY_VOL,
    GROUPS,
    MARKET_DRIFT,
    MARKET_DRIFT_HALF_LIFE,
    MARKET_DRIFT_SD,
    MARKET_VOL,
    P_CALM_TO_TURBULENT,
    P_TURBULENT_TO_CALM,
    REFERENCE_BY_SYMBOL,
    REFERENCES,
    TOKEN_BY_SYMBOL,
    TOKENS,
    TREND_HALF_LIFE,
    TURBULENT_MULT,
    CryptoSpec,
    phi_for_half_life,
)
from pairscreen_plugins.demo_market.streams import ar1, days_through, stream, stream_key

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


def simulate(seed: int, end: date) -> _World:
    """The world through at least ``end``: simulated to the end of ``end``'s block, so calls
    for nearby days share one cached simulation (the extra days change nothing before)."""
    # Levels are anchored on ANCHOR: always simulate it.
    n = max(days_through(end), days_through(ANCHOR))
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
    for u in stream(seed, "market/regime", n, kind="uniform")[:, 0].tolist():
        turbulent = u >= P_TURBULENT_TO_CALM if turbulent else u < P_CALM_TO_TURBULENT
        states.append(turbulent)
    regime = np.where(np.array(states), TURBULENT_MULT, CALM_MULT)

    # Crypto market factor with a wandering drift (momentum).
    m_shock = stream(seed, "market/shock", n)[:, 0]
    m_drift_phi = phi_for_half_life(MARKET_DRIFT_HALF_LIFE)
    m_drift = (
        MARKET_DRIFT
        + ar1(
            (MARKET_DRIFT_SD * np.sqrt(1 - m_drift_phi**2))
            * stream(seed, "market/drift", n, kind="normal"),
            m_drift_phi,
        )[:, 0]
    )
    market_ret = m_drift + MARKET_VOL * regime * m_shock
    market = np.cumsum(market_ret)

    trend_phi = phi_for_half_life(TREND_HALF_LIFE)
    group_level: dict[str, np.ndarray] = {}
    for name, (vol, drift_sd) in GROUPS.items():
        if vol == 0.0:
            group_level[name] = np.zeros(n)
            continue
        drift_shock = stream(seed, f"group/{name}/drift", n, 1, "normal")
        drift = ar1(drift_sd * np.sqrt(1 - trend_phi**2) * drift_shock, trend_phi)[:, 0]
        shock = stream(seed, f"group/{name}/shock", n)[:, 0]
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
    e_drift = ar1(
        EQUITY_DRIFT_SD * np.sqrt(1 - trend_phi**2) * stream(seed, "equity/drift", n, 1, "normal"),
        trend_phi,
    )[:, 0]
    equity = np.cumsum(e_drift + EQUITY_VOL * regime**0.5 * stream(seed, "equity/shock", n)[:, 0])
    last_trading = np.maximum.accumulate(np.where(trading, np.arange(n), 0))
    for ref in REFERENCES:
        if ref.kind == "nav":
            accrual = ref.drift * (np.arange(n) - anchor)
            close[ref.symbol] = ref.price * np.exp(accrual)
            scale[ref.symbol] = 0.0002
            continue
        drift = (
            ref.drift
            + ar1(
                ref.drift_sd
                * np.sqrt(1 - trend_phi**2)
                * stream(seed, f"ref/{ref.symbol}/drift", n, 1, "normal"),
                trend_phi,
            )[:, 0]
        )
        shock = stream(seed, f"ref/{ref.symbol}/shock", n)[:, 0]
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
        z = stream(seed, f"token/{token.symbol}/premium", n, 3, "uniform")
        noise = stream(seed, f"token/{token.symbol}/noise", n)[:, 0]
        sd = np.where(ref_trades, token.premium_sd, token.weekend_sd)
        phi = np.where(ref_trades, 0.45, 1.0)  # pulled back while the reference trades
        base = ar1((sd * noise)[:, None], phi[:, None])[:, 0]
        hit = z[:, 0] < token.shock_rate
        size = token.shock_size[0] + (token.shock_size[1] - token.shock_size[0]) * z[:, 1]
        sign = np.where(z[:, 2] < 0.5, -1.0, 1.0)
        shocks = ar1((hit * size * sign)[:, None], 0.55)[:, 0]
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
    shocks = stream(seed, f"asset/{spec.symbol}/shock", n, 2) * np.sqrt(regime)[:, None]
    if spec.style == "flat":
        return np.cumsum(spec.vol * shocks[:, 0])
    if spec.style == "trend":
        drift = ar1(
            spec.drift_sd
            * np.sqrt(1 - trend_phi**2)
            * stream(seed, f"asset/{spec.symbol}/drift", n, 1, "normal"),
            trend_phi,
        )[:, 0]
        return np.cumsum(drift + spec.vol * shocks[:, 0])
    # revert / bleed: an OU level around the group, plus an optional random walk and drift
    level = ar1((spec.vol * shocks[:, 0])[:, None], phi_for_half_life(spec.half_life))[:, 0]
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
    noise = ar1(0.25 * stream(seed, f"volume/{symbol}", len(close), 1, "normal"), 0.6)
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
    world = simulate(seed, end)
    n = days_through(end)
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
    world = simulate(seed, end)
    n = days_through(end)
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
    rng = np.random.default_rng(
        [seed & 0xFFFFFFFF, stream_key(f"intraday/{symbol}"), day.toordinal()]
    )
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
    world = simulate(seed, day)
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
    world = simulate(seed, day)
    i = (day - EPOCH).days
    fraction = (at - datetime.combine(day, time(0), UTC)) / timedelta(days=1)
    prem = world.premium[symbol]
    value = (1 - fraction) * prem[max(i - 1, 0)] + fraction * prem[i]
    return float(ref_price * np.exp(value))
