"""Every page of the site under its Content-Security-Policy, in headless Chromium.

The policy runs scripts from this origin only and never evaluates a string as code
(``script-src 'self'``, no ``'unsafe-eval'``): the vendored strict build of plotly.js draws
the map's WebGL points with precompiled code. Reuses ``tests/test_website.py``'s live server
and browser (a module of its own here). Each page is opened (the sign-in form, the screen, the
map on both axes, a pair with its snapshot and chart, the watchlist, pegs, assets, account);
then Chromium's console (``driver.get_log("browser")``) and the page's own
``securitypolicyviolation`` events must hold no violation and no uncaught error, and the map
must have painted its points on its WebGL canvas (pixels on the canvas with plotly's SVG
layers hidden). Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import io

import httpx
import numpy as np
import pytest

from tests import test_website as web
from tests.support.chromium import artifact_path
from tests.test_website import Site

site = web.site
site_database = web.site_database

pytestmark = pytest.mark.slow

# Kept by the page from the moment it is loaded: hash navigation keeps the document.
LISTEN = """
window.cspViolations ??= [];
document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(
  `${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} in ${e.sourceFile}`));
"""
# The map's WebGL canvases alone: plotly's SVG layers (background, axes, zone lines, legend)
# hidden, so a pixel that is not the page's background is a point drawn by WebGL.
GL_ONLY = """
const m = document.getElementById('map');
m.querySelectorAll('.main-svg').forEach((s) => { s.style.visibility = arguments[0]; });
return m.querySelectorAll('canvas').length;
"""


def _console_problems(site: Site) -> list[str]:
    """Console entries that are a CSP violation or an uncaught error (this read empties the log)."""
    entries = site.driver.get_log("browser")
    words = ("Content Security Policy", "Refused to", "unsafe-eval", "Uncaught")
    return [e["message"] for e in entries if any(w in e["message"] for w in words)]


def _painted_points(site: Site) -> tuple[int, int]:
    """(points plotted, pixels the WebGL canvases painted) on the map as it stands."""
    from PIL import Image

    points = int(
        site.driver.execute_script(
            "return document.getElementById('map')._fullData"
            ".filter(t => t.type === 'scattergl' && t.visible === true)"
            ".reduce((n, t) => n + t.x.length, 0)"
        )
    )
    canvases = site.driver.execute_script(GL_ONLY, "hidden")
    try:
        shot = site.driver.find_element("id", "map").screenshot_as_png
    finally:
        site.driver.execute_script(GL_ONLY, "")
    assert canvases, "the map has no WebGL canvas"
    pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB"), dtype=np.int16)
    away = np.abs(pixels - pixels[1, 1]).max(axis=2)  # from the background, per pixel
    return points, int((away > 40).sum())


def test_every_page_runs_under_the_policy_without_eval_and_the_map_draws(site: Site) -> None:
    policy = httpx.get(site.root, timeout=30).headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-eval" not in policy
    site.driver.set_window_size(1366, 900)
    site.driver.get(site.root)
    site.driver.execute_script(LISTEN)
    site.wait(lambda d: d.find_elements("id", "key"))
    site.sign_in(site.personal)
    site.wait(lambda d: site.text("main h1") == "Screen")
    site.wait(lambda d: not d.find_elements("css selector", "main .loading"))
    site.driver.save_screenshot(str(artifact_path("site-csp-screen-1366.png")))

    for axis in ("hurst", "halflife"):
        site.open("map" if axis == "hurst" else f"map?x={axis}", "Map")
        site.wait(
            lambda d: d.execute_script("return !!document.getElementById('map').dataset.drawnAt")
        )
        assert not site.driver.find_elements("css selector", "#map .no-webgl")
        points, painted = _painted_points(site)
        missing = site.text("#map-missing")
        assert points > 0, missing
        # A point is drawn 8 px wide: at least a dozen pixels each, whatever the overlaps.
        assert painted >= 12 * points, (points, painted)
        site.driver.save_screenshot(str(artifact_path(f"site-csp-map-{axis}-1366.png")))

    first = site.get("/pairs", site.personal).json()["pairs"][0]["pair"]
    site.open(f"pair/{first}?bt=90", first)
    site.driver.find_element("id", "both").click()
    site.wait(lambda d: d.find_elements("css selector", "#chart .main-svg .scatterlayer .trace"))
    site.wait(lambda d: d.find_elements("id", "snap-title"))

    for page, heading in (
        ("watchlist", "Watchlist"),
        ("pegs", "Pegs"),
        ("assets", "Assets"),
        ("account", "Account"),
        ("screen", "Screen"),
    ):
        site.open(page, heading)

    violations = site.driver.execute_script("return window.cspViolations")
    assert violations == [], violations
    assert _console_problems(site) == []
