"""The watchlist state machine: the transition table, flags, re-arming and hysteresis."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairscreen.notify.states import (
    DEFAULT_MARGIN,
    STATES,
    next_state,
    raw_state,
)

ALL = dict(notify_approach=True, notify_in_zone=True)

# (previous state, position, expected state, notifies with both flags on)
TABLE = [
    # from mid: entry is immediate, at the spec's band edges
    ("none", 0.5, "none", False),
    ("none", 0.3, "none", False),
    ("none", 0.2999, "approach_bottom", True),
    ("none", 0.2, "approach_bottom", True),
    ("none", 0.1999, "in_bottom", True),  # jumped past the approach band: one notification
    ("none", -0.4, "in_bottom", True),  # unclamped positions work
    ("none", 0.7, "none", False),
    ("none", 0.7001, "approach_top", True),
    ("none", 0.8, "approach_top", True),
    ("none", 0.8001, "in_top", True),
    ("none", 1.7, "in_top", True),
    # approaching the bottom: deepen at once, leave only past 0.3 + margin
    ("approach_bottom", 0.25, "approach_bottom", False),
    ("approach_bottom", 0.19, "in_bottom", True),
    ("approach_bottom", 0.31, "approach_bottom", False),  # inside the hysteresis margin
    ("approach_bottom", 0.3199, "approach_bottom", False),
    ("approach_bottom", 0.32, "none", False),  # back to mid re-arms, silently
    ("approach_bottom", 0.75, "approach_top", True),  # straight across to the other side
    ("approach_bottom", 0.85, "in_top", True),
    # in the bottom zone: never steps back to approach; leaves only via mid
    ("in_bottom", 0.1, "in_bottom", False),
    ("in_bottom", 0.21, "in_bottom", False),
    ("in_bottom", 0.29, "in_bottom", False),
    ("in_bottom", 0.31, "in_bottom", False),
    ("in_bottom", 0.32, "none", False),
    ("in_bottom", 0.72, "approach_top", True),
    ("in_bottom", 0.95, "in_top", True),
    # the top side mirrors the bottom
    ("approach_top", 0.75, "approach_top", False),
    ("approach_top", 0.81, "in_top", True),
    ("approach_top", 0.69, "approach_top", False),
    ("approach_top", 0.6801, "approach_top", False),
    ("approach_top", 0.68, "none", False),
    ("approach_top", 0.25, "approach_bottom", True),
    ("approach_top", 0.05, "in_bottom", True),
    ("in_top", 0.9, "in_top", False),
    ("in_top", 0.79, "in_top", False),
    ("in_top", 0.69, "in_top", False),
    ("in_top", 0.68, "none", False),
    ("in_top", 0.28, "approach_bottom", True),
    ("in_top", 0.1, "in_bottom", True),
]


@pytest.mark.parametrize(("previous", "position", "expected", "notifies"), TABLE)
def test_transition_table(previous, position, expected, notifies):
    t = next_state(previous, position, **ALL)
    assert (t.state, t.notify) == (expected, notifies)
    assert t.previous == previous
    assert t.moved == (expected != previous)


def test_every_state_pair_is_covered_by_the_table():
    """Each state appears as a source, and every reachable move appears in the table."""
    sources = {row[0] for row in TABLE}
    assert sources == set(STATES)
    moves = {(row[0], row[2]) for row in TABLE}
    # From any state, every other state except the impossible "deepest back to approach".
    for a in STATES:
        for b in STATES:
            impossible = (a, b) in {("in_bottom", "approach_bottom"), ("in_top", "approach_top")}
            if impossible:
                assert (a, b) not in moves
            elif a != b and not (a == "none" and b == "none"):
                assert (a, b) in moves, (a, b)


@pytest.mark.parametrize(
    ("approach", "in_zone", "walk", "notified"),
    [
        (True, True, [0.25, 0.15], ["approach_bottom", "in_bottom"]),
        (False, True, [0.25, 0.15], ["in_bottom"]),
        (True, False, [0.25, 0.15], ["approach_bottom"]),
        (False, False, [0.25, 0.15], []),
        (True, True, [0.75, 0.85, 0.5, 0.75], ["approach_top", "in_top", "approach_top"]),
        (False, True, [0.75, 0.85, 0.5, 0.9], ["in_top", "in_top"]),
    ],
)
def test_flags_choose_which_entries_notify_and_the_state_moves_anyway(
    approach, in_zone, walk, notified
):
    state, sent = "none", []
    for p in walk:
        t = next_state(state, p, notify_approach=approach, notify_in_zone=in_zone)
        if t.notify:
            sent.append(t.state)
        state = t.state
    assert sent == notified
    # The state moved exactly as with both flags on.
    assert state == walk_state(walk)


def walk_state(walk):  # type: ignore[no-untyped-def]
    state = "none"
    for p in walk:
        state = next_state(state, p, **ALL).state
    return state


def test_a_later_flag_change_does_not_send_a_stale_notification():
    # Approach notifications were off while the pair entered the approach band...
    t = next_state("none", 0.25, notify_approach=False, notify_in_zone=True)
    assert (t.state, t.notify) == ("approach_bottom", False)
    # ...turning them on now does not fire for an entry that already happened.
    assert not next_state(t.state, 0.26, **ALL).notify


def walk_notifications(positions, **flags):  # type: ignore[no-untyped-def]
    state, sent = "none", []
    for i, p in enumerate(positions):
        t = next_state(state, p, **(flags or ALL))
        if t.notify:
            sent.append((i, t.state))
        state = t.state
    return sent


@pytest.mark.parametrize(
    ("around", "first"),
    [
        (0.3, ["approach_bottom"]),
        (0.2, ["approach_bottom", "in_bottom"]),
        (0.7, ["approach_top"]),
        (0.8, ["approach_top", "in_top"]),
    ],
)
def test_flapping_around_a_boundary_is_not_a_storm(around, first):
    """200 flips by ±0.015 (inside the margin) around each edge: only the first entries."""
    wiggle = [around + (0.015 if i % 2 else -0.015) for i in range(200)]
    start = 0.5 if around in (0.3, 0.7) else (0.25 if around == 0.2 else 0.75)
    sent = walk_notifications([start, *wiggle])
    assert [s for _, s in sent] == first


def test_flapping_wider_than_the_margin_renotifies_each_real_excursion():
    # 0.28 <-> 0.33 really leaves the approach band and really comes back: each entry counts.
    sent = walk_notifications([0.28, 0.33] * 5)
    assert [s for _, s in sent] == ["approach_bottom"] * 5


def test_nan_position_changes_nothing():
    for state in STATES:
        t = next_state(state, math.nan, **ALL)
        assert (t.state, t.notify) == (state, False)


def test_unknown_state_is_rejected():
    with pytest.raises(ValueError):
        next_state("sideways", 0.5)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(min_value=-0.5, max_value=1.5, allow_nan=False), min_size=1, max_size=80),
    st.booleans(),
    st.booleans(),
)
def test_no_storm_property(positions, approach, in_zone):
    """Between two notifications of the same state the position went back to mid past the
    margin; and a notification always names the band the position is in."""
    sent = walk_notifications(positions, notify_approach=approach, notify_in_zone=in_zone)
    for i, state in sent:
        assert raw_state(positions[i]) == state
        assert approach if state.startswith("approach") else in_zone
    for state in STATES:
        times = [i for i, s in sent if s == state]
        for i, j in itertools.pairwise(times):
            between = positions[i + 1 : j + 1]
            if state.endswith("bottom"):
                assert any(p >= round(0.3 + DEFAULT_MARGIN, 12) for p in between)
            else:
                assert any(p <= round(0.7 - DEFAULT_MARGIN, 12) for p in between)


# Alert hygiene: cooldown, snooze and the re-arm margin, through the state machine itself.


def test_cooldown_mutes_entries_until_it_ends_while_the_state_moves():
    from datetime import UTC, datetime, timedelta

    notified = datetime(2026, 11, 26, 6, tzinfo=UTC)
    hold = dict(ALL, last_notified_at=notified, cooldown_hours=24)
    inside = next_state(
        "approach_bottom", 0.1, now=notified + timedelta(hours=23, minutes=59), **hold
    )
    assert (inside.state, inside.notify, inside.muted) == ("in_bottom", False, "cooldown")
    at_end = next_state("approach_bottom", 0.1, now=notified + timedelta(hours=24), **hold)
    assert (at_end.state, at_end.notify, at_end.muted) == ("in_bottom", True, "")
    # No cooldown (0 h) never mutes; neither does a cooldown without a notification yet.
    assert next_state("none", 0.1, now=notified, **dict(hold, cooldown_hours=0)).notify
    assert next_state("none", 0.1, now=notified, **dict(hold, last_notified_at=None)).notify
    # A move that would not notify anyway is not "muted".
    quiet = next_state("in_bottom", 0.5, now=notified, **hold)
    assert (quiet.state, quiet.notify, quiet.muted) == ("none", False, "")


def test_snooze_mutes_until_its_time_and_not_after():
    from datetime import UTC, datetime, timedelta

    until = datetime(2026, 12, 1, tzinfo=UTC)
    before = next_state("none", 0.75, now=until - timedelta(seconds=1), snoozed_until=until, **ALL)
    assert (before.state, before.notify, before.muted) == ("approach_top", False, "snooze")
    after = next_state("none", 0.75, now=until, snoozed_until=until, **ALL)
    assert (after.state, after.notify, after.muted) == ("approach_top", True, "")
    # Muted entries are not sent later: the next notification is the next entry.
    deeper = next_state(before.state, 0.9, now=until, snoozed_until=until, **ALL)
    assert (deeper.state, deeper.notify) == ("in_top", True)
    stays = next_state(before.state, 0.75, now=until, snoozed_until=until, **ALL)
    assert (stays.state, stays.notify) == ("approach_top", False)


@pytest.mark.parametrize("margin", [0.0, 0.02, 0.05, 0.1, 0.2])
def test_rearm_margin_sets_where_an_excursion_ends(margin):
    exit_bottom = round(0.3 + margin, 12)
    exit_top = round(0.7 - margin, 12)
    just_inside = next_state("in_bottom", exit_bottom - 1e-9, margin=margin, **ALL)
    assert just_inside.state == "in_bottom"
    assert next_state("in_bottom", exit_bottom, margin=margin, **ALL).state == "none"
    assert next_state("approach_top", exit_top + 1e-9, margin=margin, **ALL).state == "approach_top"
    assert next_state("approach_top", exit_top, margin=margin, **ALL).state == "none"


def test_a_wide_margin_turns_a_flapping_ratio_into_one_notification():
    """A position flapping between 0.25 and 0.34 notifies at each re-entry with the default
    margin (0.02: it leaves at 0.32), and once with a margin of 0.05 (it must reach 0.35)."""
    walk = [0.5, 0.25, 0.34, 0.25, 0.34, 0.25, 0.34, 0.25]

    def notifications(margin: float) -> int:
        state, sent = "none", 0
        for x in walk:
            t = next_state(state, x, margin=margin, **ALL)
            state, sent = t.state, sent + t.notify
        return sent

    assert notifications(DEFAULT_MARGIN) == 4
    assert notifications(0.05) == 1
