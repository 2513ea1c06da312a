"""The watchlist state machine (docs/api.md): a pure function, no database.

States (``WatchlistItem.last_notified_state``): ``none``, ``approach_bottom``, ``in_bottom``,
``approach_top``, ``in_top``. Bands on the pair's ``position`` (0 = p5, 1 = p95):

======================  ============================
raw zone of a position  band
======================  ============================
``in_bottom``           position < 0.2
``approach_bottom``     0.2 ≤ position < 0.3
``none`` (mid)          0.3 ≤ position ≤ 0.7
``approach_top``        0.7 < position ≤ 0.8
``in_top``              position > 0.8
======================  ============================

An *excursion* starts when the position leaves mid toward one side and ends when it comes
back to mid. Within an excursion the state only deepens (``approach_*`` → ``in_*``), never
goes back, so each state is entered — and notified — at most once per excursion; returning
to mid re-arms. The item's flags decide which entries notify: ``notify_approach`` for
``approach_*`` and ``notify_in_zone`` for ``in_*``. The state moves whether or not the entry
notifies, so turning a flag on later never sends a stale notification.

Hysteresis: an excursion ends only when the position crosses back past the outer edge of
its approach band by ``margin`` (default 0.02): a bottom excursion ends at position
≥ 0.3 + margin, a top excursion at position ≤ 0.7 - margin. So a position flapping around
0.3 or 0.7 by less than the margin produces one notification, not one per flip; flapping
around 0.2 or 0.8 produces none after the first (the state only deepens). A position that
jumps from one side straight to the other ends the first excursion and starts the other.
A NaN position (no data) changes nothing. ``margin`` is the item's ``rearm_margin``.

Alert hygiene mutes an entry that would notify, without stopping the state: during the
item's *cooldown* (``cooldown_hours`` after its last notification) and until its *snooze*
ends (``snoozed_until``), the state still moves but nothing is sent, then or later
(:attr:`Transition.muted` says why). Like a switch turned on later, the end of a mute never
sends a stale notification: the next one is the next entry into a state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

State = Literal["none", "approach_bottom", "in_bottom", "approach_top", "in_top"]
STATES: tuple[str, ...] = ("none", "approach_bottom", "in_bottom", "approach_top", "in_top")

BOTTOM_EDGE = 0.2  # below: in the bottom zone
BOTTOM_APPROACH_EDGE = 0.3  # below (and ≥ 0.2): approaching the bottom zone
TOP_APPROACH_EDGE = 0.7  # above (and ≤ 0.8): approaching the top zone
TOP_EDGE = 0.8  # above: in the top zone
DEFAULT_MARGIN = 0.02
MAX_MARGIN = 0.2  # a bottom excursion then ends at 0.5 at the latest, the middle of mid
MAX_COOLDOWN_HOURS = 8760  # a year

_SIDE = {"approach_bottom": "bottom", "in_bottom": "bottom", "approach_top": "top", "in_top": "top"}

# Human wording of each state's band, used in messages.
BANDS: dict[str, str] = {
    "none": f"mid: {BOTTOM_APPROACH_EDGE} ≤ position ≤ {TOP_APPROACH_EDGE}",
    "approach_bottom": (
        f"approaching the bottom zone: {BOTTOM_EDGE} ≤ position < {BOTTOM_APPROACH_EDGE}"
    ),
    "in_bottom": f"bottom zone: position < {BOTTOM_EDGE}",
    "approach_top": f"approaching the top zone: {TOP_APPROACH_EDGE} < position ≤ {TOP_EDGE}",
    "in_top": f"top zone: position > {TOP_EDGE}",
}
BAND_LIMITS: dict[str, tuple[float | None, float | None]] = {
    "none": (BOTTOM_APPROACH_EDGE, TOP_APPROACH_EDGE),
    "approach_bottom": (BOTTOM_EDGE, BOTTOM_APPROACH_EDGE),
    "in_bottom": (None, BOTTOM_EDGE),
    "approach_top": (TOP_APPROACH_EDGE, TOP_EDGE),
    "in_top": (TOP_EDGE, None),
}


@dataclass(frozen=True)
class Transition:
    """The outcome of one evaluation: the new state and whether this entry notifies."""

    previous: str
    state: str
    notify: bool
    muted: str = ""  # "cooldown" or "snooze" when an entry that would notify was muted

    @property
    def moved(self) -> bool:
        return self.state != self.previous


def raw_state(position: float) -> str:
    """The band a position falls in, without any memory (the spec's strict inequalities)."""
    if position < BOTTOM_EDGE:
        return "in_bottom"
    if position < BOTTOM_APPROACH_EDGE:
        return "approach_bottom"
    if position <= TOP_APPROACH_EDGE:
        return "none"
    if position <= TOP_EDGE:
        return "approach_top"
    return "in_top"


def next_state(
    previous: str,
    position: float,
    *,
    notify_approach: bool = True,
    notify_in_zone: bool = True,
    margin: float = DEFAULT_MARGIN,
    now: datetime | None = None,
    last_notified_at: datetime | None = None,
    cooldown_hours: int = 0,
    snoozed_until: datetime | None = None,
) -> Transition:
    """Move ``previous`` by a new ``position``; see the module docstring for the rules.

    ``now`` is the time of the evaluation; the cooldown and the snooze need it.
    """
    if previous not in STATES:
        raise ValueError(f"unknown watchlist state {previous!r}")
    if position is None or not math.isfinite(position):
        return Transition(previous, previous, False)
    side = _SIDE.get(previous)
    new = raw_state(position)
    # Rounded so that 0.7 - 0.02 is 0.68, not 0.6799999999999999.
    bottom_exit = round(BOTTOM_APPROACH_EDGE + margin, 12)
    top_exit = round(TOP_APPROACH_EDGE - margin, 12)
    if side == "bottom" and position < bottom_exit:
        # Still in the bottom excursion: only deepen.
        new = "in_bottom" if position < BOTTOM_EDGE else previous
    elif side == "top" and position > top_exit:
        new = "in_top" if position > TOP_EDGE else previous
    notify = new != previous and new != "none" and _subscribed(new, notify_approach, notify_in_zone)
    muted = mute_reason(now, last_notified_at, cooldown_hours, snoozed_until) if notify else ""
    return Transition(previous, new, notify and not muted, muted)


def cooldown_end(last_notified_at: datetime | None, cooldown_hours: int) -> datetime | None:
    """When an item's cooldown ends: ``cooldown_hours`` after its last notification."""
    if last_notified_at is None or cooldown_hours <= 0:
        return None
    return last_notified_at + timedelta(hours=cooldown_hours)


def mute_reason(
    now: datetime | None,
    last_notified_at: datetime | None,
    cooldown_hours: int,
    snoozed_until: datetime | None,
) -> str:
    """``"snooze"`` or ``"cooldown"`` when a notification at ``now`` is muted, else ``""``."""
    if now is None:
        return ""
    if snoozed_until is not None and now < snoozed_until:
        return "snooze"
    until = cooldown_end(last_notified_at, cooldown_hours)
    if until is not None and now < until:
        return "cooldown"
    return ""


def _subscribed(state: str, notify_approach: bool, notify_in_zone: bool) -> bool:
    return notify_approach if state.startswith("approach_") else notify_in_zone
