"""``/screen/latest`` and ``/pairs``: gzip when accepted, an ETag per screen, 304 on a match."""

from __future__ import annotations

import gzip
import json

import pytest

from pairscreen.api.http_cache import accepts_gzip, not_modified
from pairscreen.db.connection import database
from pairscreen.screening.screen import run_screen

BASE = "/api/v1"
PATHS = ("/screen/latest", "/pairs")


@pytest.mark.parametrize("path", PATHS)
def test_gzip_when_accepted_and_the_same_json_either_way(client, keys, path):
    plain = client.get(f"{BASE}{path}", keys.personal, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200
    assert "content-encoding" not in plain.headers
    with client.client.stream(
        "GET",
        f"{BASE}{path}",
        headers={"Authorization": f"Bearer {keys.personal}", "Accept-Encoding": "gzip"},
    ) as packed:
        raw = b"".join(packed.iter_raw())
        assert packed.status_code == 200
        assert packed.headers["content-encoding"] == "gzip"
        assert packed.headers["vary"] == "Accept, Accept-Encoding"
    assert len(raw) < len(plain.content) / 2
    assert json.loads(gzip.decompress(raw)) == plain.json()


@pytest.mark.parametrize("path", PATHS)
def test_etag_names_the_screen_and_a_match_answers_304(client, keys, runtime, path):
    first = client.get(f"{BASE}{path}", keys.personal)
    tag = first.headers["etag"]
    assert tag.startswith('W/"screen-')
    again = client.get(f"{BASE}{path}", keys.personal, headers={"If-None-Match": tag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == tag
    strong = tag.removeprefix("W/")
    listed = client.get(
        f"{BASE}{path}", keys.personal, headers={"If-None-Match": f'"other", {strong}'}
    )
    assert listed.status_code == 304
    other = client.get(f"{BASE}{path}", keys.personal, headers={"If-None-Match": '"other"'})
    assert other.status_code == 200 and other.json() == first.json()
    with database.connection_context():
        run_screen(runtime, processes=1)
    newer = client.get(f"{BASE}{path}", keys.personal, headers={"If-None-Match": tag})
    assert newer.status_code == 200
    assert newer.headers["etag"] != tag


def test_if_none_match_is_checked_after_the_key(client, keys):
    tag = client.get(f"{BASE}/pairs", keys.personal).headers["etag"]
    assert (
        client.get(f"{BASE}/pairs", keys.no_tier, headers={"If-None-Match": tag}).status_code == 403
    )
    assert client.get(f"{BASE}/pairs", headers={"If-None-Match": tag}).status_code == 401


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip", True),
        ("gzip, deflate, br", True),
        ("br;q=1.0, gzip;q=0.5", True),
        ("GZIP", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0, *", False),
        ("identity", False),
        ("", False),
        ("deflate, *;q=0", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_accept_encoding(header, expected):
    assert accepts_gzip(header) is expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('W/"screen-3"', True),
        ('"screen-3"', True),
        ('"a", W/"screen-3"', True),
        ("*", True),
        ('W/"screen-4"', False),
        ("", False),
        ("screen-3", False),
    ],
)
def test_if_none_match(header, expected):
    assert not_modified(header, 'W/"screen-3"') is expected


def test_warm_up_loads_the_candles_before_the_first_request(database_url, tmp_path):
    from pairscreen.app import warm_up
    from pairscreen.bootstrap import build_runtime
    from pairscreen.config import load_settings

    rt = build_runtime(load_settings(data_dir=tmp_path, database_url=database_url))
    assert not rt.candles.loaded
    warm_up(rt)
    assert rt.candles.loaded
    assert "BTC" in rt.candles.get()
