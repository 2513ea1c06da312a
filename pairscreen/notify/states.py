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
A NaN position (no data) changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

State = Literal["none", "approach_bottom", "in_bottom", "approach_top", "in_top"]
STATES: tuple[str, ...] = ("none", "approach_bottom", "in_bottom", "approach_top", "in_top")

BOTTOM_EDGE = 0.2  # below: in the bottom zone
BOTTOM_APPROACH_EDGE = 0.3  # below (and ≥ 0.2): approaching the bottom zone
TOP_APPROACH_EDGE = 0.7  # above (and ≤ 0.8): approaching the top zone
TOP_EDGE = 0.8  # above: in the top zone
DEFAULT_MARGIN = 0.02

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
) -> Transition:
    """Move ``previous`` by a new ``position``; see the module docstring for the rules."""
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
    return Transition(previous, new, notify)


def _subscribed(state: str, notify_approach: bool, notify_in_zone: bool) -> bool:
    return notify_approach if state.startswith("approach_") else notify_in_zone
