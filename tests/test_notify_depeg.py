"""Depeg alerts: the framework's ``pairscreen_peg_event_changed`` implementation queues one
e-mail per interested user through the outbox, once per event change."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from pairscreen import PegEventChange, clock
from pairscreen.access.accounts import AccountError
from pairscreen.db.connection import database
from pairscreen.db.models import Outbox, PegEvent
from pairscreen.notify import channels, watchlist
from pairscreen.notify.depeg_alerts import DepegAlertsPlugin
from tests.support.receivers import make_user

OPENED = PegEventChange(
    ticker="PAXG",
    asset_class="tokenized_metal",
    change="opened",
    first_unhealthy=datetime(2025, 3, 3, 1, 0, tzinfo=UTC),
    last_unhealthy=datetime(2025, 3, 3, 14, 0, tzinfo=UTC),
    median_drift_pct=-2.43,
    sample_count=14,
    reference_source="demo",
)


@pytest.fixture()
def world(runtime, keys):  # type: ignore[no-untyped-def]
    with database.connection_context():
        yield runtime


def rows_by_user() -> dict[str, Outbox]:
    out = {}
    for row in Outbox.select().order_by(Outbox.id):
        assert row.user.email not in out, "more than one e-mail for one user"
        out[row.user.email] = row
    return out


def test_the_hook_is_implemented_by_the_framework_in_every_runtime(world):
    impls = world.plugins.pm.hook.pairscreen_peg_event_changed.get_hookimpls()
    assert any(isinstance(i.plugin, DepegAlertsPlugin) for i in impls)


def test_one_email_per_interested_user(world):
    u = world.universe
    # personal: two watched pairs with PAXG -> one e-mail naming both
    watchlist.add_item(u, "personal@example.com", "PAXG/BTC")
    watchlist.add_item(u, "personal@example.com", "ETH/PAXG")
    # pro, opted in to every depeg alert, watches nothing with PAXG
    channels.set_channels("pro@example.com", depeg_alerts=True)
    # another pro who did not opt in and watches nothing relevant: nothing
    make_user("quiet-pro@example.com", "pro", lifetime=True)
    watchlist.add_item(u, "quiet-pro@example.com", "ETH/BTC")
    # a watcher with e-mail turned off: nothing (depeg alerts are e-mail only)
    make_user("muted@example.com", "personal")
    watchlist.add_item(u, "muted@example.com", "BTC/PAXG")
    channels.disable_channel("muted@example.com", "email")
    channels.set_channels(
        "muted@example.com",
        addresses={"webhook": "https://h.example.com/m"},
        kinds=world.plugins.channel_kinds,
    )
    # a watcher whose tier expired: nothing
    watchlist.add_item(u, "expired@example.com", "PAXG/BTC")
    # a watcher with another e-mail address set: that address
    make_user("moved@example.com", "personal")
    watchlist.add_item(u, "moved@example.com", "PAXG/ETH")
    channels.set_channels(
        "moved@example.com",
        addresses={"email": "new@example.org"},
        kinds=world.plugins.channel_kinds,
    )

    world.plugins.peg_event_changed(OPENED)

    got = rows_by_user()
    assert sorted(got) == ["moved@example.com", "personal@example.com", "pro@example.com"]
    assert {r.channel for r in got.values()} == {"email"}
    assert got["moved@example.com"].address == "new@example.org"
    personal = got["personal@example.com"]
    assert personal.idempotency_key == f"depeg.PAXG.opened.20250303T010000Z.u{personal.user_id}"
    assert "PAXG" in personal.subject and "-2.43" in personal.subject
    for part in (personal.text, personal.html):
        assert "PAXG/BTC" in part and "ETH/PAXG" in part and "-2.43 %" in part
        assert "13.0 h" in part  # from first to last unhealthy sample
    assert "every depeg alert" in got["pro@example.com"].text
    payload = json.loads(personal.payload)
    assert payload["event"] == "depeg.opened" and payload["pairs"] == ["PAXG/BTC", "ETH/PAXG"]

    # Hearing about the same change again queues nothing; the close is a new e-mail each.
    world.plugins.peg_event_changed(OPENED)
    assert Outbox.select().count() == 3
    closed = PegEventChange(**{**OPENED.__dict__, "change": "closed"})
    world.plugins.peg_event_changed(closed)
    assert Outbox.select().count() == 6
    closing = Outbox.select().where(Outbox.idempotency_key.contains(".closed.")).first()
    assert "back on its peg" in closing.subject


def test_only_pro_users_may_opt_in(world):
    with pytest.raises(AccountError, match="Pro"):
        channels.set_channels("personal@example.com", depeg_alerts=True)
    # A Pro user who opted in and then lost the tier gets nothing.
    channels.set_channels("pro@example.com", depeg_alerts=True)
    from pairscreen.access.accounts import set_tier

    set_tier("pro@example.com", "personal", expires=clock.now() + timedelta(days=30))
    world.plugins.peg_event_changed(OPENED)
    assert Outbox.select().count() == 0


def test_peg_sampling_end_to_end_queues_the_alert(world):
    """The demo market's scripted PAXG depeg, detected by peg sampling, reaches the outbox."""
    from pairscreen.pegs.sampling import backfill_pegs

    watchlist.add_item(world.universe, "personal@example.com", "PAXG/BTC")
    watchlist.add_item(world.universe, "pro@example.com", "SOL/ETH")
    backfill_pegs(world, 72)
    event = PegEvent.get(PegEvent.ticker == "PAXG")
    got = rows_by_user()
    assert list(got) == ["personal@example.com"]
    row = got["personal@example.com"]
    first = event.first_unhealthy.astimezone(UTC)
    assert row.idempotency_key == f"depeg.PAXG.opened.{first:%Y%m%dT%H%M%SZ}.u{row.user_id}"
    assert "PAXG has depegged" in row.subject
    # Sampling again (same hours) queues nothing new.
    backfill_pegs(world, 2)
    assert Outbox.select().count() == 1
