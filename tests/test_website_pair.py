"""The pair page in headless Chromium: a link that opens anywhere, the screen's verdict free,
and a page that fits a phone.

The live server, the browser and the accounts are ``tests/test_website.py``'s (its ``site``
fixture, one per module). A pair's URL with its window (``#/pair/A/B?bt=90``) copied into a
new tab (where the key must be given again: it is kept per tab) shows that pair and window
and spends nothing (``/me`` before and after); the page shows the latest screen's verdict for
a survivor and a rejected pair before any unit is spent, in ``/screen/latest/pairs``' words;
at 390 px the page does not scroll sideways, the backtest rows stack with "Buy and hold" in
view, the chart fits its container, the OU levels read as the API's, and axe finds nothing
serious on a phone or a desktop.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.chromium import artifact_path, missing_reason
from tests.test_website import (  # the fixtures by name: pytest finds them in this module
    SIZES,
    Site,
    _serious,
    site,  # noqa: F401
    site_database,  # noqa: F401
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or ""),
]


def _signed_in(site: Site) -> None:  # noqa: F811 (the fixture's value)
    site.driver.get(f"{site.root}#/screen")
    site.wait(lambda d: d.find_elements("id", "key") or site.text("main h1"))
    if site.driver.find_elements("id", "key"):
        site.sign_in(site.personal)
        site.wait(lambda d: site.text("main h1") == "Screen")


def _remaining(site: Site) -> int:  # noqa: F811
    return int(site.get("/me", site.personal).json()["quota"]["remaining_today"])


def _verdicts(site: Site) -> dict[str, dict[str, Any]]:  # noqa: F811
    """A survivor's and a rejected pair's verdicts from the free endpoint."""
    survivor = site.get("/pairs", site.personal).json()["pairs"][0]["pair"]
    tickers = [a["ticker"] for a in site.get("/assets", site.personal).json()["assets"]]
    found = {"survivor": site.get(f"/screen/latest/pairs/{survivor}", site.personal).json()}
    for a in tickers:
        for b in tickers:
            if a == b or "rejected" in found:
                continue
            r = site.get(f"/screen/latest/pairs/{a}/{b}", site.personal)
            if r.status_code == 200 and r.json()["reason_code"] not in ("", "insufficient_history"):
                found["rejected"] = r.json()
    return found


def test_a_pair_link_with_its_window_opens_in_a_new_tab_and_spends_nothing(site):  # noqa: F811
    _signed_in(site)
    pair = site.get("/pairs", site.personal).json()["pairs"][0]["pair"]
    before = _remaining(site)
    site.open(f"pair/{pair}", pair)
    site.driver.find_element("css selector", "input[name=bt][value='90']").click()
    site.wait(lambda d: d.current_url.endswith(f"#/pair/{pair}?bt=90"))
    assert site.text("#view-link") == f"{pair}, 90 days"
    url = site.driver.current_url
    first = site.driver.current_window_handle
    site.driver.switch_to.new_window("tab")
    try:
        site.driver.get(url)
        site.wait(lambda d: d.find_elements("id", "key"))  # the key is kept per tab
        site.sign_in(site.personal)
        site.wait(lambda d: site.text("main h1") == pair)
        site.wait(lambda d: not d.find_elements("css selector", "main .loading"))
        checked = "input[name=bt]:checked"
        assert site.driver.find_element("css selector", checked).get_attribute("value") == "90"
        assert site.driver.current_url == url
        site.driver.refresh()  # a reload keeps the pair and its window
        site.wait(lambda d: site.text("main h1") == pair)
        assert site.driver.find_element("css selector", checked).get_attribute("value") == "90"
        assert not site.driver.find_elements("css selector", "#snap-title")  # nothing computed
    finally:
        site.driver.close()
        site.driver.switch_to.window(first)
    assert _remaining(site) == before


def test_every_page_is_a_link_that_survives_a_reload(site):  # noqa: F811
    _signed_in(site)
    for page in ("screen", "watchlist", "pegs", "assets", "account"):
        site.open(page, page.capitalize())
        site.driver.refresh()
        site.wait(lambda d, page=page: site.text("main h1") == page.capitalize())
        assert site.driver.current_url.endswith(f"#/{page}")
        current = site.driver.find_element("css selector", "#nav a[aria-current=page]")
        assert current.get_attribute("href").endswith(f"#/{page}")


def test_the_pair_page_says_the_screens_verdict_before_any_unit(site):  # noqa: F811
    _signed_in(site)
    before = _remaining(site)
    for name, verdict in _verdicts(site).items():
        site.open(f"pair/{verdict['pair']}", verdict["pair"])
        site.driver.save_screenshot(str(artifact_path(f"site-pair-verdict-{name}.png")))
        said = site.text("#screen-verdict")
        if name == "survivor":
            assert f"rank {verdict['rank']} of {verdict['n_survivors']}" in said, said
            zone = site.driver.find_element("css selector", "#screen-verdict .zone").text
            assert zone.lower() == verdict["zone"]
        else:
            assert said.endswith(verdict["filter_reason"]), said
            code = site.driver.find_element("css selector", "#screen-verdict .reason")
            assert code.get_attribute("data-code") == verdict["reason_code"]
        # the other way round: the same pair as screened, said so
        a, b = verdict["a"], verdict["b"]
        site.open(f"pair/{b}/{a}", f"{b}/{a}")
        assert f"The screen evaluated {a}/{b}" in site.text(".screen-verdict")
    assert _remaining(site) == before
    site.open("pair/NOPE/BTC", "NOPE/BTC")  # the API's sentence, and the page still works
    assert (
        site.text("#screen-verdict")
        == site.get("/screen/latest/pairs/NOPE/BTC", site.personal).text.strip()
    )
    # an address without two tickers says so, and never shows "undefined" or offers a unit
    for address in ("pair/ETH", "pair/ETH/", "pair/ETH/BTC/USDT"):
        site.open(address, "Something went wrong")
        said = site.text("main")
        assert "#/pair/A/B" in said and "undefined" not in said, (address, said)
        assert not site.driver.find_elements("id", "snapshot")


PAGE_FIT = """
const wrap = document.querySelector('#backtests').closest('.table-wrap');
const holds = [...document.querySelectorAll('td[data-hold]')].map(td => {
  const box = td.getBoundingClientRect();
  return [box.left, box.right, getComputedStyle(td, '::before').content];
});
return {overflow: document.documentElement.scrollWidth - window.innerWidth,
        cut: wrap.scrollWidth - wrap.clientWidth, width: window.innerWidth, holds};
"""


def test_the_pair_page_fits_a_phone_shows_the_ou_levels_and_passes_axe(site):  # noqa: F811
    from axe_selenium_python import Axe

    _signed_in(site)
    pair = site.get("/pairs", site.personal).json()["pairs"][0]["pair"]
    snapshot = site.get(f"/pair/{pair}", site.personal).json()
    m = snapshot["metrics"]
    problems = []
    axe = Axe(site.driver)
    for width, height in SIZES:
        site.driver.set_window_size(width, height)
        site.open(f"pair/{pair}", pair)
        site.driver.find_element("id", "both").click()
        site.wait(lambda d: d.find_elements("css selector", "#chart .main-svg"))
        site.wait(lambda d: d.find_elements("css selector", "#snap-title"))
        fit = site.driver.execute_script(PAGE_FIT)
        assert fit["overflow"] <= 0, (width, fit)
        assert fit["cut"] <= 0, (width, fit)  # the backtest table needs no sideways scroll
        for left, right, label in fit["holds"]:
            assert left >= 0 and right <= fit["width"], (width, fit)
            if width < 600:
                assert label == '"Buy and hold"', label
        chart = site.driver.execute_script(
            "const c = document.getElementById('chart'), s = c.querySelector('.main-svg');"
            "return [s.getBoundingClientRect().width, c.clientWidth, window.innerWidth];"
        )
        assert abs(chart[0] - chart[1]) <= 2 and chart[1] <= chart[2], chart
        shown = site.text("[data-ou=ou_entry]")
        assert shown.startswith(f"{m['ou_entry']:,.4f}") and shown.endswith("log units"), shown
        words = "return document.querySelector('.ou-levels').textContent"
        assert "OU entry (today's fit)" in site.driver.execute_script(words)
        traces = site.driver.execute_script(
            "return document.getElementById('chart').data.map(t => t.name)"
        )
        assert "OU entry (today's fit)" in traces  # the chart's line, by the same name
        full = site.driver.execute_script(
            "window.scrollTo(0, 0); return document.documentElement.scrollHeight"
        )
        site.driver.set_window_size(width, min(max(full, height), 6000))
        site.driver.save_screenshot(str(artifact_path(f"site-pair-page-{width}.png")))
        site.driver.set_window_size(width, height)
        axe.inject()
        problems += [f"pair at {width}px: {v}" for v in _serious(axe.run()["violations"])]
    site.driver.set_window_size(*SIZES[1])
    assert not problems, "\n".join(problems)


# The pair's series as the API sends it with PAIRSCREEN_STRATEGY=kalman_band: `spread_lines`
# holds the strategy's spread and its levels from the backtest's first day (the site's own
# server runs the accumulation strategy, which draws none).
WITH_SPREAD = """
window.realFetch ??= window.fetch;
window.fetch = async (url, options) => {
  const r = await window.realFetch(url, options);
  if (!String(url).includes('/series')) return r;
  const body = await r.json();
  const start = body.dates.indexOf(body.backtest_start);
  const at = (f) => body.log_ratio.map((v, i) => (i < start ? null : f(v, i)));
  body.spread_lines = {
    spread: at((v, i) => v - body.log_ratio[i - 1]),
    upper: at(() => 0.05), lower: at(() => -0.05), exit: at(() => 0.0),
  };
  return new Response(JSON.stringify(body), {headers: {'Content-Type': 'application/json'}});
};
"""


def test_the_chart_draws_a_strategys_spread_in_a_panel_under_the_ratio(site):  # noqa: F811
    _signed_in(site)
    site.driver.set_window_size(1280, 900)
    pair = site.get("/pairs", site.personal).json()["pairs"][0]["pair"]
    names = "return (document.getElementById('chart')?.data || []).map(t => t.name)"

    def draw() -> list[str]:
        site.open("screen", "Screen")  # away and back: the pair page is built anew
        site.open(f"pair/{pair}", pair)  # the same document: the fetch below stays in place
        site.driver.find_element("id", "both").click()
        site.wait(lambda d: d.execute_script(names))
        return list(site.driver.execute_script(names))

    assert "Kalman spread e" not in draw()  # the accumulation strategy draws none
    site.driver.execute_script(WITH_SPREAD)
    try:
        assert "Kalman spread e" in draw()
        ratio, spread, traces = site.driver.execute_script(
            "const c = document.getElementById('chart');"
            "return [c.layout.yaxis.domain, c.layout.yaxis2.domain,"
            " c.data.filter(t => t.yaxis === 'y2').map(t => t.name)];"
        )
    finally:
        site.driver.execute_script("window.fetch = window.realFetch;")
    assert spread[1] < ratio[0]  # under the ratio
    assert traces[-1] == "Kalman spread e" and len(traces) == 4
