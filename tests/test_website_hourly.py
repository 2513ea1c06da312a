"""The website on an hourly universe, in headless Chromium (issue 36).

The universe is ``tests/test_hourly_screen.py``'s (real Binance hourly closes plus a seeded
mean-reverting ``ETHX``), screened at its pinned clock, 2023-04-01T06:30Z, six and a half
hours after the last bar's close; the browser reads the same clock. The screen page says
where the data ends as a UTC close time with the bar and its age in time and in bars; the
pair page offers the universe's own backtest windows (3 and 7 days), says its data time the
same way, shows a half-life in days with its bars beside it, and draws the chart on the
bars' close times (a time axis in hours). Screenshots go to test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from pairscreen.evaluation.track_record import evaluate_current_rules
from pairscreen.market.bar_sync import sync_bars
from pairscreen.screen_store.evidence import publish
from pairscreen.screening.screen import run_screen
from tests.support.chromium import artifact_path, headless_chromium, missing_reason
from tests.support.live_server import live_server
from tests.test_hourly_lags import cut_ethx
from tests.test_hourly_screen import pin, write_universe
from tests.test_website import Site

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or ""),
]


def _screened(
    folder: Path,
    monkeypatch: pytest.MonkeyPatch | None = None,
    screen_at: str = "",
    *,
    screen: bool = True,
    evidence: bool = False,
) -> tuple[str, Path, str]:
    """The hourly universe synced and screened in a SQLite file: its URL, file and a key;
    with ``screen_at``, ``ETHX`` cut five bars before it and screened at that moment; with
    ``screen`` false, synced only; with ``evidence``, the worker's track record published."""
    universe = write_universe(folder)
    if screen_at:
        cut_ethx(folder)
    url = f"sqlite:///{folder / 'hourly.sqlite3'}"
    rt = build_runtime(load_settings(data_dir=folder, database_url=url, universe=universe))
    with database.connection_context():
        assert not sync_bars(rt.universe, rt.plugins).needs_review
        if monkeypatch is not None and screen_at:
            pin(monkeypatch, screen_at)
        if screen:
            run_screen(rt)
        if evidence:
            record = evaluate_current_rules(rt)
            publish(record.body, record.first_day, record.last_day, clock.now())
        accounts.create_user("hourly@example.com", "pro", lifetime=True)
        key = accounts.rotate_key("hourly@example.com")
    database.close()
    return url, universe, key


@contextmanager
def _site(folder: Path, url: str, universe: Path, key: str) -> Iterator[tuple[Site, Any]]:
    """A live server on the hourly database and a headless Chromium 1366 px wide, signed in
    on the screen page."""
    env = {"PAIRSCREEN_UNIVERSE": str(universe), "PAIRSCREEN_DATA_DIR": str(folder)}
    with live_server(url, env=env) as api, headless_chromium(folder) as driver:
        driver.set_window_size(1366, 1000)
        site = Site(api.removesuffix("api/v1"), api, key, key, driver, folder, url)
        driver.get(f"{site.root}#/screen")
        site.sign_in(key)
        yield site, driver


def test_the_website_on_an_hourly_universe_says_bar_close_times_and_draws_hours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin(monkeypatch)  # before the browser starts: its clock follows the pinned one
    url, universe, key = _screened(tmp_path, evidence=True)
    with _site(tmp_path, url, universe, key) as (site, driver):
        site.wait(lambda d: site.text("main h1") == "Screen")
        site.wait(lambda d: not d.find_elements("css selector", "main .loading"))
        # the track record of bar closes: horizons in hours, the closes it replayed
        site.wait(lambda d: d.find_elements("css selector", "#evidence .evidence-horizon"))
        evidence = site.get("/evidence", key).json()
        cards = driver.find_elements("css selector", "#evidence .evidence-horizon")
        assert [c.text.split("\n")[0] for c in cards] == [
            "24 h after a screen",
            "72 h after a screen",
        ]
        lede = site.text("#evidence .lede")
        assert f"at {evidence['as_of_days']} past closes of 1h bars" in lede, lede
        assert "from 2023-03-17 01:00 UTC to 2023-03-30 19:00 UTC (every 6 h" in lede, lede
        assert "Prices up to 2023-03-31 19:00 UTC." in lede, lede
        assert site.text("#evidence-all-title") == "All closes"
        reasons = site.text("#evidence .evidence-horizon .evidence-reasons")
        assert "as-of closes" in reasons and "as-of days" not in reasons, reasons
        summary = site.text("#evidence-summary")
        assert summary.startswith("Does this screen work? 24 h: "), summary
        assert "; 72 h: " in summary and "days" not in summary, summary
        driver.execute_script("document.querySelector('#evidence').scrollIntoView()")
        driver.save_screenshot(str(artifact_path("hourly-evidence.png")))
        facts = site.text(".facts")
        assert "2023-04-01 00:00 UTC, 1h bar (closed 6 h 30 min ago, 6 bars since)" in facts, facts
        cells = driver.find_elements("css selector", "#survivors tbody td[data-label^='Data to']")
        assert cells and {c.text for c in cells} == {"2023-04-01 00:00 UTC, 1h bar"}
        # a half-life in days with its bars under it
        latest = site.get("/screen/latest", key).json()
        first = latest["survivors"][0]
        shown = driver.find_elements("css selector", "#survivors tbody tr")
        row = next(
            r for r in shown if r.find_element("css selector", "a").text == "/".join(first["pair"])
        )
        half_life = row.find_element("css selector", "td[data-label^='Half']").text
        hours = round(first["metrics"]["half_life_days"] * 24)
        assert half_life.endswith(f"{hours} bars"), half_life
        driver.save_screenshot(str(artifact_path("hourly-screen.png")))

        site.open("pair/ETH/ETHX", "ETH/ETHX")
        offered = driver.find_elements("css selector", "input[name=bt]")
        assert [o.get_attribute("value") for o in offered] == ["3", "7"]
        checked = driver.find_element("css selector", "input[name=bt]:checked")
        assert checked.get_attribute("value") == "7"  # the longest, the contract's default
        driver.find_element("id", "both").click()
        site.wait(lambda d: d.find_elements("css selector", "#chart.drawn"))
        site.wait(lambda d: site.text("#data-time"))
        said = site.text("#data-time")
        assert said == "2023-04-01 00:00 UTC, 1h bar (closed 6 h 30 min ago, 6 bars since)"
        snapshot = site.get("/pair/ETH/ETHX?bt=7", key).json()
        half_life = snapshot["metrics"]["half_life_days"]
        bars = site.text("[data-bars=half_life_days]")
        assert bars == f"({round(half_life * 24)} bars of 1h)", bars
        axis = driver.execute_script(
            "const c = document.querySelector('#chart');"
            "const ratio = c.data.find((t) => t.name.startsWith('ln('));"
            "return [c.layout.xaxis.type, ratio.x[0], ratio.x[ratio.x.length - 1], ratio.x.length];"
        )
        assert axis[0] == "date"
        assert axis[2] == "2023-04-01 00:00:00"  # the last bar's close, to the hour
        assert axis[1] == "2023-03-18 01:00:00" and axis[3] == 14 * 24 - 1  # 7 + 7 days, 1 missing
        driver.execute_script("document.querySelector('#chart').scrollIntoView()")
        driver.save_screenshot(str(artifact_path("hourly-pair-chart.png")))
        driver.execute_script("document.querySelector('#snap-title').scrollIntoView()")
        driver.save_screenshot(str(artifact_path("hourly-pair-snapshot.png")))


def test_the_screen_page_marks_a_pair_some_bars_behind_in_bars_and_hours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ETHX's last bar closed 2023-03-31T10:00Z, the others' at 15:00 the same day: its pair
    is marked "5 bars (5 h) behind", where a count of days would read 0."""
    pin(monkeypatch)
    url, universe, key = _screened(tmp_path, monkeypatch, "2023-03-31T15:30:00Z")
    with _site(tmp_path, url, universe, key) as (site, driver):
        site.wait(lambda d: not d.find_elements("css selector", "main .loading"))
        site.wait(lambda d: d.find_elements("css selector", "#survivors tbody tr"))
        rows = driver.find_elements("css selector", "#survivors tbody tr")
        marked = {
            r.find_element("css selector", "a").text: r.find_element(
                "css selector", "td[data-label^='Data to']"
            ).text.split()
            for r in rows
        }
        lagged = [pair for pair in marked if "ETHX" in pair.split("/")]
        assert lagged, marked
        for pair, text in marked.items():
            if pair in lagged:
                assert " ".join(text) == "2023-03-31 10:00 UTC, 1h bar ⚠ 5 bars (5 h) behind"
            else:
                assert " ".join(text) == "2023-03-31 15:00 UTC, 1h bar", text
        behind = driver.find_elements("css selector", "#survivors tbody tr.data-behind")
        assert len(behind) == len(lagged)
        driver.save_screenshot(str(artifact_path("hourly-screen-behind.png")))


def test_the_pair_page_says_it_reads_the_stored_bars_before_any_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No screen yet (the verdict is a 404): the lede names the bars from the served
    contract, which states an intraday universe's bar."""
    pin(monkeypatch)
    url, universe, key = _screened(tmp_path, screen=False)
    with _site(tmp_path, url, universe, key) as (site, _driver):
        assert site.get("/openapi.json", key).json()["info"]["x-pairscreen-bar"] == "1h"
        site.open("pair/ETH/ETHX", "ETH/ETHX")
        lede = site.text("main .lede")
        assert lede.startswith(
            "The ratio of ETH to ETHX, computed live from the stored 1h bars."
        ), lede
