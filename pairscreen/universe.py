"""The universe: which assets exist, how they are grouped, and which pairs are screened.

It comes from a TOML file or, by default, the built-in demo universe.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pairscreen.contracts.assets import (
    ASSET_CLASSES,
    DEFAULT_PEG_THRESHOLD_PCT,
    TOKENIZED_PREFIX,
    Asset,
    PegConfig,
)
from pairscreen.contracts.bars import DAILY, bar_size
from pairscreen.deprecation import moved
from pairscreen.errors import BadRequest, NotFound

if TYPE_CHECKING:  # settings name the universe file; the universe never needs them at run time
    from pairscreen.config import Settings

TICKER_PATTERN = re.compile(r"^[A-Za-z0-9]{1,20}$")
DEFAULT_FILTER = "default"  # the screen filter used unless ``[components] filter`` names another
# The ``[components]`` table: each key chooses one component of the service. The first two
# were chosen elsewhere before (``[market] source``, ``[screen] filter``) and still are for
# one release, with a deprecation notice; the last three have settings that override them.
COMPONENT_KEYS: Mapping[str, str] = {
    "market_source": "[market] source",
    "filter": "[screen] filter",
    "strategy": "",
    "scorer": "",
    "chart_renderer": "",
}
# Calendar days an asset's last close may lag the current UTC day before its pairs are
# rejected as stale (``[staleness]`` overrides them per asset class). Crypto trades every day.
# The others pause at weekends and holidays: an exchange closed Friday to a Monday holiday
# has its last close on Friday and its next final on Tuesday at 24:00 UTC, so on Tuesday
# the last close is 4 days old and 5 when the source publishes a day late. London's spot
# metals also pause on Good Friday and Easter Monday (Thursday to Wednesday: 6); currencies
# trade five days a week with only 25 December and 1 January off (4).
DEFAULT_STALENESS_DAYS: Mapping[str, int] = {
    "crypto": 2,
    "tokenized_equity": 5,
    "tokenized_metal": 5,
    "tokenized_treasury": 5,
    "spot_metal": 6,
    "equity": 5,
    "etf": 5,
    "index": 5,
    "fx": 4,
}
# A day-over-day close move above this many percent is stored but named as a warning by
# ``data sync`` (``[move_limits]`` overrides it per asset class): a move that large is more
# often a bad row or a spliced history than a market.
DEFAULT_MOVE_LIMIT_PCT = 25.0
DEFAULT_MOVE_LIMITS_PCT: Mapping[str, float] = {
    **{name: DEFAULT_MOVE_LIMIT_PCT for name in ASSET_CLASSES},
    "crypto": 60.0,
}


class UniverseError(ValueError):
    """The universe file is malformed; the message names the entry and the fix."""


MAX_SWAP_SLIPPAGE = 0.5  # a swap's slippage and impact together never cost more than half


@dataclass(frozen=True)
class SwapCosts:
    """``[costs]``: what a swap costs beyond the strategy's fee, in basis points per asset.

    A swap sells one leg and buys the other, so it pays both legs' slippage. Each leg's is
    its own ``[costs.asset]`` entry, else its class's ``[costs.asset_class]`` entry, else
    ``slippage_bps``. With ``[costs.impact]`` a leg also pays ``coefficient x trade_size /
    the day's quote volume`` (nothing on a day without a known volume). Zero by default.
    """

    slippage_bps: float = 0.0
    by_class: Mapping[str, float] = field(default_factory=dict)
    by_asset: Mapping[str, float] = field(default_factory=dict)
    impact_trade_size: float = 0.0
    impact_coefficient: float = 0.0

    def slippage(self, asset: Asset) -> float:
        """The leg's slippage per swap, as a fraction (bps / 10,000)."""
        bps = self.by_asset.get(
            asset.ticker, self.by_class.get(asset.asset_class, self.slippage_bps)
        )
        return bps / 10_000.0

    @property
    def has_impact(self) -> bool:
        return self.impact_trade_size > 0 and self.impact_coefficient > 0

    @property
    def is_zero(self) -> bool:
        """Nothing beyond the fee: the backtest is exactly the fee-only one."""
        return (
            self.slippage_bps == 0
            and not any(self.by_class.values())
            and not any(self.by_asset.values())
            and not self.has_impact
        )


@dataclass(frozen=True)
class Universe:
    """The assets, the market-data source with its options, and the screened pairs."""

    assets: tuple[Asset, ...]
    market_source: str
    market_options: Mapping[str, Any] = field(default_factory=dict)
    cross_pairs: tuple[tuple[str, str], ...] = ()
    # ``[pairs] all = true``: every pair of assets, whatever their sectors
    all_pairs: bool = False
    # ``[pairs] cross_sectors``: every pair with one leg in each of two named sectors
    cross_sectors: tuple[tuple[str, str], ...] = ()
    label: str = ""  # e.g. "synthetic demo market"; shown wherever a person sees the data
    # ``[peg_sources.<name>]`` tables: each peg reference source's options (paths resolved)
    peg_source_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # ``[components] filter``: the screen filter's name; ``[screen]``: the thresholds set
    # for it (checked against the filter's own when the plugins load, see
    # ``pairscreen.engine.filtering``)
    screen_filter: str = DEFAULT_FILTER
    screen_thresholds: Mapping[str, float] = field(default_factory=dict)
    # ``[staleness]``: days a last close may lag today, per asset class (defaults filled in)
    staleness: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_STALENESS_DAYS))
    # ``[costs]``: slippage per asset class or asset, and the optional impact
    costs: SwapCosts = field(default_factory=SwapCosts)
    # ``[plugins.<name>]`` tables: each plugin's own options (checked against the options the
    # plugin declares when the plugins load)
    plugin_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # ``[move_limits]``: the day-over-day move, in percent, above which a sync warns
    move_limits: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MOVE_LIMITS_PCT))
    # ``[components]`` strategy, scorer and chart_renderer ("": not chosen; the settings
    # override them and fall back to the built-ins, see ``pairscreen.component_choice``)
    strategy: str = ""
    scorer: str = ""
    chart_renderer: str = ""
    # ``[market] bar``: the bar size its market is read and stored at ("1d", "4h", "1h",
    # "15m"; see ``pairscreen.contracts.bars``).
    bar: str = DAILY.name
    # ``[screen] window_days`` and ``backtest_days``: the universe's own spans of time (days,
    # whatever the bar), None / () when it keeps the service's
    # (``pairscreen.screening.spans`` resolves them with the settings)
    window_days: int | None = None
    backtest_days: tuple[int, ...] = ()
    # The file it was read from (None when built in code): relative paths in a component's
    # options are relative to its folder
    file: Path | None = field(default=None, compare=False)
    # Lookups built by __post_init__ (not constructor arguments, not part of equality).
    _by_ticker: dict[str, Asset] = field(init=False, repr=False, compare=False)
    _by_lower: dict[str, Asset] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_ticker", {a.ticker: a for a in self.assets})
        object.__setattr__(self, "_by_lower", _unique_lower(self.assets))

    @property
    def tickers(self) -> tuple[str, ...]:
        return tuple(a.ticker for a in self.assets)

    def asset(self, ticker: str) -> Asset:
        return self._by_ticker[ticker]

    def pair(self, a: str, b: str) -> tuple[Asset, Asset]:
        """The assets of the pair ``a``/``b`` as a caller wrote it: the one pair resolver of the
        service (the API's pair endpoints and watchlist, the CLI's watchlist). Each ticker is
        resolved like :meth:`resolve` (surrounding spaces ignored); ``NotFound`` names an
        unknown one, ``BadRequest`` a pair of one asset."""
        legs = []
        for given in (a, b):
            asset = self.resolve(given.strip())
            if asset is None:
                raise NotFound(f"Unknown ticker {given!r}. Every ticker is listed in /assets.")
            legs.append(asset)
        if legs[0].ticker == legs[1].ticker:
            raise BadRequest(f"Both legs are {legs[0].ticker}; a pair needs two different assets.")
        return legs[0], legs[1]

    def resolve(self, ticker: str) -> Asset | None:
        """The asset for ``ticker``: exact match, else a unique case-insensitive match."""
        exact = self._by_ticker.get(ticker)
        if exact is not None:
            return exact
        return self._by_lower.get(ticker.lower())

    def staleness_days(self, asset: Asset) -> int:
        """How many days ``asset``'s last close may lag the current UTC day."""
        return self.staleness.get(asset.asset_class, DEFAULT_STALENESS_DAYS["crypto"])

    def move_limit_pct(self, asset: Asset) -> float:
        """The day-over-day close move, in percent, above which ``data sync`` warns."""
        return self.move_limits.get(asset.asset_class, DEFAULT_MOVE_LIMIT_PCT)

    def screened_pairs(self) -> list[tuple[Asset, Asset]]:
        """Every screened pair as assets, in :meth:`screened_pair_indices` order."""
        ia, ib = self.screened_pair_indices()
        return [
            (self.assets[i], self.assets[j]) for i, j in zip(ia.tolist(), ib.tolist(), strict=True)
        ]

    def screened_pair_indices(self) -> tuple[np.ndarray, np.ndarray]:
        """The screened pairs as indices into ``assets`` (legs A and B), canonical order.

        Every same-sector pair (or every pair at all with ``all_pairs``) and every pair across
        the ``cross_sectors`` in the universe's asset order (A listed before B), then the
        explicit ``cross_pairs`` not already screened, each as written. Built as index arrays
        so that two million pairs take no Python loop.
        """
        n = len(self.assets)
        ia, ib = np.triu_indices(n, 1)
        if not self.all_pairs:
            keep = self._by_sector(ia, ib)
            ia, ib = ia[keep], ib[keep]
        index = {a.ticker: k for k, a in enumerate(self.assets)}
        extra: dict[tuple[int, int], tuple[int, int]] = {}  # unordered key -> as written
        for ta, tb in self.cross_pairs:
            i, j = index[ta], index[tb]
            key = (min(i, j), max(i, j))
            if key in extra or (self.all_pairs or self._by_sector(np.array([i]), np.array([j]))[0]):
                continue
            extra[key] = (i, j)
        written = np.array(list(extra.values()), dtype=ia.dtype).reshape(-1, 2)
        return np.concatenate([ia, written[:, 0]]), np.concatenate([ib, written[:, 1]])

    def _by_sector(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Whether each pair is screened for its sectors: the same sector, or two sectors
        the ``cross_sectors`` cross."""
        names = [a.sector for a in self.assets]
        ids = {name: k for k, name in enumerate(dict.fromkeys(names))}
        sector = np.array([ids[name] for name in names], dtype=np.intp)
        sa, sb = sector[ia], sector[ib]
        keep: np.ndarray = sa == sb
        for first, second in self.cross_sectors:
            x, y = ids.get(first, -1), ids.get(second, -1)
            keep |= ((sa == x) & (sb == y)) | ((sa == y) & (sb == x))
        return keep


def pair_sector(a: Asset, b: Asset) -> str:
    """The sector label of a pair: the shared sector, or ``"<sector A>/<sector B>"``."""
    return a.sector if a.sector == b.sector else f"{a.sector}/{b.sector}"


def _unique_lower(assets: Iterable[Asset]) -> dict[str, Asset]:
    groups: dict[str, list[Asset]] = {}
    for a in assets:
        groups.setdefault(a.ticker.lower(), []).append(a)
    return {k: v[0] for k, v in groups.items() if len(v) == 1}


def parse_asset(entry: Mapping[str, Any], where: str) -> Asset:
    """One ``[[asset]]`` table as an :class:`Asset`, with errors that say what to fix."""
    ticker = entry.get("ticker")
    if not isinstance(ticker, str) or not TICKER_PATTERN.match(ticker):
        raise UniverseError(f"{where}: ticker must be 1-20 letters or digits, got {ticker!r}")
    sector = entry.get("sector")
    if not isinstance(sector, str) or not sector:
        raise UniverseError(f"{where} ({ticker}): sector is required")
    asset_class = entry.get("asset_class", "crypto")
    if asset_class not in ASSET_CLASSES:
        raise UniverseError(
            f"{where} ({ticker}): asset_class must be one of {', '.join(ASSET_CLASSES)}"
        )
    peg = None
    peg_entry = entry.get("peg")
    if peg_entry is not None and not asset_class.startswith(TOKENIZED_PREFIX):
        raise UniverseError(
            f"{where} ({ticker}): only tokenized assets (asset_class tokenized_*) have a peg; "
            f"{asset_class} has none"
        )
    if peg_entry is not None:
        if not isinstance(peg_entry, Mapping) or "reference" not in peg_entry:
            raise UniverseError(f"{where} ({ticker}): peg needs at least a reference")
        peg = PegConfig(
            reference=str(peg_entry["reference"]),
            sources=tuple(peg_entry.get("sources", ())),
            units_per_token=float(peg_entry.get("units_per_token", 1.0)),
            threshold_pct=float(
                peg_entry.get("threshold_pct", DEFAULT_PEG_THRESHOLD_PCT.get(asset_class, 1.0))
            ),
        )
    return Asset(
        ticker=ticker,
        sector=sector,
        asset_class=asset_class,
        symbol=str(entry.get("symbol", "")),
        peg=peg,
    )


def load_universe_file(path: Path, *, market_source: str = "") -> Universe:
    """Read a universe TOML file; relative paths in ``[market]`` are relative to the file.

    ``market_source`` is the one a setting chooses (``PAIRSCREEN_MARKET_SOURCE``): the file
    need not name one then, and the setting's wins over the file's where the plugins load."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UniverseError(f"universe file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise UniverseError(f"universe file {path} is not valid TOML: {exc}") from None
    chosen = parse_components(data, path)  # first: it takes the former keys out of their tables
    market = dict(data.get("market", {}))
    bar = parse_bar(market.pop("bar", DAILY.name), f"{path}: [market]")
    if market_source:
        chosen.setdefault("market_source", market_source)
    if "market_source" not in chosen:
        raise UniverseError(
            f'{path}: [components] needs market_source = "<market-data source name>"'
        )
    resolve_paths(market, path)
    peg_sources: dict[str, dict[str, Any]] = {}
    for name, table in data.get("peg_sources", {}).items():
        if not isinstance(table, Mapping):
            raise UniverseError(f"{path}: [peg_sources.{name}] must be a table of options")
        peg_sources[name] = resolve_paths(dict(table), path)
    entries = data.get("asset", [])
    assets = tuple(parse_asset(e, f"{path}: asset #{i + 1}") for i, e in enumerate(entries))
    if not assets:
        raise UniverseError(f"{path}: no [[asset]] entries")
    tickers = [a.ticker for a in assets]
    duplicates = sorted({t for t in tickers if tickers.count(t) > 1})
    if duplicates:
        raise UniverseError(f"{path}: duplicate tickers {', '.join(duplicates)}")
    pairs_table = data.get("pairs", {})
    if not isinstance(pairs_table, Mapping):
        raise UniverseError(f"{path}: [pairs] must be a table")
    cross: list[tuple[str, str]] = []
    for pair in pairs_table.get("cross", []):
        if len(pair) != 2 or any(t not in tickers for t in pair) or pair[0] == pair[1]:
            raise UniverseError(f"{path}: cross pair {pair!r} must name two different assets")
        cross.append((str(pair[0]), str(pair[1])))
    all_pairs = pairs_table.get("all", False)
    if not isinstance(all_pairs, bool):
        raise UniverseError(f"{path}: [pairs] all must be true or false, got {all_pairs!r}")
    sectors = {a.sector for a in assets}
    cross_sectors: list[tuple[str, str]] = []
    for entry in pairs_table.get("cross_sectors", []):
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or entry[0] == entry[1]
            or any(s not in sectors for s in entry)
        ):
            raise UniverseError(
                f"{path}: [pairs] cross_sectors entry {entry!r} must name two different "
                f"sectors of the universe (its sectors: {', '.join(sorted(sectors))})"
            )
        cross_sectors.append((str(entry[0]), str(entry[1])))
    spans, screen_table = parse_screen_spans(data.get("screen", {}), f"{path}: [screen]")
    _, screen_thresholds = parse_screen(screen_table, f"{path}: [screen]")
    staleness = parse_staleness(data.get("staleness", {}), f"{path}: [staleness]")
    costs = parse_costs(data.get("costs", {}), tickers, f"{path}: [costs]")
    plugin_options = parse_plugin_tables(data.get("plugins", {}), f"{path}: [plugins]")
    move_limits = parse_move_limits(data.get("move_limits", {}), f"{path}: [move_limits]")
    return Universe(
        assets=assets,
        market_source=chosen["market_source"],
        market_options=market,
        cross_pairs=tuple(cross),
        all_pairs=all_pairs,
        cross_sectors=tuple(cross_sectors),
        label=str(data.get("label", "")),
        peg_source_options=peg_sources,
        screen_filter=chosen.get("filter", DEFAULT_FILTER),
        screen_thresholds=screen_thresholds,
        staleness=staleness,
        costs=costs,
        plugin_options=plugin_options,
        move_limits=move_limits,
        strategy=chosen.get("strategy", ""),
        scorer=chosen.get("scorer", ""),
        chart_renderer=chosen.get("chart_renderer", ""),
        bar=bar,
        window_days=spans.window_days,
        backtest_days=spans.backtest_days,
        file=path,
    )


def parse_bar(value: object, where: str) -> str:
    """``[market] bar``: the name of a bar size (``"1d"`` when the key is absent)."""
    try:
        return bar_size(value).name  # type: ignore[arg-type]  # refused when not a name
    except ValueError as exc:
        raise UniverseError(f"{where}: {exc}") from None


def parse_components(data: dict[str, Any], path: Path) -> dict[str, str]:
    """The ``[components]`` choices, with the former places (``[market] source``,
    ``[screen] filter``) taken out of their tables and accepted with a deprecation notice.

    A component chosen in both places is refused: which one would win is not obvious.
    """
    table = data.get("components", {})
    if not isinstance(table, Mapping):
        raise UniverseError(f"{path}: [components] must be a table of component = name")
    chosen: dict[str, str] = {}
    for key, value in table.items():
        if key not in COMPONENT_KEYS:
            raise UniverseError(
                f"{path}: [components] {key}: not a component (one of {', '.join(COMPONENT_KEYS)})"
            )
        if not isinstance(value, str) or not value:
            raise UniverseError(f"{path}: [components] {key} must be a name, got {value!r}")
        chosen[key] = value
    for key, (section, old) in (
        ("market_source", ("market", "source")),
        ("filter", ("screen", "filter")),
    ):
        former = data.get(section)
        if not isinstance(former, dict) or old not in former:
            continue
        value = former.pop(old)
        if key in chosen:
            raise UniverseError(
                f"{path}: [{section}] {old} and [components] {key} both choose the "
                f"{key.replace('_', ' ')}; keep only [components] {key}"
            )
        if not isinstance(value, str) or not value:
            raise UniverseError(f"{path}: [{section}] {old} must be a name, got {value!r}")
        moved(str(path), f"[{section}] {old}", f"[components] {key}")
        chosen[key] = value
    return chosen


def parse_costs(table: object, tickers: list[str], where: str) -> SwapCosts:
    """The ``[costs]`` table: ``slippage_bps``, ``[costs.asset_class]``, ``[costs.asset]``
    (basis points, at least 0) and ``[costs.impact]`` (``trade_size``, ``coefficient``)."""
    if not isinstance(table, Mapping):
        raise UniverseError(f"{where} must be a table")
    options = dict(table)

    def number(value: object, key: str) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(float(value)) or float(value) < 0:  # type: ignore[arg-type]
            raise UniverseError(f"{where}: {key} must be a number of at least 0, got {value!r}")
        return float(value)  # type: ignore[arg-type]

    def bps_table(name: str, keys: Iterable[str], kind: str) -> dict[str, float]:
        sub = options.pop(name, {})
        if not isinstance(sub, Mapping):
            raise UniverseError(f"{where}: {name} must be a table of {kind} = basis points")
        known = set(keys)
        out: dict[str, float] = {}
        for key, value in sub.items():
            if key not in known:
                raise UniverseError(
                    f"{where}: {name}.{key}: not a {kind} of the universe "
                    f"(one of {', '.join(sorted(known))})"
                )
            out[key] = number(value, f"{name}.{key}")
        return out

    by_class = bps_table("asset_class", ASSET_CLASSES, "asset class")
    by_asset = bps_table("asset", tickers, "ticker")
    impact = options.pop("impact", {})
    if not isinstance(impact, Mapping):
        raise UniverseError(f"{where}: impact must be a table (trade_size, coefficient)")
    impact = dict(impact)
    size = number(impact.pop("trade_size", 0.0), "impact.trade_size")
    coefficient = number(impact.pop("coefficient", 0.0), "impact.coefficient")
    slippage = number(options.pop("slippage_bps", 0.0), "slippage_bps")
    unknown = sorted(options) + [f"impact.{k}" for k in sorted(impact)]
    if unknown:
        raise UniverseError(
            f"{where}: unknown key {', '.join(unknown)} (known: slippage_bps, asset_class, "
            "asset, impact.trade_size, impact.coefficient)"
        )
    return SwapCosts(slippage, by_class, by_asset, size, coefficient)


def parse_plugin_tables(table: object, where: str) -> dict[str, dict[str, Any]]:
    """The ``[plugins.<name>]`` tables; whether each names a loaded plugin and its declared
    options is known once the plugins load."""
    if not isinstance(table, Mapping):
        raise UniverseError(f"{where} must hold one table per plugin, [plugins.<name>]")
    tables: dict[str, dict[str, Any]] = {}
    for name, options in table.items():
        if not isinstance(options, Mapping):
            raise UniverseError(f'{where}: plugins.{name} must be a table, [plugins."{name}"]')
        tables[str(name)] = dict(options)
    return tables


@dataclass(frozen=True)
class ScreenSpans:
    """A universe's ``[screen]`` spans of time, in days (None / () when not set)."""

    window_days: int | None = None
    backtest_days: tuple[int, ...] = ()


# ``min_history_days`` is not among them: it is a threshold of the filter (and, for an
# intraday universe, its core minimum too: ``pairscreen.screening.spans``)
SPAN_KEYS = ("window_days", "backtest_days")


def parse_screen_spans(table: object, where: str) -> tuple[ScreenSpans, object]:
    """The spans of a universe's ``[screen]`` table (``window_days``: whole days;
    ``backtest_days``: a list of whole days, the longest the screen's own), and the table
    without them (the filter and its thresholds)."""
    if not isinstance(table, Mapping):
        return ScreenSpans(), table
    rest = {k: v for k, v in table.items() if k not in SPAN_KEYS}

    def whole_days(key: str, value: object, least: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise UniverseError(
                f"{where}: {key} must be whole days, at least {least}, got {value!r}"
            )
        return value

    window = table.get("window_days")
    backtests = table.get("backtest_days", [])
    if not isinstance(backtests, list) or (not backtests and "backtest_days" in table):
        raise UniverseError(
            f"{where}: backtest_days must be a list of whole days, e.g. [7, 14, 30], "
            f"got {backtests!r}"
        )
    days = tuple(whole_days("backtest_days", d, 1) for d in backtests)
    if len(set(days)) != len(days):
        raise UniverseError(f"{where}: backtest_days names a span twice: {list(days)}")
    spans = ScreenSpans(None if window is None else whole_days("window_days", window, 2), days)
    return spans, rest


def parse_screen(table: object, where: str) -> tuple[str, dict[str, float]]:
    """A ``[screen]`` table: the filter's name and the numbers set for its thresholds.

    Only the shape is checked here; whether each key is a threshold of the chosen filter is
    known once the plugins are loaded. A universe file names its filter in ``[components]``
    (:func:`parse_components` takes a former ``filter`` key out first); a rule file of
    ``evaluate --rules`` names it here.
    """
    if not isinstance(table, Mapping):
        raise UniverseError(f"{where} must be a table")
    options = dict(table)
    name = options.pop("filter", DEFAULT_FILTER)
    if not isinstance(name, str) or not name:
        raise UniverseError(f'{where}: filter must be a filter name, e.g. "{DEFAULT_FILTER}"')
    thresholds: dict[str, float] = {}
    for key, value in options.items():
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if not is_number or not math.isfinite(value):
            raise UniverseError(f"{where}: {key} must be a number, got {value!r}")
        thresholds[key] = value
    return name, thresholds


def parse_staleness(table: object, where: str) -> dict[str, int]:
    """The ``[staleness]`` table over the defaults: asset class -> whole days, at least 1."""
    if not isinstance(table, Mapping):
        raise UniverseError(f"{where} must be a table of asset class = days")
    out = dict(DEFAULT_STALENESS_DAYS)
    for key, value in table.items():
        if key not in ASSET_CLASSES:
            raise UniverseError(
                f"{where}: {key!r} is not an asset class (one of {', '.join(ASSET_CLASSES)})"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UniverseError(f"{where}: {key} must be whole days, at least 1, got {value!r}")
        out[key] = value
    return out


def parse_move_limits(table: object, where: str) -> dict[str, float]:
    """The ``[move_limits]`` table over the defaults: asset class -> percent, above 0."""
    if not isinstance(table, Mapping):
        raise UniverseError(f"{where} must be a table of asset class = percent")
    out = dict(DEFAULT_MOVE_LIMITS_PCT)
    for key, value in table.items():
        if key not in ASSET_CLASSES:
            raise UniverseError(
                f"{where}: {key!r} is not an asset class (one of {', '.join(ASSET_CLASSES)})"
            )
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if not is_number or not math.isfinite(value) or value <= 0:
            raise UniverseError(f"{where}: {key} must be a percent above 0, got {value!r}")
        out[key] = float(value)
    return out


def resolve_paths(options: dict[str, Any], universe_file: Path) -> dict[str, Any]:
    """Make the ``path`` / ``folder`` options of a table relative to the universe file."""
    for key in ("path", "folder"):
        if isinstance(options.get(key), str):
            options[key] = str((universe_file.parent / options[key]).resolve())
    return options


DEMO_UNIVERSE_RESOURCE = "demo_universe.toml"


def load_universe(settings: Settings) -> Universe:
    """The universe at ``settings.universe_path``, or the packaged demo universe when None.

    Raises :class:`~pairscreen.universe.UniverseError` for a missing or malformed file.
    """
    if settings.universe_path is not None:
        return load_universe_file(settings.universe_path, market_source=settings.market_source)
    return load_demo_universe()


def load_demo_universe() -> Universe:
    """The built-in demo universe (``pairscreen/demo_universe.toml``, shipped as package data)."""
    resource = resources.files("pairscreen").joinpath(DEMO_UNIVERSE_RESOURCE)
    with resources.as_file(resource) as path:
        return load_universe_file(path)
