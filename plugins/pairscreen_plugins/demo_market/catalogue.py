"""The demo market's catalogue: the assets, references and tokens, and the model's constants."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

import numpy as np

EPOCH = date(2019, 1, 1)  # the first simulated day; never changes
ANCHOR = date(2025, 1, 1)  # the catalogue's prices hold on this day
BLOCK = 256  # days per random block: a day's numbers depend on (seed, key, day) only
DEFAULT_SEED = 20250101
DEFAULT_DAYS = 1200
T_DF = 4.0

# Volatility regime: calm <-> turbulent, multiplying every shock.
CALM_MULT, TURBULENT_MULT = 0.8, 1.7
P_CALM_TO_TURBULENT, P_TURBULENT_TO_CALM = 1 / 160, 1 / 50


def phi_for_half_life(half_life: float) -> float:
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


def demo_reference_symbols() -> tuple[str, ...]:
    """Every reference symbol (gold, stocks, the NAV) the demo can price."""
    return tuple(REFERENCE_BY_SYMBOL)
