"""HTTP that never surprises: HEAD, validation before admission, parameter errors, repeats.

Over HTTP through the app (every response checked against ``openapi.yaml``):

* ``HEAD`` on a compute endpoint is a 405 with ``Allow: GET`` and consumes nothing;
* a request that can never succeed (bad parameter, unknown or repeated ticker) answers 400
  or 404 even when the key's quota is used up (not 429) or its slots are all held (not 409);
* a parameter error names the parameter, shows what was given (cut to 64 characters) and
  says what is allowed;
* an unknown query parameter is named the same way, and a repeated one is a 400.
"""

from __future__ import annotations

import pytest

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.access import slots as compute_slots
from pairscreen.db.connection import database
from pairscreen.db.models import QuotaUsage

BASE = "/api/v1"
TEXT = "text/plain; charset=utf-8"
COMPUTE = ["/pair/ETH/BTC", "/pair/ETH/BTC/chart.png"]
# Requests that can never succeed, whatever the quota: (path, status, words of the answer).
HOPELESS = [
    ("/pair/ETH/ETH", 400, "Both legs are ETH"),
    ("/pair/eth/ETH", 400, "Both legs are ETH"),
    ("/pair/FOO/BTC", 404, "Unknown ticker 'FOO'"),
    ("/pair/ETH/FOO/chart.png", 404, "Unknown ticker 'FOO'"),
    ("/pair/BT-C/ETH", 400, "path parameter 'a' is 'BT-C'"),
    ("/pair/ETH/BTC?bt=abc", 400, "query parameter 'bt' is 'abc'"),
    # Integers in canonical form only ('+' in a query string is a space).
    ("/pair/ETH/BTC?bt=%2B90", 400, "query parameter 'bt' is '+90'; allowed: 90, 180 or 360"),
    ("/pair/ETH/BTC?bt=+90", 400, "query parameter 'bt' is ' 90'"),
    ("/pair/ETH/BTC?bt=090", 400, "query parameter 'bt' is '090'"),
    ("/pair/ETH/BTC?bt=90.0", 400, "query parameter 'bt' is '90.0'"),
    ("/pair/ETH/BTC/chart.png?size=huge", 400, "query parameter 'size' is 'huge'"),
    ("/pair/ETH/BTC?bt=90&bt=180", 400, "query parameter 'bt' is given 2 times"),
]


def _used_today(client, key: str) -> int:  # type: ignore[no-untyped-def]
    return client.get(f"{BASE}/me", key).json()["quota"]["used_today"]


@pytest.mark.parametrize("path", COMPUTE)
def test_head_on_a_compute_endpoint_is_405_and_consumes_nothing(client, keys, path):
    auth = {"Authorization": f"Bearer {keys.personal}"}
    for _ in range(3):
        r = client.request("HEAD", BASE + path, headers=auth)
        assert r.status_code == 405, r.status_code
        assert r.headers["allow"] == "GET"
        assert r.headers["content-type"] == TEXT
    assert _used_today(client, keys.personal) == 0
    assert client.get(BASE + path, keys.personal).status_code == 200
    assert _used_today(client, keys.personal) == 1


@pytest.mark.parametrize(("path", "status", "words"), HOPELESS)
def test_hopeless_requests_beat_an_exhausted_quota(client, keys, path, status, words):
    with database.connection_context():
        user = accounts.find_user("personal@example.com")
        QuotaUsage.create(user=user.id, day=clock.now().date(), used=200)
    assert client.get(BASE + "/pair/ETH/BTC", keys.personal).status_code == 429
    r = client.get(BASE + path, keys.personal)
    assert (r.status_code, r.headers["content-type"]) == (status, TEXT), r.text
    assert words in r.text


@pytest.mark.parametrize(("path", "status", "words"), HOPELESS)
def test_hopeless_requests_beat_busy_slots(client, keys, path, status, words):
    with database.connection_context():
        user = accounts.find_user("personal@example.com")
        held = [compute_slots.acquire(user.id, 2, clock.now(), 60) for _ in range(2)]
    assert all(held)
    assert client.get(BASE + "/pair/ETH/BTC", keys.personal).status_code == 409
    r = client.get(BASE + path, keys.personal)
    assert (r.status_code, r.headers["content-type"]) == (status, TEXT), r.text
    assert words in r.text
    with database.connection_context():
        for slot in held:
            compute_slots.release(slot)
    assert _used_today(client, keys.personal) == 0


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "/pair/ETH/BTC?bt=abc",
            "Bad request: query parameter 'bt' is 'abc'; allowed: 90, 180 or 360.",
        ),
        (
            "/pair/ETH/BTC?bt=30",
            "Bad request: query parameter 'bt' is '30'; allowed: 90, 180 or 360.",
        ),
        (
            "/pair/ETH/BTC/chart.png?size=tv",
            "Bad request: query parameter 'size' is 'tv'; allowed: desktop or phone.",
        ),
        (
            "/pair/ETH/BT-C",
            "Bad request: path parameter 'b' is 'BT-C'; allowed: 1-20 letters or digits.",
        ),
        (
            "/pair/ETH/BTC?size=phone",
            "Bad request: query parameter 'size' is unknown; allowed: bt. "
            "This endpoint accepts only the documented parameters.",
        ),
        (
            "/pair/ETH/BTC?bt=90&bt=180",
            "Bad request: query parameter 'bt' is given 2 times ('90', '180'); it takes one value.",
        ),
    ],
)
def test_parameter_errors_name_the_parameter_the_value_and_what_is_allowed(
    client, keys, path, expected
):
    r = client.get(BASE + path, keys.personal)
    assert (r.status_code, r.headers["content-type"]) == (400, TEXT)
    assert r.text == expected + "\n"


@pytest.mark.parametrize("value", ["1", "yes", "maybe"])
def test_a_boolean_parameter_error_says_true_or_false(client, keys, value):
    """A switch of the watchlist takes true or false (any case); the error says so, not
    "a valid value"."""
    auth = {"Authorization": f"Bearer {keys.personal}"}
    r = client.request("PUT", f"{BASE}/watchlist/ETH/BTC?notify_approach={value}", headers=auth)
    assert (r.status_code, r.headers["content-type"]) == (400, TEXT)
    assert r.text == (
        f"Bad request: query parameter 'notify_approach' is '{value}'; allowed: true or false.\n"
    )
    for accepted in ("false", "TRUE"):
        put = client.request(
            "PUT", f"{BASE}/watchlist/ETH/BTC?notify_approach={accepted}", headers=auth
        )
        assert put.status_code in (200, 201), put.text


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("{}", "the request body is an empty object; give at least one of its fields."),
        ("nope", "the request body is not valid JSON (Expecting value: line 1 column 1 (char 0))"),
        ('{"address": ', "the request body is not valid JSON (Expecting value: line 1 column 13"),
        ("[1]", "the request body is [1]; allowed: an object."),
        ('{"address": 5}', "field 'address' is 5; allowed: a string."),
        ('{"enabled": "yes"}', "field 'enabled' is 'yes'; allowed: true or false."),
    ],
)
def test_a_bad_channel_body_is_named_in_plain_words(client, keys, body, said):
    """The JSON decoder's and the schema validator's phrasing ("{} should be non-empty",
    "5 is not of type 'string' - 'address'") becomes a sentence saying what to send."""
    r = client.request(
        "PUT",
        f"{BASE}/me/channels/discord",
        headers={"Authorization": f"Bearer {keys.personal}", "Content-Type": "application/json"},
        content=body,
    )
    assert (r.status_code, r.headers["content-type"]) == (400, TEXT)
    assert r.text.startswith("Bad request: ") and said in r.text, r.text


def test_a_huge_value_is_cut_to_64_characters(client, keys):
    ticker = "A" * 60_000
    r = client.get(f"{BASE}/pair/{ticker}/ETH", keys.personal)
    assert (r.status_code, r.headers["content-type"]) == (400, TEXT)
    assert f"'{'A' * 64}'… (60000 characters)" in r.text
    assert "A" * 65 not in r.text and len(r.text) < 300
    r = client.get(f"{BASE}/pair/ETH/BTC?bt={'9' * 60_000}", keys.personal)
    assert r.status_code == 400 and "9" * 65 not in r.text and len(r.text) < 300
    r = client.get(f"{BASE}/pair/ETH/BTC?{'x' * 60_000}=1", keys.personal)
    assert r.status_code == 400 and "unknown" in r.text
    assert "x" * 65 not in r.text and len(r.text) < 300


@pytest.mark.parametrize(
    "query", ["bt=90&bt=90", "size=phone&size=desktop", "bt=90&size=phone&bt=360"]
)
def test_repeated_query_parameters_are_400(client, keys, query):
    r = client.get(f"{BASE}/pair/ETH/BTC/chart.png?{query}", keys.personal)
    assert (r.status_code, r.headers["content-type"]) == (400, TEXT)
    assert "given 2 times" in r.text and "it takes one value" in r.text
    assert _used_today(client, keys.personal) == 0
