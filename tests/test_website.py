"""The website at ``/``, used in headless Chromium the way a trader would.

One live ``pairscreen serve`` and one browser for the whole module (the tests run in file
order and share them): sign in with the Personal key (a wrong key first, refused with the
API's sentence), the screen's table (as many rows as ``/pairs``, sorting by score, filtering
by zone, its half-life, cointegration and correlation columns), its CSV download (the bytes of
``/screen/latest`` as ``text/csv``), a pair's snapshot (numbers as ``/pair/{a}/{b}``, a metric
plugin's field shown under its own name, the quota shown drops by one) and its chart (traces
and bands), watch / switch / remove against ``/watchlist`` over the API,
the pegs page for Personal (the tier note) and Pro (the gold depeg), a rotated key refused,
then every page at 390x844 and 1366x768: no sideways page scrolling, no serious or critical
axe-core violation, a screenshot in ``test-artifacts/``.
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from pairscreen import clock
from pairscreen.config import load_settings
from pairscreen.db.connection import database
from tests.support.chromium import artifact_path, headless_chromium, missing_reason
from tests.support.databases import TEST_DATABASE_URL
from tests.support.live_server import live_server
from tests.support.pegs import open_depeg_event
from tests.support.plugin_files import PLUGINS_DIR

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or ""),
]

WAIT_SECONDS = 30
SIZES = ((390, 844), (1366, 768))
PAGES = ("screen", "pair", "watchlist", "pegs", "assets", "account")


@dataclass
class Site:
    root: str  # the website, http://host:port/
    api: str  # its API base URL
    personal: str
    pro: str
    driver: Any
    downloads: Path  # where the browser saves the files the pages download
    database_url: str  # the server's database (the CLI publishes an evaluation there)

    def get(self, path: str, key: str, accept: str = "*/*") -> Any:
        headers = {"Authorization": f"Bearer {key}", "Accept": accept}
        return httpx.get(f"{self.api}{path}", headers=headers, timeout=30)

    def wait(self, condition: Any) -> Any:
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, WAIT_SECONDS).until(condition)

    def open(self, hash_path: str, heading: str) -> None:
        """Show ``#/hash_path`` (the same document: no reload) and wait for its content."""
        self.driver.get(f"{self.root}#/{hash_path}")
        self.wait(lambda d: self.text("main h1") == heading)
        self.wait(lambda d: not d.find_elements("css selector", "main .loading"))

    def text(self, selector: str) -> str:
        """The rendered text of the first match ("" when none): read in one script, so a
        page redrawing meanwhile never leaves a stale element."""
        script = "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';"
        return str(self.driver.execute_script(script, selector)).strip()

    def sign_in(self, key: str) -> None:
        from selenium.webdriver.common.by import By

        field = self.wait(lambda d: d.find_element(By.ID, "key"))
        field.clear()
        field.send_keys(key)
        self.driver.find_element(By.CSS_SELECTOR, "#sign-in button").click()

    def sign_out(self) -> None:
        self.driver.find_element("id", "sign-out").click()
        self.wait(lambda d: d.find_elements("id", "key"))


@pytest.fixture(scope="module")
def site_database(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A copy of the demo template for this module, with a Personal and a Pro account."""
    if TEST_DATABASE_URL:
        postgres = request.getfixturevalue("postgres")
        name = postgres.create("site", template=request.getfixturevalue("postgres_template"))
        url = postgres.url(name)
    else:
        path = tmp_path_factory.mktemp("site") / "pairscreen.sqlite3"
        shutil.copy(request.getfixturevalue("demo_template"), path)
        url = f"sqlite:///{path}"
    try:
        yield url
    finally:
        database.close()
        if TEST_DATABASE_URL:
            postgres.drop(name)


def _accounts(url: str, folder: Any) -> tuple[str, str]:
    from pairscreen.access import accounts
    from pairscreen.bootstrap import build_runtime

    build_runtime(load_settings(data_dir=folder, database_url=url))
    with database.connection_context():
        accounts.create_user(
            "personal@example.com", "personal", expires=clock.now() + timedelta(days=30)
        )
        accounts.create_user("pro@example.com", "pro", lifetime=True)
        now = clock.now()
        open_depeg_event("PAXG", now)
        return accounts.rotate_key("personal@example.com"), accounts.rotate_key("pro@example.com")


@pytest.fixture(scope="module")
def site(site_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    personal, pro = _accounts(site_database, tmp_path_factory.mktemp("site-data"))
    downloads = tmp_path_factory.mktemp("site-downloads")
    # A third-party notifier plugin is installed: the account form offers its channel kind.
    plugins = tmp_path_factory.mktemp("site-plugins")
    shutil.copy(PLUGINS_DIR / "hook_ntfy_channel.py", plugins)
    served = live_server(site_database, env={"PAIRSCREEN_PLUGINS_DIR": str(plugins)})
    with served as api, headless_chromium(downloads) as driver:
        driver.set_window_size(*SIZES[1])
        root = api.removesuffix("api/v1")
        yield Site(root, api, personal, pro, driver, downloads, site_database)


def test_a_wrong_key_is_refused_with_the_apis_sentence_then_the_personal_key_signs_in(site):
    site.driver.get(site.root)
    wrong = "rr_" + "A" * 32
    site.sign_in(wrong)
    said = site.get("/me", wrong).text.strip()
    site.wait(lambda d: site.text("#sign-in-error") == said)
    assert said.startswith("Invalid") or "key" in said
    site.sign_in(site.personal)
    site.wait(lambda d: site.text("main h1") == "Screen")
    assert (
        site.driver.execute_script("return sessionStorage.getItem('pairscreen.key')")
        == site.personal
    )
    assert site.personal not in site.driver.current_url
    assert site.driver.get_cookies() == []


def test_the_screen_table_lists_sorts_and_filters_the_survivors(site):
    pairs = site.get("/pairs", site.personal).json()["pairs"]
    site.open("screen", "Screen")
    rows = lambda: site.driver.find_elements("css selector", "#survivors tbody tr")  # noqa: E731
    assert len(rows()) == len(pairs)
    # the data's age counts from the moment its close was final (24:00 UTC of its day)
    newest = site.get("/screen/latest", site.personal).json()["data_time"]["newest"]
    facts = site.text(".facts")
    assert f"{newest[:10]} (closed " in facts and " ago)" in facts, facts
    shown = [r.find_element("css selector", "a").text for r in rows()]
    edges_first = sorted(pairs, key=lambda p: (p.get("zone") not in ("bottom", "top"), -p["score"]))
    assert shown == [p["pair"] for p in edges_first]
    site.driver.find_element("css selector", "th[data-key=score] button").click()
    descending = [r.find_element("css selector", "a").text for r in rows()]
    assert descending == [p["pair"] for p in sorted(pairs, key=lambda p: -p["score"])]
    site.driver.find_element("css selector", "th[data-key=score] button").click()
    ascending = [r.find_element("css selector", "a").text for r in rows()]
    assert ascending == [p["pair"] for p in sorted(pairs, key=lambda p: p["score"])]
    assert (
        site.driver.find_element("css selector", "th[data-key=score]").get_attribute("aria-sort")
        == "ascending"
    )
    from selenium.webdriver.support.ui import Select

    for zone in ("bottom", "mid", "top"):
        Select(
            site.driver.find_element("css selector", "#filters select[name=zone]")
        ).select_by_value(zone)
        expected = {p["pair"] for p in pairs if p.get("zone") == zone}
        assert {r.find_element("css selector", "a").text for r in rows()} == expected
        assert all(r.find_elements("css selector", f".zone-{zone}") for r in rows())
    Select(site.driver.find_element("css selector", "#filters select[name=zone]")).select_by_value(
        ""
    )


def _shown(value: float | None, digits: int) -> str:
    """``value`` as the page writes it (en-US digits, a dash for null)."""
    return "\u2014" if value is None else f"{value:,.{digits}f}"


def _shown_p(value: float | None) -> str:
    """A p-value as the page writes it: under 0.001, "< 0.001" (never "0.000")."""
    return "<\u00a00.001" if value is not None and value < 0.001 else _shown(value, 3)


def test_the_screen_table_shows_and_sorts_half_life_cointegration_and_correlation(site):
    survivors = site.get("/screen/latest", site.personal).json()["survivors"]
    site.open("screen", "Screen")
    columns = site.driver.execute_script(
        "return [...document.querySelectorAll('#survivors thead th')].map(th => th.dataset.key)"
    )
    fields = {"halflife": ("half_life_days", 1), "coint": ("coint_pvalue", 3)}
    fields["corr"] = ("return_correlation", 2)
    assert set(fields) <= set(columns)
    read = (
        "return [...document.querySelectorAll('#survivors tbody tr')]"
        ".map(tr => [tr.querySelector('a').textContent, tr.cells[arguments[0]].textContent]);"
    )
    for key, (field, digits) in fields.items():
        cells = dict(site.driver.execute_script(read, columns.index(key)))
        unit = "\u00a0d" if key == "halflife" else ""  # half-lives carry their unit
        show = _shown_p if key == "coint" else lambda v, d=digits: _shown(v, d)
        assert cells == {
            "/".join(s["pair"]): show(s["metrics"].get(field))
            + (unit if s["metrics"].get(field) is not None else "")
            for s in survivors
        }
    # Shortest half-life first on the first click (pairs that do not revert last).
    site.driver.find_element("css selector", "th[data-key=halflife] button").click()
    ordered = [pair for pair, _ in site.driver.execute_script(read, 0)]
    by_half_life = sorted(
        survivors,
        key=lambda s: (
            s["metrics"].get("half_life_days") is None,
            s["metrics"].get("half_life_days") or 0,
        ),
    )
    assert ordered == ["/".join(s["pair"]) for s in by_half_life]
    assert (
        site.driver.find_element("css selector", "th[data-key=halflife]").get_attribute("aria-sort")
        == "ascending"
    )


def test_the_screen_downloads_as_the_apis_csv(site):
    site.open("screen", "Screen")
    site.driver.find_element("id", "download-csv").click()
    generated = site.get("/screen/latest", site.personal).json()
    saved = site.wait(
        lambda d: [p for p in site.downloads.glob("pairscreen-screen-*.csv") if p.stat().st_size]
    )
    (path,) = saved
    stamp = generated["generated_at"][:19].replace(":", "")
    assert path.name == f"pairscreen-screen-{stamp}Z.csv"
    answered = site.get("/screen/latest", site.personal, accept="text/csv")
    assert answered.headers["content-type"].startswith("text/csv")
    assert path.read_bytes() == answered.content
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    assert [r["pair"] for r in rows] == ["/".join(s["pair"]) for s in generated["survivors"]]
    for row, survivor in zip(rows, generated["survivors"], strict=True):
        for field in ("half_life_days", "coint_pvalue", "hedge_ratio", "return_correlation"):
            value = survivor["metrics"].get(field)
            assert (row[field] == "") if value is None else (float(row[field]) == value)
    assert site.text("#download-message") == ""
    assert "Bearer" not in site.driver.current_url and site.personal not in site.driver.current_url


# The latest screen with its survivors repeated to ``n`` under new pair names, answered in
# place of the server's (the network edge): the page renders it like any other screen.
BIG_SCREEN = """
const n = arguments[0];
const real = await (await fetch('/api/v1/screen/latest', {
  headers: {Authorization: 'Bearer ' + sessionStorage.getItem('pairscreen.key')}})).json();
const survivors = Array.from({length: n}, (_, i) => ({
  ...real.survivors[i % real.survivors.length],
  pair: ['A' + i, 'B' + i], score: (i * 7919) % 1000 / 10}));
const body = JSON.stringify({...real, survivors, n_survivors: n});
window.realFetch = window.fetch;
window.fetch = (url, options) => String(url).endsWith('/screen/latest')
  ? Promise.resolve(new Response(body, {headers: {'Content-Type': 'application/json'}}))
  : window.realFetch(url, options);
// The time to the first frame painted with every row (layout included), measured in the
// page rather than by polling from here.
new MutationObserver((changes, observer) => {
  if (document.querySelectorAll('#survivors tbody tr').length !== n) return;
  observer.disconnect();
  requestAnimationFrame(() => setTimeout(() => { window.rendered = performance.now(); }));
}).observe(document.getElementById('main'), {childList: true, subtree: true});
window.started = performance.now();
location.hash = '#/screen';
"""


def _lp(value: float | None) -> str:
    """Log points as the evidence section writes them (a signed percentage)."""
    if value is None:
        return "\u2014"
    return f"{'+' if value > 0 else ''}{value * 100:,.1f} %"


def test_the_screen_page_says_whether_the_screen_works(site):
    from pairscreen.cli import main

    never = site.get("/evidence", site.personal)
    assert never.status_code == 404
    site.open("screen", "Screen")
    site.wait(lambda d: site.text("#evidence .evidence-none") == never.text.strip())
    assert site.text("#evidence h2") == "Does this screen work?"

    argv = ["--database-url", site.database_url, "--quiet", "evaluate", "--publish"]
    assert main([*argv, "--every", "60", "--sample", "60"]) == 0
    evidence = site.get("/evidence", site.personal).json()
    site.open("account", "Account")  # away and back: the screen page reads /evidence again
    site.open("screen", "Screen")
    cards = lambda: site.driver.find_elements("css selector", "#evidence .evidence-horizon")  # noqa: E731
    site.wait(lambda d: len(cards()) == len(evidence["horizons"]) == 2)
    lede = site.text("#evidence .lede")
    assert f"from {evidence['from']} to {evidence['to']}" in lede
    assert f"a random 60 of the universe's {evidence['sample']['of_pairs']} pairs" in lede
    for card, horizon in zip(cards(), evidence["horizons"], strict=True):
        text = card.text
        diff = horizon["reversion"]["difference"]
        assert text.startswith(f"{horizon['horizon_days']} days after a screen"), text
        low, high = diff["ci95"]
        assert f"{_lp(diff['estimate'])}, 95 % range {_lp(low)} to {_lp(high)}" in text
        survivors = horizon["hold_value"]["survivors"]["mean"]
        assert f"Holding the cheap leg {horizon['horizon_days']} days" in text
        assert f"survivors {_lp(survivors)}" in text
        if diff["reading"] == "too_few_observations":
            assert "Too few observations to tell:" in text
            assert horizon["warnings"] and all(w in text for w in horizon["warnings"])
        else:
            assert "Too few observations" not in text and not horizon["warnings"]
        if diff["reading"] == "no_evidence":  # one-sided: "did worse" only when all below 0
            assert "No evidence" in text
            assert ("survivors did worse" in text) == (high < 0), text
    for warning in evidence["warnings"]:
        assert warning in site.text("#evidence .evidence-warnings")
    # The periods, the after-period first, the prices' last day and the calibration table.
    assert f"Prices up to {evidence['data_through']}." in site.text("#evidence-data-through")
    rows = site.driver.find_elements("css selector", "#evidence-periods tbody tr")
    assert [r.get_attribute("data-period") for r in rows] == ["after", "chosen_on"]
    assert rows[0].text.startswith(f"After {evidence['defaults_chosen_through']}")
    groups = evidence["calibration"]["groups"]
    for group in groups:
        row = site.text(f"#evidence-calibration tr[data-quintile='{group['quintile']}']")
        assert _lp(group["realised_mean"]) in row and _lp(group["model_implied"]) in row
    assert not site.driver.find_elements("css selector", "#evidence .evidence-portfolio")

    # Published with a portfolio: its line per horizon, beside the random pairs and the universe.
    assert main([*argv, "--every", "60", "--sample", "60", "--portfolio", "5"]) == 0
    evidence = site.get("/evidence", site.personal).json()
    site.open("account", "Account")
    site.open("screen", "Screen")
    lines = lambda: site.driver.find_elements("css selector", "#evidence .evidence-portfolio")  # noqa: E731
    site.wait(lambda d: len(lines()) == len(evidence["portfolio"]) == 2)
    for line, p in zip(lines(), evidence["portfolio"], strict=True):
        text = line.text
        assert text.startswith(f"A portfolio of the top 5 picks, {p['horizon_days']} days"), text
        assert f"{_lp(p['portfolio']['mean'])} per {p['horizon_days']} days" in text
        assert f"{_lp(p['random']['mean'])} per {p['horizon_days']} days" in text
        assert f"{_lp(p['universe']['mean'])} per {p['horizon_days']} days" in text
        assert "accumulation strategy" in text
        # the count after the drawdown is of as-of days, not the drawdown's length
        assert f"({p['portfolio']['as_of_days']} as-of days, " in text, text


def _in_accessibility_tree(driver: Any, selector: str) -> bool:
    """Whether the first match of ``selector`` is exposed to assistive technology (Chromium's
    accessibility tree holds it and does not ignore it)."""
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})
    if not node.get("nodeId"):
        return False
    tree = driver.execute_cdp_cmd(
        "Accessibility.getPartialAXTree", {"nodeId": node["nodeId"], "fetchRelatives": False}
    )
    return not tree["nodes"][0].get("ignored", True)


def test_a_screen_of_1000_survivors_renders_and_sorts_in_under_a_second(site):
    from selenium.webdriver.support.ui import WebDriverWait

    site.open("assets", "Assets")
    site.driver.execute_script(f"(async () => {{ {BIG_SCREEN} }})(arguments[0]);", 1000)
    # the page notes the first frame painted with every row (window.rendered): the time
    # polling from here would add is not the page's
    rendered_ms = WebDriverWait(site.driver, WAIT_SECONDS, poll_frequency=0.02).until(
        lambda d: d.execute_script(
            "return window.rendered === undefined ? null : window.rendered - window.started"
        )
    )
    sorted_ms = site.driver.execute_script(
        "const t = performance.now();"
        "document.querySelector('th[data-key=hurst] button').click();"
        "return performance.now() - t;"
    )
    site.driver.execute_script("window.fetch = window.realFetch;")
    print(
        f"screen of 1000 survivors: rendered in {rendered_ms:.0f} ms, sorted in {sorted_ms:.0f} ms"
    )
    assert rendered_ms < 1000 and sorted_ms < 1000
    # The rows out of view, skipped for the first frame, are laid out in the background: the
    # last one is soon read by a screen reader like the first.
    last = "#survivors tbody tr:last-child a"
    site.wait(lambda d: _in_accessibility_tree(d, last))
    assert site.text(last) == site.driver.execute_script(
        "const rows = document.querySelectorAll('#survivors tbody tr');"
        "return rows[rows.length - 1].querySelector('a').textContent;"
    )


# The snapshot answered with one more metric field, as a metric plugin the page does not know
# would add (the network edge): the page still shows it, under its own name.
PLUGIN_FIELD = """
window.realFetch = window.fetch;
window.fetch = async (url, options) => {
  const response = await window.realFetch(url, options);
  if (!/\\/pair\\/[^/]+\\/[^/?]+\\?/.test(String(url)) || !response.ok) return response;
  const body = await response.json();
  body.metrics.spread_kurtosis = 3.14159265;
  return new Response(JSON.stringify(body), {headers: {'Content-Type': 'application/json'}});
};
"""


def test_a_pair_shows_the_apis_snapshot_costs_one_unit_and_draws_its_chart(site):
    site.open("assets", "Assets")
    site.open("screen", "Screen")
    first = site.driver.find_element("css selector", "#survivors tbody a")
    pair = first.text
    first.click()
    site.wait(lambda d: site.text("main h1") == pair)
    before = int(site.text("#remaining"))
    site.driver.execute_script(PLUGIN_FIELD)
    site.driver.find_element("id", "snapshot").click()
    site.wait(lambda d: d.find_elements("css selector", "#snap-title"))
    site.wait(lambda d: int(site.text("#remaining")) == before - 1)
    snapshot = site.get(f"/pair/{pair}", site.personal).json()
    m = snapshot["metrics"]
    cell = lambda name: site.text(f"td[data-metric={name}]")  # noqa: E731
    assert cell("hurst") == f"{m['hurst']:.3f}"
    assert cell("adf_pvalue") == _shown_p(m["adf_pvalue"])
    assert cell("r_current") == f"{m['r_current']:.4f}"
    assert cell("position").endswith(f"{m['position']:.2f}")
    assert cell("half_life_days") == _shown(m["half_life_days"], 1)
    assert cell("coint_pvalue") == _shown_p(m["coint_pvalue"])
    assert cell("hedge_ratio") == _shown(m["hedge_ratio"], 3)
    assert cell("return_correlation") == _shown(m["return_correlation"], 2)
    for name in ("coint_pvalue_ab", "coint_pvalue_ba"):
        assert cell(name) == _shown_p(m[name])
    assert cell("hedge_ratio_ba") == _shown(m["hedge_ratio_ba"], 3)
    assert cell("johansen_trace") == _shown(m["johansen_trace"], 2)
    assert cell("johansen_trace_crit95") == _shown(m["johansen_trace_crit95"], 2)
    shown = site.driver.find_elements("css selector", "td[data-survived]")
    assert [e.get_attribute("data-survived") for e in shown] == [
        str(v["survived"]).lower() for v in snapshot["recent_verdicts"]
    ]
    assert shown, "the demo has a screen, so the pair has a recent verdict"
    assert "days" in site.text("td[data-metric=half_life_days] + td")
    for name, digits in (("ou_mean", 4), ("ou_half_life_days", 1), ("ou_entry", 4)):
        assert cell(name) == _shown(m[name], digits)
    assert cell("ou_cost") == f"{m['ou_cost']:.5f}"
    # The Kalman fields, with their units and meanings, not as an unknown plugin's fields.
    assert cell("kalman_hedge_ratio") == _shown(m["kalman_hedge_ratio"], 3)
    assert cell("kalman_z") == _shown(m["kalman_z"], 2)
    assert "std devs" in site.text("td[data-metric=kalman_z] + td")
    assert "moves with the market" in site.text("tr:has(td[data-metric=kalman_hedge_ratio]) th")
    assert cell("kalman_q") == "1.00e-4" and cell("kalman_r") == "1.00e-3"  # the defaults
    assert "maximum-likelihood" in site.text("tr:has(td[data-metric=kalman_q]) th")
    assert cell("spread_kurtosis") == "3.1416"
    assert "spread_kurtosis" in site.text("tr:has(td[data-metric=spread_kurtosis]) th")
    site.driver.execute_script("window.fetch = window.realFetch;")
    for leg in ("A", "B"):
        growth = snapshot["backtest"][leg]["growth_pct"]
        assert site.text(f"td[data-leg={leg}]") == f"{'+' if growth > 0 else ''}{growth:,.1f} %"
        fee = snapshot["backtest"][leg]["breakeven_fee"]
        closed = snapshot["backtest"][leg]["breakeven_swaps"]
        shown = "\u2014" if fee is None else f"{100 * fee:,.3f} %"
        assert site.text(f"td[data-breakeven={leg}]") == f"{shown} ({closed} closed)"
    # In-sample figures carry the mark, and the model's return sits beside what such
    # returns realised (the evaluation published by the screen page's test).
    for name in ("ou_expected_return_per_year", "ou_expected_trade_days", "breakeven_fee"):
        assert "in-sample" in site.text(f"td[data-metric={name}] + td"), name
    assert site.text("#backtest-in-sample").startswith("in-sample")
    expected = m["ou_expected_return_per_year"]
    table = site.get("/evidence", site.personal).json()["calibration"]
    if expected is not None and table and table["n"]:
        filled = [g for g in table["groups"] if g["n"]]
        nearest = min(
            filled, key=lambda g: max(g["model_low"] - expected, expected - g["model_high"], 0)
        )
        site.wait(lambda d: site.text("#calibration"))
        assert f"quintile {nearest['quintile']} of the screen's survivors" in site.text(
            "#calibration"
        )
        assert site.text(f"#calibration [data-realised='{nearest['quintile']}']") == _lp(
            nearest["realised_mean"]
        )
        # what followed the picks is not marked in-sample: it is the out-of-sample reading
        assert site.text("#calibration").startswith("what followed")
        assert not site.driver.find_elements("css selector", "#calibration .in-sample")
    zone = {"bottom": "Bottom", "mid": "Mid", "top": "Top"}[m["zone"]]
    assert site.text("#snapshot-out .facts .zone") == zone
    site.driver.find_element("id", "draw").click()
    traces = site.wait(
        lambda d: d.execute_script(
            "const c = document.getElementById('chart'); return c.data && c.data.map(t => t.name);"
        )
    )
    fitted = m["ou_entry"] is not None  # then the two OU levels are drawn too
    assert len(traces) == 10 + 2 * fitted
    assert ("OU entry (today's fit)" in traces) == fitted
    assert {
        "p5",
        "p5\u2013p15 band",
        "p85",
        "p85\u2013p95 band",
        "swap level 0.2",
        "swap level 0.8",
    } <= set(traces)
    assert f"ln({pair})" in traces
    site.wait(lambda d: d.find_elements("css selector", "#chart .main-svg .scatterlayer .trace"))


CHART_SIZE = """
const c = document.getElementById('chart'), svg = c.querySelector('.main-svg');
if (!svg) return null;
const box = svg.getBoundingClientRect();
return [Math.round(box.width), Math.round(box.height), c.clientWidth, c.clientHeight];
"""


def test_the_chart_follows_its_container_through_every_resize(site):
    """1366 -> 1100 -> 390 -> 1366 px: the plot keeps its container's size each time (it once
    collapsed to 32 px high after a resize and stayed so until recomputed)."""
    site.driver.set_window_size(*SIZES[1])
    if not site.driver.execute_script("return !!document.querySelector('#chart .main-svg')"):
        site.open("screen", "Screen")  # run alone: open the first survivor and draw it
        first = site.driver.find_element("css selector", "#survivors tbody a")
        pair = first.text
        first.click()
        site.wait(lambda d: site.text("main h1") == pair)
        site.driver.find_element("id", "draw").click()
        site.wait(lambda d: d.find_elements("css selector", "#chart .main-svg"))
    for width in (1366, 1100, 390, 1366):
        site.driver.set_window_size(width, 844)

        def fits(d: Any) -> Any:
            size = d.execute_script(CHART_SIZE)
            ok = size and abs(size[0] - size[2]) <= 2 and abs(size[1] - size[3]) <= 2
            return size if ok and size[1] >= 500 else None

        plot_w = site.wait(fits)[0]
        assert plot_w <= width and plot_w >= 0.8 * min(width, 1248) - 40, (width, plot_w)
    site.driver.set_window_size(*SIZES[1])


def test_watch_switch_and_remove_a_pair_through_the_api(site):
    pair = site.text("main h1")
    listed = lambda: site.get("/watchlist", site.personal).json()["items"]  # noqa: E731
    assert pair not in [i["pair"] for i in listed()]
    site.driver.find_element("id", "watch").click()
    site.wait(lambda d: site.text("#watch").startswith("Stop watching"))
    (item,) = [i for i in listed() if i["pair"] == pair]
    assert item["notify_approach"] is True
    site.open("watchlist", "Watchlist")
    row = f"#watchlist tr[data-pair='{pair}']"
    site.driver.find_element("css selector", f"{row} input[name=notify_approach]").click()
    site.wait(lambda d: [i["notify_approach"] for i in listed() if i["pair"] == pair] == [False])
    site.driver.find_element("css selector", f"{row} button.remove").click()
    site.wait(lambda d: site.text("#watch-message") == f"Removed {pair}.")
    assert pair not in [i["pair"] for i in listed()]


def test_any_pair_opens_from_the_screen_and_flips(site):
    site.open("screen", "Screen")
    form = site.driver.find_element("id", "any-pair")
    form.find_element("name", "a").send_keys("eth")
    form.find_element("name", "b").send_keys("BTC")
    form.find_element("css selector", "button").click()
    site.wait(lambda d: site.text("main h1") == "ETH/BTC")  # spelled as /assets spells it
    site.driver.find_element("link text", "See BTC/ETH").click()
    site.wait(lambda d: site.text("main h1") == "BTC/ETH")
    # An unknown ticker: the API's sentence, and nothing consumed.
    site.open("pair/NOPE/BTC", "NOPE/BTC")
    before = site.text("#remaining")
    site.driver.find_element("id", "snapshot").click()
    said = site.get("/pair/NOPE/BTC", site.personal).text.strip()
    site.wait(lambda d: site.text("#pair-message") == said)
    assert site.text("#remaining") == before


def test_the_account_page_sets_a_discord_channel_and_turns_it_off(site):
    from selenium.webdriver.support.ui import Select

    url = "https://discord.com/api/webhooks/1187001/AbCdEf-discord-token_42"
    site.open("account", "Account")
    form = site.driver.find_element("id", "channel-form")
    Select(form.find_element("name", "kind")).select_by_value("discord")
    form.find_element("name", "address").send_keys(url)
    form.find_element("css selector", "button[type=submit]").click()
    site.wait(lambda d: site.text("#channel-message") == "discord saved and enabled.")
    mine = lambda: {c["kind"]: c for c in site.get("/me", site.personal).json()["channels"]}  # noqa: E731
    assert mine()["discord"] == {
        "kind": "discord",
        "address": "https://discord.com/…",
        "enabled": True,
        "depeg_alerts": False,
    }
    row = "#channels tr[data-kind='discord']"
    assert "https://discord.com/…" in site.text(row) and "token" not in site.text("#channels")
    site.driver.find_element("css selector", f"{row} button.toggle").click()
    site.wait(lambda d: site.text("#channel-message") == "discord disabled.")
    assert mine()["discord"]["enabled"] is False
    assert "disabled" in site.text(row)
    # A URL elsewhere is refused with the API's sentence, and shown by its host only.
    form = site.driver.find_element("id", "channel-form")
    form.find_element("name", "address").send_keys("https://evil.example/api/webhooks/1/secret")
    form.find_element("css selector", "button[type=submit]").click()
    site.wait(lambda d: "incoming-webhook URL" in site.text("#channel-message"))
    assert "secret" not in site.text("#channel-message")


def test_the_account_form_offers_a_plugins_channel_kind_and_sets_it(site):
    from selenium.webdriver.support.ui import Select

    site.open("account", "Account")
    form = site.driver.find_element("id", "channel-form")
    choices = Select(form.find_element("name", "kind"))
    offered = [o.get_attribute("value") for o in choices.options]
    assert offered == ["discord", "ntfy", "slack", "telegram"]  # the self-service kinds, by name
    choices.select_by_value("ntfy")
    address = form.find_element("name", "address")
    assert address.get_attribute("placeholder") == "a topic URL: https://ntfy.sh/your-secret-topic"
    address.clear()  # the page may still hold what a test before typed
    address.send_keys("https://ntfy.sh/desk-alerts-secret-topic")
    form.find_element("css selector", "button[type=submit]").click()
    site.wait(lambda d: site.text("#channel-message") == "ntfy saved and enabled.")
    mine = {c["kind"]: c for c in site.get("/me", site.personal).json()["channels"]}
    assert mine["ntfy"]["address"] == "https://ntfy.sh/…" and mine["ntfy"]["enabled"] is True
    assert "https://ntfy.sh/…" in site.text("#channels tr[data-kind='ntfy']")
    assert "secret-topic" not in site.text("#channels")


def test_pegs_show_the_tier_note_to_personal_and_the_gold_depeg_to_pro(site):
    site.open("pegs", "Pegs")
    refused = site.get("/peg-events", site.personal).text.strip()
    assert refused in site.text(".tier-note")
    assert "PAXG" in site.text("#peg-status")
    site.sign_out()
    site.sign_in(site.pro)
    site.wait(lambda d: site.text("main h1") in ("Screen", "Pegs"))
    site.open("pegs", "Pegs")
    assert site.text("#events tbody th") == "PAXG"
    assert "-2.50 %" in site.text("#events tbody")
    # the hours off peg run from the first unhealthy sample to the last: both are shown
    event = site.get("/peg-events", site.pro).json()["events"][0]
    last = datetime.fromisoformat(event["last_unhealthy"]).astimezone(UTC)
    assert site.text("#events td[data-label='Last off peg']") == f"{last:%Y-%m-%d %H:%M} UTC"


def test_the_account_page_shows_the_quota_reset_from_the_timestamp(site):
    """``resets_at`` is an ISO timestamp alone: the page shows it in UTC and the time left."""
    site.driver.get(site.root)
    site.wait(lambda d: d.find_elements("id", "key") or site.text("main h1"))
    if site.driver.find_elements("id", "key"):
        site.sign_in(site.personal)
        site.wait(lambda d: site.text("main h1") == "Screen")
    site.open("account", "Account")
    resets = site.get("/me", site.personal).json()["quota"]["resets_at"]
    day, clock_time = resets[:10], resets[11:16]
    site.wait(lambda d: f"Resets at {day} {clock_time} UTC, in " in site.text("main"))
    assert "Invalid" not in site.text("main") and "NaN" not in site.text("main")


def test_a_rotated_key_is_refused_with_the_apis_sentence(site):
    from pairscreen.access import accounts

    old = site.pro
    with database.connection_context():
        site.pro = accounts.rotate_key("pro@example.com")
    said = site.get("/me", old).text.strip()
    site.driver.get(f"{site.root}#/assets")
    site.wait(lambda d: d.find_elements("id", "key"))
    assert site.text("#sign-in-error") == said
    assert site.driver.execute_script("return sessionStorage.getItem('pairscreen.key')") is None


def _serious(violations: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in violations
        if v.get("impact") in ("serious", "critical")
    ]


def test_every_page_fits_a_phone_and_a_desktop_and_passes_axe(site):
    from axe_selenium_python import Axe

    site.sign_in(site.personal)
    site.wait(lambda d: site.text("main h1") == "Assets")
    pair = site.get("/pairs", site.personal).json()["pairs"][0]["pair"]
    watched = httpx.put(
        f"{site.api}/watchlist/{pair}",
        headers={"Authorization": f"Bearer {site.personal}"},
        timeout=30,
    )
    assert watched.status_code == 201  # so that the watchlist page shows its table
    headings = {"pair": pair, **{p: p.capitalize() for p in PAGES if p != "pair"}}
    problems = []
    axe = Axe(site.driver)
    for width, height in SIZES:
        site.driver.set_window_size(width, height)
        for page in PAGES:
            site.open(f"pair/{pair}" if page == "pair" else page, headings[page])
            if page == "pair":
                site.driver.find_element("id", "both").click()
                site.wait(lambda d: d.find_elements("css selector", "#chart .main-svg"))
                site.wait(lambda d: d.find_elements("css selector", "#snap-title"))
            overflow = site.driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            if overflow > 0:
                problems.append(f"{page} at {width}px: the page scrolls {overflow}px sideways")
            full = site.driver.execute_script(
                "window.scrollTo(0, 0);"
                "document.querySelectorAll('.table-wrap').forEach(w => { w.scrollLeft = 0; });"
                "return document.documentElement.scrollHeight"
            )
            site.driver.set_window_size(width, min(max(full, height), 6000))
            site.driver.save_screenshot(str(artifact_path(f"site-{page}-{width}.png")))
            site.driver.set_window_size(width, height)
            axe.inject()
            found = _serious(axe.run()["violations"])
            problems += [f"{page} at {width}px: {v}" for v in found]
    site.sign_out()
    assert not site.driver.find_element("id", "who").is_displayed()
    axe.inject()
    problems += [f"sign-in: {v}" for v in _serious(axe.run()["violations"])]
    site.driver.save_screenshot(str(artifact_path("site-sign-in-1366.png")))
    assert not problems, "\n".join(problems)
