"""``/peg-events``: active sustained depeg events, Pro tier only."""

from __future__ import annotations

from typing import Any

from pairscreen.api.security import TokenInfo
from pairscreen.api.support import caller, with_database
from pairscreen.pegs.status import active_events


@with_database
def active_peg_events(token_info: TokenInfo) -> dict[str, Any]:
    caller(token_info).require_tier("pro")
    return active_events()
