"""``/pairs`` filters and pages: sector, zone, min_score, limit and cursor."""

from __future__ import annotations

from pairscreen.db.connection import database
from pairscreen.screening.screen import run_screen

BASE = "/api/v1"


def pages(client, key, query: str) -> list[list[dict]]:
    out, cursor = [], None
    while True:
        suffix = f"&cursor={cursor}" if cursor else ""
        r = client.get(f"{BASE}/pairs?{query}{suffix}", key)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["count"] == len(body["pairs"])
        out.append(body["pairs"])
        cursor = body.get("next_cursor")
        if cursor is None:
            return out


def test_without_parameters_the_list_is_unchanged(client, keys):
    body = client.get(f"{BASE}/pairs", keys.personal).json()
    assert "next_cursor" not in body and body["count"] == len(body["pairs"]) > 3


def test_pages_of_limit_walk_the_whole_list_in_order(client, keys):
    everything = client.get(f"{BASE}/pairs", keys.personal).json()["pairs"]
    walked = pages(client, keys.personal, "limit=3")
    assert all(len(page) == 3 for page in walked[:-1]) and 1 <= len(walked[-1]) <= 3
    assert [p for page in walked for p in page] == everything


def test_filters_keep_exactly_the_matching_pairs(client, keys):
    everything = client.get(f"{BASE}/pairs", keys.personal).json()["pairs"]
    sector = everything[0]["sector"]
    zone = everything[-1]["zone"]
    median = sorted(p["score"] for p in everything)[len(everything) // 2]
    cases = {
        f"sector={sector}": [p for p in everything if p["sector"] == sector],
        f"zone={zone}": [p for p in everything if p.get("zone") == zone],
        f"min_score={median}": [p for p in everything if p["score"] >= median],
        f"sector={sector}&zone={zone}&limit=2": [
            p for p in everything if p["sector"] == sector and p.get("zone") == zone
        ],
    }
    for query, expected in cases.items():
        assert expected, query
        assert [p for page in pages(client, keys.personal, query) for p in page] == expected
    nothing = client.get(f"{BASE}/pairs?sector=nowhere", keys.personal).json()
    assert nothing["pairs"] == [] and nothing["count"] == 0 and "next_cursor" not in nothing


def test_a_cursor_of_a_replaced_screen_or_a_made_up_one_is_refused(client, keys, runtime):
    cursor = client.get(f"{BASE}/pairs?limit=1", keys.personal).json()["next_cursor"]
    for bad in ("x.1", "12", "1.-3"):
        r = client.get(f"{BASE}/pairs?limit=1&cursor={bad}", keys.personal)
        assert r.status_code == 400 and "cursor" in r.text
    with database.connection_context():
        run_screen(runtime, processes=1)
    r = client.get(f"{BASE}/pairs?limit=1&cursor={cursor}", keys.personal)
    assert r.status_code == 404
    assert "a newer screen has been published" in r.text


def test_bad_filter_values_name_the_parameter(client, keys):
    for query, name in (
        ("limit=0", "limit"),
        ("zone=middle", "zone"),
        ("min_score=x", "min_score"),
    ):
        r = client.get(f"{BASE}/pairs?{query}", keys.personal)
        assert r.status_code == 400 and name in r.text
