"""Each app serves the runtime it was built with: no runtime is kept in a module."""

from __future__ import annotations

from dataclasses import replace

import pairscreen.runtime
from pairscreen.db.connection import database
from tests.conftest import make_client

BASE = "/api/v1"


def test_two_apps_in_one_process_serve_their_own_runtime(runtime, keys):
    other = replace(runtime, settings=replace(runtime.settings, daily_limit_personal=7))
    first, second = make_client(runtime), make_client(other)
    with first.client, second.client:
        for _ in range(2):  # interleaved: neither app's requests see the other's runtime
            mine = first.get(f"{BASE}/me", keys.personal).json()["quota"]
            theirs = second.get(f"{BASE}/me", keys.personal).json()["quota"]
            assert mine["limit_per_day"] == runtime.settings.daily_limits["personal"]
            assert theirs["limit_per_day"] == 7
        snapshot = second.get(f"{BASE}/pair/ETH/BTC", keys.personal)
        assert snapshot.status_code == 200
        assert snapshot.headers["RateLimit"].startswith('"daily";r=6;')


def test_the_runtime_module_holds_no_runtime():
    assert not hasattr(pairscreen.runtime, "current")
    assert not hasattr(pairscreen.runtime, "install")
    assert not [
        v for v in vars(pairscreen.runtime).values() if isinstance(v, pairscreen.runtime.Runtime)
    ]


def test_each_runtime_holds_its_own_published_screen(runtime):
    other = replace(runtime, screens=type(runtime.screens)())
    with database.connection_context():
        mine = runtime.screens.latest()
        assert runtime.screens.recent(60) is mine
        assert other.screens.recent(60) is None, "another runtime has read nothing yet"
        runtime.screens.forget()
        assert runtime.screens.recent(60) is None
