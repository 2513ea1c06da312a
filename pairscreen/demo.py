"""Everything ``pairscreen demo`` prepares: data, two accounts with keys, watchlists, a screen.

The demo data is synthetic and is labelled so wherever a person sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from pairscreen import clock
from pairscreen.access import accounts
from pairscreen.market.sync import sync_candles
from pairscreen.notify import watchlist
from pairscreen.pegs.sampling import backfill_pegs
from pairscreen.progress import Progress, no_progress
from pairscreen.runtime import Runtime
from pairscreen.screen_store.publish import ScreenSummary
from pairscreen.screening.screen import run_screen

PERSONAL_EMAIL = "personal@demo.pairscreen.local"
PRO_EMAIL = "pro@demo.pairscreen.local"
DEMO_PEG_HOURS = 72  # hourly peg samples backfilled: covers a weekend of stale gold quotes


@dataclass(frozen=True)
class DemoSetup:
    personal_key: str
    pro_key: str
    screen: ScreenSummary
    watched: dict[str, list[str]]


def prepare_demo(
    rt: Runtime, step: Callable[[str], Progress] = lambda _label: no_progress
) -> DemoSetup:
    """Sync the demo market, create the accounts, sample the pegs of the last days hour by
    hour, run the first screen, fill watchlists.

    ``step(label)`` gives the listener of each long step's progress (the CLI draws a bar).
    """
    sync_candles(rt.universe, rt.plugins, on_progress=step("market data"))
    accounts.create_user(
        PERSONAL_EMAIL, "personal", expires=clock.now().replace(microsecond=0) + timedelta(days=365)
    )
    accounts.create_user(PRO_EMAIL, "pro", lifetime=True)
    keys = {email: accounts.rotate_key(email) for email in (PERSONAL_EMAIL, PRO_EMAIL)}
    # Peg samples first, so the first screen already keeps the depegged asset out.
    backfill_pegs(rt, DEMO_PEG_HOURS, on_progress=step("peg samples"))
    summary = run_screen(rt, on_progress=step("first screen"))
    watched = _fill_watchlists(rt)
    return DemoSetup(keys[PERSONAL_EMAIL], keys[PRO_EMAIL], summary, watched)


def _fill_watchlists(rt: Runtime) -> dict[str, list[str]]:
    import json

    from pairscreen.screening.screen import latest_screen_json

    survivors = [
        f"{s['pair'][0]}/{s['pair'][1]}" for s in json.loads(latest_screen_json(rt))["survivors"]
    ]
    cross = [f"{a}/{b}" for a, b in rt.universe.cross_pairs]
    plan = {
        PERSONAL_EMAIL: (survivors[:3] or cross[:3]),
        PRO_EMAIL: (survivors[3:5] + cross[:1]) or cross[:3],
    }
    for email, pairs in plan.items():
        for pair in pairs:
            watchlist.add_item(rt.universe, email, pair)
    return {email: list(pairs) for email, pairs in plan.items()}
