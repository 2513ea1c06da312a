"""A test kit for plugin authors: the service with your plugin, in your test, no server.

::

    from pairscreen.testing import plugin_service

    def test_my_metric(tmp_path):
        with plugin_service(tmp_path, my_plugin) as service:
            screen = service.screen()                      # the /screen/latest body
            body = service.get("/pair/ETH/BTC").json()     # any endpoint, in-process
            assert "my_field" in body["metrics"]

:func:`plugin_service` builds the service in a folder of its own (an SQLite database), with
the built-in plugins and yours, on the synthetic demo market or on the candles you give,
and checks everything at start-up exactly as ``pairscreen serve`` does (a broken plugin
raises :class:`~pairscreen.plugin_system.registry.PluginError` here). Calling the API needs
``httpx`` (``pip install 'pairscreen[testing]'``). This module is a composition root: it is for
tests, not for a plugin's own code.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.errors import MissingExtra
from pairscreen.plugin_system.hookspecs import hookimpl
from pairscreen.runtime import Runtime
from pairscreen.types import Asset, Candles

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
        import numpy as np

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
    **settings: Any,
) -> Iterator[PluginService]:
    """The service with ``plugins`` (modules or objects with ``@hookimpl`` functions) beside
    the built-ins, in ``folder``, its market synced.

    The market is the demo market, or the ``universe`` file given, or ``candles`` (ticker ->
    :class:`~pairscreen.types.Candles`, all in one sector; only closed days are stored, and
    candles that end long before yesterday make every pair ``stale``; its moves are stored as
    given, and rows the sync cannot read raise :class:`ValueError`). ``settings``
    override :class:`~pairscreen.config.Settings` fields (``strategy="mine"``).
    """
    from pairscreen.access import accounts
    from pairscreen.market.sync import sync_candles

    extra: tuple[object, ...] = plugins
    if candles is not None:
        if universe is not None:
            raise ValueError("give candles or a universe file, not both")
        universe = _universe_of(folder, candles)
        extra = (*plugins, GivenCandlesPlugin(candles))
    base = load_settings(data_dir=folder, database_url=f"sqlite:///{folder / 'pairscreen.sqlite3'}")
    chosen = dataclasses.replace(base, universe_path=universe, **settings)
    runtime = build_runtime(chosen, extra_plugins=extra)
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
        f'label = "test candles"\n\n[market]\nsource = "{GIVEN_SOURCE}"\n{assets}',
        encoding="utf-8",
    )
    return path
