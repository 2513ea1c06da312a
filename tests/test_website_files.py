"""The website's files, served by the app beside the API (the quick, browser-free half).

``/`` is the page, ``/static/…`` its stylesheet and modules from the installed package, and
``/static/vendor/plotly.min.js`` the ``plotly`` wheel's own offline bundle, byte for byte:
nothing comes from another host. Every file carries the site's security headers.
"""

from __future__ import annotations

import re

from pairscreen.web.site import SECURITY_HEADERS, plotly_bundle, static_dir


def test_the_page_and_its_files_are_served_with_the_sites_headers(client):
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    for name, value in SECURITY_HEADERS.items():
        assert page.headers[name] == value
    assert "script-src 'self'" in page.headers["content-security-policy"]
    # Every script and stylesheet the page names is served, from this origin only.
    linked = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
    assert linked
    for path in linked:
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page.text)


def test_every_module_imports_only_files_that_are_served(client):
    for module in (static_dir() / "js").glob("*.js"):
        r = client.get(f"/static/js/{module.name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
        for imported in re.findall(r'from "\./([^"]+)"', module.read_text()):
            assert client.get(f"/static/js/{imported}").status_code == 200, (module, imported)
        assert "http://" not in module.read_text() and "https://" not in module.read_text()


def test_plotly_comes_from_the_installed_wheel(client):
    r = client.get("/static/vendor/plotly.min.js")
    assert r.status_code == 200
    assert r.content == plotly_bundle().read_bytes()
    assert len(r.content) > 1_000_000


def test_missing_files_and_other_methods_are_plain_text(client):
    missing = client.get("/static/nope.js")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/plain")
    outside = client.get("/static/../openapi.yaml")
    assert outside.status_code == 404
    posted = client.request("POST", "/")
    assert posted.status_code == 405 and posted.headers["allow"] == "GET"
    assert posted.headers["content-type"].startswith("text/plain")
