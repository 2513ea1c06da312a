"""Loud staleness: on real closes that stopped long ago, every surface says so.

A stale pair's reason names every stale leg with its age, its chart prints that line, the
latest screen says ``stale: true`` with a sentence (judged when asked, not only when it was
computed), ``/healthz`` answers 200 with ``"status": "degraded"`` and the reason,
Prometheus counts the stale assets, and every page of the website shows a banner.

The data: real Binance daily closes of BTC and ETH to 2023-12-31 and PAXG to 2023-06-30
(``tests/fixtures/stale_closes/README.md``), screened as two sectors and one cross pair.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest
from pairscreen_plugins.charts import matplotlib_renderer as mpl_renderer
from prometheus_client.parser import text_string_to_metric_families

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.market.sync import sync_candles
from pairscreen.runtime import Runtime
from pairscreen.screening.chart import chart_data, chart_png
from pairscreen.screening.screen import run_screen
from tests.conftest import ContractClient, make_client
from tests.support.databases import TEST_DATABASE_URL
from tests.test_chart import colour_pixels, decode

CLOSES = Path(__file__).parent / "fixtures" / "stale_closes"
BTC_LAST, PAXG_LAST = date(2023, 12, 31), date(2023, 6, 30)

UNIVERSE = """
[components]
market_source = "csv"

[plugins.csv_source]
path = "prices"

[pairs]
cross = [["PAXG", "BTC"]]

[[asset]]
ticker = "BTC"
sector = "majors"

[[asset]]
ticker = "ETH"
sector = "majors"

[[asset]]
ticker = "PAXG"
sector = "gold"
asset_class = "tokenized_metal"
peg = { reference = "XAU", sources = ["csv"] }
"""

pytestmark = pytest.mark.skipif(
    bool(TEST_DATABASE_URL), reason="one SQLite world per module (the API is the same)"
)


@dataclass(frozen=True)
class World:
    folder: Path
    url: str
    universe: Path
    rt: Runtime
    key: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("stale")
    shutil.copytree(CLOSES, folder / "prices", ignore=shutil.ignore_patterns("*.md"))
    universe = folder / "universe.toml"
    universe.write_text(UNIVERSE, encoding="utf-8")
    url = f"sqlite:///{folder / 'pairscreen.sqlite3'}"
    settings = load_settings(data_dir=folder, database_url=url, universe_path=universe)
    rt = build_runtime(settings)
    from pairscreen.access import accounts

    with database.connection_context():
        sync_candles(rt.universe, rt.plugins)
        run_screen(rt)
        accounts.create_user("stale@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("stale@example.com")
    database.close()
    yield World(folder, url, universe, rt, key)
    database.close()


@pytest.fixture()
def stale_client(world: World) -> Iterator[ContractClient]:
    c = make_client(world.rt)
    with c.client:
        yield c
    database.close()


def ages() -> tuple[int, int]:
    today = clock.today()
    return (today - PAXG_LAST).days, (today - BTC_LAST).days


def test_a_stale_pair_names_every_stale_leg_with_its_age(world, stale_client):
    paxg_age, btc_age = ages()
    snap = stale_client.get("/api/v1/pair/PAXG/BTC?bt=90", world.key).json()
    assert snap["passes_filter"] is False
    assert snap["filter_reason"] == (
        f"stale: PAXG has no close since {PAXG_LAST} ({paxg_age:,} days); "
        f"BTC has no close since {BTC_LAST} ({btc_age:,} days)"
    )


def test_the_chart_of_a_stale_pair_prints_the_stale_line(world):
    with database.connection_context():
        chart = chart_data(world.rt, *world.rt.universe.pair("PAXG", "BTC"), 90)
        png = chart_png(world.rt, *world.rt.universe.pair("PAXG", "BTC"), 90)
    paxg_age, _ = ages()
    (line,) = [n for n in chart.note.splitlines() if n.startswith("stale: ")]
    assert f"PAXG has no close since {PAXG_LAST} ({paxg_age:,} days)" in line
    renderer = world.rt.plugins.chart_renderers.get(world.rt.settings.chart_renderer)
    silent = renderer.render(replace(chart, note=""), width_px=1280, height_px=720)
    assert colour_pixels(decode(png), mpl_renderer.NOTE, tolerance=12) > 0
    assert colour_pixels(decode(silent), mpl_renderer.NOTE, tolerance=12) == 0


def test_the_latest_screen_says_it_is_stale(world, stale_client):
    r = stale_client.get("/api/v1/screen/latest", world.key)
    body = r.json()
    assert body["stale"] is True
    assert body["rejected"]["stale"] == body["n_pairs_screened"] == 2
    reason = body["stale_reason"]
    assert reason.startswith("This screen's data is stale: its newest close is from 2023-12-31")
    assert "2 of its 2 pairs (100 %) have a stale leg" in reason
    page = stale_client.get("/api/v1/screen/latest?limit=1", world.key).json()
    assert (page["stale"], page["stale_reason"]) == (True, reason)


def test_a_screen_that_was_fresh_when_computed_is_stale_when_served(world, stale_client):
    """Computed on 2024-01-01, BTC/ETH was fresh and only the PAXG pair stale (not most):
    stored ``stale: false``. Served today it is stale, with an entity tag of its own."""
    with database.connection_context():
        run_screen(world.rt, at=datetime(2024, 1, 1, 12, tzinfo=UTC))
    try:
        history = stale_client.get("/api/v1/screens?at=2024-01-01T13:00:00Z", world.key).json()
        assert (history["stale"], history["stale_reason"]) == (False, None)
        latest = stale_client.get("/api/v1/screen/latest", world.key)
        body = latest.json()
        assert body["generated_at"] == history["generated_at"]
        assert (
            body["stale"] is True and "its newest close is from 2023-12-31" in body["stale_reason"]
        )
        assert "pairs" not in body["stale_reason"]  # 1 of 2 stale is not most
        assert latest.headers["ETag"] != f'W/"screen-{world.rt.screens.latest().key[0]}"'
        again = stale_client.get(
            "/api/v1/screen/latest", world.key, headers={"If-None-Match": latest.headers["ETag"]}
        )
        assert again.status_code == 304
    finally:
        with database.connection_context():
            run_screen(world.rt)  # the module's other tests read today's screen


def test_a_fresh_screen_is_not_stale(client, keys):
    """The demo market ends yesterday: nothing stale, /healthz ok."""
    body = client.get("/api/v1/screen/latest", keys.personal).json()
    assert (body["stale"], body["stale_reason"]) == (False, None)
    health = client.client.get("/healthz").json()
    assert health["status"] == "ok" and "reason" not in health
    assert health["stale_assets"] == 0 and health["screen"]["stale"] is False


@pytest.mark.slow
def test_healthz_metrics_and_every_page_say_so_on_a_live_server(world):
    from tests.support.chromium import headless_chromium, missing_reason
    from tests.support.live_server import serving

    env = {"PAIRSCREEN_UNIVERSE": str(world.universe), "PAIRSCREEN_METRICS": "1"}
    with serving(world.url, env=env) as server:
        root = server.base.removesuffix("/api/v1")
        health = httpx.get(f"{root}/healthz", timeout=30)
        metrics = httpx.get(f"{root}/metrics", timeout=30).text
        latest = httpx.get(
            f"{server.base}/screen/latest",
            headers={"Authorization": f"Bearer {world.key}"},
            timeout=30,
        ).json()
        shown = {}
        if missing_reason() is None:
            with headless_chromium() as driver:
                driver.get(root + "/")
                driver.execute_script(
                    "sessionStorage.setItem('pairscreen.key', arguments[0])", world.key
                )
                for page in ("screen", "pegs", "assets", "account"):
                    driver.get(f"{root}/#/{page}")
                    driver.refresh()
                    shown[page] = _banner(driver)
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "degraded" and body["reason"] == latest["stale_reason"]
    assert body["stale_assets"] == 3 and body["screen"]["stale"] is True
    gauges = {s.name: s.value for f in text_string_to_metric_families(metrics) for s in f.samples}
    assert gauges["pairscreen_stale_assets"] == 3
    if missing_reason() is not None:
        pytest.skip(f"website banner not checked: {missing_reason()}")
    assert shown == dict.fromkeys(shown, latest["stale_reason"]) and len(shown) == 4


def _banner(driver) -> str:  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    def visible(d):  # type: ignore[no-untyped-def]
        text = d.execute_script(
            "const b = document.getElementById('stale-banner');"
            "return b && !b.hidden && document.querySelector('main h1') ? b.innerText : '';"
        )
        return text.strip() or False

    return str(WebDriverWait(driver, 30).until(visible))
