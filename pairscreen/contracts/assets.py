"""The universe's assets and their daily candles, as a market source returns them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

__all__ = ["ASSET_CLASSES", "Asset", "Candles", "PegConfig", "RowIssues"]

AssetClass = Literal[
    "crypto",
    "tokenized_equity",
    "tokenized_metal",
    "tokenized_treasury",
    "spot_metal",
    "equity",
    "etf",
    "index",
    "fx",
]


ASSET_CLASSES: tuple[str, ...] = get_args(AssetClass)


TOKENIZED_PREFIX = "tokenized_"  # only these classes claim a peg to something off-chain


# Default peg thresholds per asset class, in percent of drift (docs/api.md).
DEFAULT_PEG_THRESHOLD_PCT: Mapping[str, float] = {
    "tokenized_metal": 1.0,
    "tokenized_equity": 1.5,
    "tokenized_treasury": 0.5,
}


@dataclass(frozen=True)
class PegConfig:
    """How a tokenized asset's peg is checked: what it claims to track and where to look."""

    reference: str
    sources: tuple[str, ...]
    units_per_token: float = 1.0
    threshold_pct: float = 1.0


@dataclass(frozen=True)
class Asset:
    """One asset of the universe, as the universe file lists it."""

    ticker: str
    sector: str
    asset_class: str = "crypto"
    symbol: str = ""
    peg: PegConfig | None = None

    @property
    def is_tokenized(self) -> bool:
        """A token claiming a peg (``tokenized_*``); crypto, spot metals, equities, ETFs,
        indices and currencies have none."""
        return self.asset_class.startswith(TOKENIZED_PREFIX)

    @property
    def market_symbol(self) -> str:
        """The symbol the market-data source knows this asset by (the ticker by default)."""
        return self.symbol or self.ticker


ROW_EXAMPLES = 3  # rows not understood that RowIssues names one by one; the rest are counted


@dataclass(frozen=True)
class RowIssues:
    """Rows a market source read but could not use, counted per kind so that none is dropped
    without a word (``data sync`` names them per asset).

    ``unparseable``, ``conflicting`` and ``unreadable`` refuse the asset: a sync writes none
    of its rows, since a history with rows left out or chosen between is not the source's
    history. ``future`` and ``duplicate`` rows are harmless: left out or stored once, and
    named. A source that cannot say which rows it skipped leaves ``examples`` and ``origin``
    empty; its counts still decide.
    """

    future: int = 0  # dated after the last closed day asked for (not closed yet)
    duplicate: int = 0  # a day given again with the same values (stored once)
    unparseable: int = 0  # not understood: a bad date, close, volume or number of fields
    conflicting: int = 0  # a day given again with other values: which one is right is unknown
    unreadable: str = ""  # why nothing could be read (an empty file, its encoding, its header)
    examples: tuple[str, ...] = ()  # the first rows not understood, each with its line and why
    origin: str = ""  # where the rows came from, for a person (``BTC.csv``)

    def __add__(self, other: RowIssues) -> RowIssues:
        return RowIssues(
            self.future + other.future,
            self.duplicate + other.duplicate,
            self.unparseable + other.unparseable,
            self.conflicting + other.conflicting,
            self.unreadable or other.unreadable,
            (self.examples + other.examples)[:ROW_EXAMPLES],
            self.origin or other.origin,
        )

    def __bool__(self) -> bool:
        return bool(
            self.future or self.duplicate or self.unparseable or self.conflicting or self.unreadable
        )

    @property
    def refuses(self) -> bool:
        """Whether the asset's rows cannot be stored as a whole (nothing of it is written)."""
        return bool(self.unparseable or self.conflicting or self.unreadable)

    @property
    def not_understood(self) -> int:
        """Rows that refuse the asset: not understood, or a day given twice otherwise."""
        return self.unparseable + self.conflicting


@dataclass(frozen=True)
class Candles:
    """One asset's daily UTC history, oldest first.

    ``volume`` is the day's traded volume in the quote currency, so the volumes of two legs
    are comparable. It is NaN on a day the source reports no volume for (a CSV file without
    the column, an exchange that gives none): an unknown volume is never stored as 0, which
    would read as a market nobody trades.
    """

    ticker: str
    dates: np.ndarray  # datetime64[D], strictly increasing
    close: np.ndarray  # float64, > 0
    volume: np.ndarray  # float64, >= 0, or NaN where unknown
    # What the source skipped while reading these rows (a market source fills it in).
    issues: RowIssues = field(default_factory=RowIssues, compare=False)

    def __post_init__(self) -> None:
        n = len(self.dates)
        if len(self.close) != n or len(self.volume) != n:
            raise ValueError(f"{self.ticker}: dates, close and volume differ in length")
