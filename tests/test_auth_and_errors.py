"""Authentication matrix, tier gating and plain-text errors."""

from __future__ import annotations

import re

import pytest

from pairscreen.access import accounts
from pairscreen.access import keys as api_keys
from pairscreen.db.connection import database
from pairscreen.db.models import QuotaUsage

BASE = "/api/v1"
OPERATIONS = [
    "/me",
    "/screen/latest",
    "/screens?at=2025-01-01",
    "/pairs",
    "/screen/latest/pairs/ETH/BTC",
    "/pair/ETH/BTC",
    "/watchlist",
    "/peg-events",
]
TEXT = "text/plain; charset=utf-8"


def _bad_headers(valid_but_unknown: str, revoked: str) -> dict[str, dict]:
    return {
        "missing": {},
        "non-bearer": {"Authorization": "Basic dXNlcjpwYXNz"},
        "bearer-without-token": {"Authorization": "Bearer"},
        "malformed": {"Authorization": "Bearer not-a-key"},
        "bad-checksum": {
            "Authorization": f"Bearer {valid_but_unknown[:-1]}"
            f"{'A' if valid_but_unknown[-1] != 'A' else 'B'}"
        },
        "unknown": {"Authorization": f"Bearer {valid_but_unknown}"},
        "revoked": {"Authorization": f"Bearer {revoked}"},
    }


def test_key_format_checksum_and_no_collisions():
    keys = {api_keys.generate_key() for _ in range(100_000)}
    assert len(keys) == 100_000
    pattern = re.compile(r"^rr_[0-9A-Za-z]{32}$")
    assert all(pattern.match(k) and api_keys.is_well_formed(k) for k in keys)
    import random

    rng = random.Random(7)
    alphabet = api_keys.ALPHABET
    forged = ["rr_" + "".join(rng.choice(alphabet) for _ in range(32)) for _ in range(100_000)]
    rejected = sum(not api_keys.is_well_formed(k) for k in forged)
    assert rejected >= 100_000 - 2  # a random string passes CRC32 with p = 62**-6


def test_authentication_matrix_every_operation(client, keys):
    unknown = api_keys.generate_key()
    with database.connection_context():
        old = keys.personal
        accounts.rotate_key("personal@example.com")
    for name, headers in _bad_headers(unknown, old).items():
        for path in OPERATIONS:
            r = client.get(BASE + path, headers=headers)
            assert r.status_code == 401, (name, path, r.status_code, r.text)
            assert r.headers["content-type"] == TEXT
            assert r.headers["www-authenticate"].startswith("Bearer")
            assert "Traceback" not in r.text and r.text.strip()


def test_tier_gating_and_expired_and_no_tier(client, keys):
    for path in OPERATIONS:
        for key, why in ((keys.expired, "expired"), (keys.no_tier, "no API tier")):
            r = client.get(BASE + path, key)
            assert r.status_code == 403, (path, r.text)
            assert why in r.text
            assert r.headers["content-type"] == TEXT
    r = client.get(BASE + "/peg-events", keys.personal)
    assert r.status_code == 403 and "pro tier" in r.text
    with database.connection_context():
        assert QuotaUsage.select().count() == 0


@pytest.mark.parametrize(
    "path, needle",
    [
        ("/pair/BT-C/ETH", "letters or digits"),
        ("/pair/" + "A" * 21 + "/ETH", "letters or digits"),
        ("/pair/" + "A" * 5000 + "/ETH", "letters or digits"),
        ("/pair/ETH/BTC?bt=30", "allowed: 90, 180 or 360"),
        ("/pair/ETH/BTC?bt=abc", "Bad request"),
        ("/pair/ETH/BTC?foo=1", "query parameter 'foo' is unknown; allowed: bt."),
        ("/me?x=1", "query parameter 'x' is unknown; allowed: none."),
    ],
)
def test_bad_input_is_400_plain_text(client, keys, path, needle):
    r = client.get(BASE + path, keys.personal)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"] == TEXT
    assert needle in r.text
    assert "\n" not in r.text.strip()


def test_unknown_route_and_wrong_method_are_plain_text(client, keys):
    r = client.get(BASE + "/nope", keys.personal)
    assert r.status_code == 404 and r.headers["content-type"] == TEXT
    r = client.get("/elsewhere", keys.personal)
    assert r.status_code == 404 and r.headers["content-type"] == TEXT
    r = client.request("POST", BASE + "/me", headers={"Authorization": f"Bearer {keys.personal}"})
    assert r.status_code == 405 and r.headers["content-type"] == TEXT
    assert "GET" in r.text


def test_plugin_crash_is_plain_500_and_consumes_nothing(runtime, keys, monkeypatch):
    from tests.conftest import make_client

    strategy = runtime.plugins.strategies.get("accumulation")

    def boom(*args, **kwargs):
        raise RuntimeError("secret internal detail /etc/passwd")

    monkeypatch.setattr(type(strategy), "run", boom)
    c = make_client(runtime)
    with c.client:
        r = c.get(BASE + "/pair/ETH/BTC", keys.personal)
        assert r.status_code == 500
        assert r.headers["content-type"] == TEXT
        assert "secret" not in r.text and "passwd" not in r.text
        assert c.get(BASE + "/me", keys.personal).json()["quota"]["used_today"] == 0


def test_no_plaintext_key_at_rest_or_in_logs(client, keys, database_url, caplog):
    """Keys live only as digests; nothing logs them, even on failures."""
    import logging

    from tests.support.databases import stored_text

    caplog.set_level(logging.DEBUG)
    for key in (keys.personal, keys.pro):
        client.get(BASE + "/me", key)
        client.get(BASE + "/pair/NOPE/BTC", key)
    client.get(BASE + "/me", keys.personal[:-1] + "0")
    dump, raw = stored_text(database_url)
    for key in (keys.personal, keys.pro, keys.expired, keys.no_tier):
        assert key not in dump
        assert key.encode() not in raw
        assert key[3:] not in caplog.text
        assert api_keys.digest(key) in dump
