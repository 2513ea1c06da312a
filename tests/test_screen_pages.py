"""Filters and pages of ``/pairs`` and ``/screen/latest``: sector, zone, min_score, limit
and cursor, the same on both views."""

from __future__ import annotations

import pytest

from pairscreen.db.connection import database
from pairscreen.screening.screen import run_screen

BASE = "/api/v1"


def pair_name(item: dict) -> str:
    """``ETH/BTC`` for a compact pair or a survivor."""
    return item["pair"] if isinstance(item["pair"], str) else "/".join(item["pair"])


def zone_of(item: dict) -> str | None:
    return item["metrics"].get("zone") if "metrics" in item else item.get("zone")


VIEWS = {"/pairs": "pairs", "/screen/latest": "survivors"}


@pytest.fixture(params=sorted(VIEWS))
def view(request) -> tuple[str, str]:
    return request.param, VIEWS[request.param]


def everything(client, key, view) -> list[dict]:
    """The whole view, best score first (the order of every page)."""
    path, items = view
    whole = client.get(f"{BASE}{path}", key).json()[items]
    return sorted(whole, key=lambda item: -item["score"])


def pages(client, key, view, query: str) -> list[list[dict]]:
    path, items = view
    out, cursor = [], None
    while True:
        suffix = f"&cursor={cursor}" if cursor else ""
        r = client.get(f"{BASE}{path}?{query}{suffix}", key)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["count"] == len(body[items])
        out.append(body[items])
        cursor = body.get("next_cursor")
        if cursor is None:
            return out


def test_without_parameters_the_view_is_unchanged(client, keys, view):
    path, items = view
    body = client.get(f"{BASE}{path}", keys.personal).json()
    assert "next_cursor" not in body and len(body[items]) > 3
    if path == "/screen/latest":
        assert "count" not in body and body["n_survivors"] == len(body[items])


def test_pages_of_limit_walk_the_whole_view_in_score_order(client, keys, view):
    whole = everything(client, keys.personal, view)
    walked = pages(client, keys.personal, view, "limit=3")
    assert all(len(page) == 3 for page in walked[:-1]) and 1 <= len(walked[-1]) <= 3
    assert [p for page in walked for p in page] == whole


def test_a_page_of_the_screen_keeps_the_screens_other_fields(client, keys):
    whole = client.get(f"{BASE}/screen/latest", keys.personal).json()
    page = client.get(f"{BASE}/screen/latest?limit=2", keys.personal).json()
    assert page["count"] == 2 and page["next_cursor"]
    kept = {k: v for k, v in whole.items() if k != "survivors"}
    assert {k: page[k] for k in kept} == kept  # n_survivors stays the screen's total


def test_filters_keep_exactly_the_matching_pairs(client, keys, view):
    path, items = view
    whole = everything(client, keys.personal, view)
    sector = whole[0]["sector"]
    zone = zone_of(whole[-1])
    median = sorted(p["score"] for p in whole)[len(whole) // 2]
    cases = {
        f"sector={sector}": [p for p in whole if p["sector"] == sector],
        f"zone={zone}": [p for p in whole if zone_of(p) == zone],
        f"min_score={median}": [p for p in whole if p["score"] >= median],
        # the sector and zone of one pair, so that the combination is never empty
        f"sector={whole[-1]['sector']}&zone={zone}&limit=2": [
            p for p in whole if p["sector"] == whole[-1]["sector"] and zone_of(p) == zone
        ],
    }
    for query, expected in cases.items():
        assert expected, query
        got = [p for page in pages(client, keys.personal, view, query) for p in page]
        assert [pair_name(p) for p in got] == [pair_name(p) for p in expected], query
        assert got == expected, query
    nothing = client.get(f"{BASE}{path}?sector=nowhere", keys.personal).json()
    assert nothing[items] == [] and nothing["count"] == 0 and "next_cursor" not in nothing


def test_a_cursor_of_a_replaced_screen_or_a_made_up_one_is_refused(client, keys, runtime, view):
    path, _ = view
    cursor = client.get(f"{BASE}{path}?limit=1", keys.personal).json()["next_cursor"]
    for bad in ("x.1", "12", "1.-3"):
        r = client.get(f"{BASE}{path}?limit=1&cursor={bad}", keys.personal)
        assert r.status_code == 400 and "cursor" in r.text
    with database.connection_context():
        run_screen(runtime, processes=1)
    r = client.get(f"{BASE}{path}?limit=1&cursor={cursor}", keys.personal)
    assert r.status_code == 404
    assert "a newer screen has been published" in r.text


def test_bad_filter_values_name_the_parameter(client, keys, view):
    path, _ = view
    for query, name in (
        ("limit=0", "limit"),
        ("zone=middle", "zone"),
        ("min_score=x", "min_score"),
    ):
        r = client.get(f"{BASE}{path}?{query}", keys.personal)
        assert r.status_code == 400 and name in r.text


def test_csv_of_a_page_is_not_acceptable(client, keys, view):
    path, _ = view
    r = client.get(f"{BASE}{path}?limit=5", keys.personal, headers={"Accept": "text/csv"})
    assert r.status_code == 406 and "without" in r.text


def test_a_limit_out_of_range_says_the_range(client, keys, view):
    path, _ = view
    for limit in ("0", "1001"):
        r = client.get(f"{BASE}{path}?limit={limit}", keys.personal)
        assert r.status_code == 400
        assert r.text.rstrip().endswith(
            f"query parameter 'limit' is '{limit}'; allowed: an integer from 1 to 1000."
        )
