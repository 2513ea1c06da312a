"""A test kit for plugin authors: one metric, filter or strategy on a panel you build, or the
whole service with your plugin, in your test, no server.

::

    from pairscreen.testing import pair_panel, plugin_service, run_metric

    def test_my_metric_alone():
        panel = pair_panel([100, 101, 99, ...], [50, 50.5, 50.2, ...])
        assert run_metric(MyMetric(), panel)["my_field"].shape == (1,)

    def test_my_metric_served(tmp_path):
        with plugin_service(tmp_path, my_plugin, options={"mine": {"days": 5}}) as service:
            screen = service.screen()                      # the /screen/latest body
            body = service.get("/pair/ETH/BTC").json()     # any endpoint, in-process
            assert "my_field" in body["metrics"]

The unit helpers (:func:`pair_panel`, :func:`panel_from_csv`, :func:`run_metric`,
:func:`run_filter`, :func:`run_strategy`) need no database and no service: they hold a
component to the contract the engine holds it to, on the rows you give. :func:`plugin_service`
builds the service in a folder of its own (an SQLite database), with the built-in plugins
and yours, on the synthetic demo market or on the candles you give, and checks everything at
start-up exactly as ``pairscreen serve`` does (a broken plugin raises
:class:`~pairscreen.plugin_system.registry.PluginError` here). Its settings come from its
arguments and ``environ`` only, never from the shell's ``PAIRSCREEN_*`` variables, so a test
passes or fails the same on every machine. Calling the API needs ``httpx`` (``pip install
'pairscreen[testing]'``). This module is a composition root: it is for tests, not for a
plugin's own code.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.contracts import (
    Asset,
    BacktestBatch,
    Candles,
    Filter,
    FilterContext,
    Metric,
    PairPanel,
    Strategy,
)
from pairscreen.db.connection import database
from pairscreen.engine.evaluate import MetricValues, metric_arrays, run_legs
from pairscreen.engine.filtering import filter_reasons
from pairscreen.engine.panels import align, span_panel
from pairscreen.errors import MissingExtra
from pairscreen.market.freshness import last_closed_day
from pairscreen.plugin_system.hookspecs import hookimpl
from pairscreen.runtime import Runtime
from pairscreen.universe import load_universe

if TYPE_CHECKING:
    import httpx

GIVEN_SOURCE = "testing_given"
API = "/api/v1"


class GivenCandles:
    """A market source answering the candles a test gave, for the universe the kit writes."""

    name = GIVEN_SOURCE

    def __init__(self, candles: Mapping[str, Candles]) -> None:
        self.candles = dict(candles)

    def fetch_candles(
        self,
        assets: Sequence[Asset],
        options: Mapping[str, Any],
        *,
        since: Mapping[str, date | None],
        until: date,
    ) -> Iterator[Candles]:
        for asset in assets:
            given = self.candles.get(asset.ticker)
            if given is None:
                continue
            last = since.get(asset.ticker)
            keep = given.dates <= np.datetime64(until, "D")
            if last is not None:
                keep &= given.dates > np.datetime64(last, "D")
            yield Candles(given.ticker, given.dates[keep], given.close[keep], given.volume[keep])


class GivenCandlesPlugin:
    """Registers :class:`GivenCandles` (only when a test gives candles)."""

    def __init__(self, candles: Mapping[str, Candles]) -> None:
        self.source = GivenCandles(candles)

    @hookimpl
    def pairscreen_register_market_sources(self) -> list[GivenCandles]:
        return [self.source]


@dataclasses.dataclass
class PluginService:
    """The service a test built: its runtime, a Pro key, and the calls a test makes."""

    runtime: Runtime
    key: str

    def screen(self) -> dict[str, Any]:
        """Run a screen, publish it and return its ``/screen/latest`` body."""
        from pairscreen.screening.screen import latest_screen_json, run_screen

        with database.connection_context():
            run_screen(self.runtime, processes=1)
            body: dict[str, Any] = json.loads(latest_screen_json(self.runtime))
        return body

    def get(self, path: str, **params: Any) -> httpx.Response:
        """``GET /api/v1<path>`` in-process, with the Pro key (a path under /api/v1)."""
        with self._client() as client:
            response: httpx.Response = client.get(f"{API}{path}", params=params or None)
        return response

    @contextmanager
    def _client(self) -> Iterator[Any]:
        try:
            import httpx  # noqa: F401  (starlette's test client needs it)
        except ImportError:
            raise MissingExtra(
                "calling the API from a test needs httpx: pip install 'pairscreen[testing]'"
            ) from None
        from pairscreen.app import create_app

        app = create_app(self.runtime, validate_responses=True)
        with app.test_client(headers={"Authorization": f"Bearer {self.key}"}) as client:
            yield client


@contextmanager
def plugin_service(
    folder: Path,
    *plugins: object,
    universe: Path | None = None,
    candles: Mapping[str, Candles] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
    **settings: Any,
) -> Iterator[PluginService]:
    """The service with ``plugins`` (modules or objects with ``@hookimpl`` functions) beside
    the built-ins, in ``folder``, its market synced.

    The market is the demo market, or the ``universe`` file given, or ``candles`` (ticker ->
    :class:`~pairscreen.contracts.Candles`, all in one sector; only closed days are stored, and
    candles that end long before yesterday make every pair ``stale``; its moves are stored as
    given, and rows the sync cannot read raise :class:`ValueError`). ``options`` are plugin
    options by plugin name, as a ``[plugins.<name>]`` table of the universe file gives them
    (over the file's own). ``settings`` override :class:`~pairscreen.config.Settings` fields
    (``strategy="mine"``), over ``environ``, the only environment read (``PAIRSCREEN_*``
    names; the shell's are ignored).
    """
    from pairscreen.access import accounts
    from pairscreen.market.sync import sync_candles

    extra: tuple[object, ...] = plugins
    if candles is not None:
        if universe is not None:
            raise ValueError("give candles or a universe file, not both")
        universe = _universe_of(folder, candles)
        extra = (*plugins, GivenCandlesPlugin(candles))
    base = load_settings(
        dict(environ or {}),
        data_dir=folder,
        database_url=f"sqlite:///{folder / 'pairscreen.sqlite3'}",
    )
    chosen = dataclasses.replace(base, universe_path=universe, **settings)
    market = load_universe(chosen)
    if options:
        merged = {**market.plugin_options, **{k: dict(v) for k, v in options.items()}}
        market = dataclasses.replace(market, plugin_options=merged)
    runtime = build_runtime(chosen, extra_plugins=extra, universe=market)
    try:
        with database.connection_context():
            # The market is what the test gave: its moves are adopted as given (no person
            # is there to accept them), and rows the sync cannot read stop the kit by name.
            report = sync_candles(
                runtime.universe, runtime.plugins, replace=runtime.universe.tickers
            )
            if report.needs_review:
                problems = "; ".join(report.review_lines())
                raise ValueError(f"the market could not be synced: {problems}")
            email = "plugin-tests@pairscreen.invalid"
            accounts.create_user(email, "pro", lifetime=True)
            key = accounts.rotate_key(email)
        yield PluginService(runtime, key)
    finally:
        database.close()


def _universe_of(folder: Path, candles: Mapping[str, Candles]) -> Path:
    assets = "".join(f'\n[[asset]]\nticker = "{ticker}"\nsector = "test"\n' for ticker in candles)
    path = folder / "universe.toml"
    path.write_text(
        f'label = "test candles"\n\n[components]\nmarket_source = "{GIVEN_SOURCE}"\n{assets}',
        encoding="utf-8",
    )
    return path


def pair_panel(
    close_a: ArrayLike,
    close_b: ArrayLike,
    *,
    tickers: tuple[str, str] = ("A", "B"),
    end: date | None = None,
    window_days: int = 540,
) -> PairPanel:
    """A panel of one pair from two arrays of daily closes, one a day ending at ``end``
    (default: the last closed day, yesterday UTC), with a band window of ``window_days``."""
    a, b = _closes(close_a, "close_a"), _closes(close_b, "close_b")
    if a.shape != b.shape:
        raise ValueError(f"close_a has {a.size} closes and close_b {b.size}: give one a day each")
    last = np.datetime64(end or last_closed_day(), "D")
    dates = np.arange(last - (a.size - 1), last + 1)
    return _panel(tickers, dates, a, b, window_days)


def panel_from_csv(path: Path, *, window_days: int = 540) -> PairPanel:
    """A panel of one pair from a small CSV: a ``date,<ticker A>,<ticker B>`` header, then
    one row a day (``YYYY-MM-DD`` and the two closes), oldest first."""
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or len(rows[0]) != 3 or rows[0][0].strip() != "date":
        raise ValueError(f"{path}: the header must be date,<ticker A>,<ticker B>")
    body = [row for row in rows[1:] if row]
    if any(len(row) != 3 for row in body):
        raise ValueError(f"{path}: every row needs a date and two closes")
    try:
        dates = np.array([row[0].strip() for row in body], dtype="datetime64[D]")
        a, b = (np.array([float(row[k]) for row in body]) for k in (1, 2))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if dates.size and not (np.diff(dates) > np.timedelta64(0, "D")).all():
        raise ValueError(f"{path}: the dates must increase, one row a day")
    tickers = (rows[0][1].strip(), rows[0][2].strip())
    return _panel(tickers, dates, _closes(a, tickers[0]), _closes(b, tickers[1]), window_days)


def _closes(values: ArrayLike, name: str) -> np.ndarray:
    closes = np.asarray(values, dtype=float)
    if closes.ndim != 1 or closes.size < 2:
        raise ValueError(f"{name}: give at least two closes in one row")
    if not (np.isfinite(closes) & (closes > 0)).all():
        raise ValueError(f"{name}: every close must be a positive number")
    return closes


def _panel(
    tickers: tuple[str, str], dates: np.ndarray, a: np.ndarray, b: np.ndarray, window_days: int
) -> PairPanel:
    no_volume = np.full(dates.size, np.nan)
    pair = align(Candles(tickers[0], dates, a, no_volume), Candles(tickers[1], dates, b, no_volume))
    return span_panel(pair, pair.calendar_days, window_days)


def run_metric(metric: Metric, panel: PairPanel) -> dict[str, np.ndarray]:
    """The metric's fields on ``panel``, one value per pair, as the screen would take them
    (a wrong shape raises; full-window fields are NaN without a full window)."""
    return metric_arrays(metric, panel)


def run_filter(
    screen_filter: Filter,
    metrics: Mapping[str, ArrayLike],
    history_days: ArrayLike,
    *,
    thresholds: Mapping[str, float] | None = None,
    depegged: ArrayLike | None = None,
) -> list[str]:
    """Per pair, its ``filter_reason`` (``""`` when it passes) from these metric values and
    days of common history, the core's depeg guarantee first, as the screen decides it; the
    filter's own thresholds unless ``thresholds`` are given."""
    days = np.asarray(history_days)
    values = {name: np.asarray(column) for name, column in metrics.items()}
    legs = np.zeros(days.size, dtype=bool) if depegged is None else np.asarray(depegged, bool)
    limits = dict(screen_filter.thresholds if thresholds is None else thresholds)
    context = FilterContext(days, legs, limits)
    return filter_reasons(screen_filter, MetricValues(values, {}), context)


def run_strategy(strategy: Strategy, panel: PairPanel, bt_days: int) -> dict[str, BacktestBatch]:
    """Both backtest legs of ``panel`` over its last ``bt_days`` days: ``"A"`` starts in A,
    ``"B"`` in B, as the screen runs them."""
    return run_legs(strategy, panel, bt_days)
