"""``pairscreen notify run``: move every watchlist item's state and queue its notifications.

1. The live position of every watched pair (in the item's own orientation) is computed in
   one batch: the aligned histories are grouped by calendar (``group_by_history``), one panel
   per group, and ``position`` is read from the metrics (``compute_metrics``), exactly as
   ``/pair/{a}/{b}`` computes it.
2. Each item moves through :func:`pairscreen.notify.states.next_state`, with its own
   re-arm margin, cooldown and snooze (alert hygiene: a muted entry moves the state and
   sends nothing).
3. In one write transaction, each moved item is updated with a conditional UPDATE (``WHERE
   last_notified_state = <the state it was evaluated from>``) and, when the entry notifies
   and the owner's tier is active, one outbox row per enabled channel of the owner is
   queued, and the item's ``last_notified_at`` (where its cooldown starts) is set. A
   concurrent run that evaluated the same item from the same state matches no
   row and queues nothing; a crash before the commit leaves both the states and the outbox
   as they were.

A user watches a pair once, in one orientation (the unique ``pair_key`` of
:class:`~pairscreen.db.models.WatchlistItem`, migration 4), so one move of a ratio queues one
notification per channel of each watcher, never one for ``A/B`` and another for ``B/A``.

Idempotency key of a watchlist notification: ``watch.<item id>.<state>.<entry time>.<channel
kind>`` with the entry time in UTC (``YYYYMMDDTHHMMSSZ``): unique per entry into a state.
"""

from __future__ import annotations

import html
import logging
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pairscreen import clock
from pairscreen.access.accounts import Principal
from pairscreen.contracts.bars import DAILY
from pairscreen.db.connection import write_transaction
from pairscreen.db.models import JobRun, User, WatchlistItem
from pairscreen.engine.evaluate import compute_metrics
from pairscreen.engine.guarantees import PASSES
from pairscreen.engine.panels import AlignedPair, align, group_by_history
from pairscreen.engine.required_fields import POSITION
from pairscreen.market.freshness import candle_freshness
from pairscreen.market.pair_verdicts import pair_reason, pair_verdicts
from pairscreen.notify.channels import Destination, destinations
from pairscreen.notify.outbox import OutboxMessage, enqueue
from pairscreen.notify.states import BAND_LIMITS, BANDS, Transition, next_state
from pairscreen.pegs.status import active_depegs
from pairscreen.screening.screen_candles import screen_candles
from pairscreen.screening.spans import screen_spans
from pairscreen.wording import plural

if TYPE_CHECKING:
    from pairscreen.runtime import Runtime

log = logging.getLogger(__name__)

NOTIFY_JOB = "notify"

STATE_TITLES = {
    "approach_bottom": "is approaching the bottom zone",
    "in_bottom": "entered the bottom zone",
    "approach_top": "is approaching the top zone",
    "in_top": "entered the top zone",
    "none": "is back in mid",
}


@dataclass(frozen=True)
class PairPosition:
    position: float
    data_time: datetime  # 00:00 UTC of the last common candle; an intraday bar's close time
    bar: str = DAILY.name  # the universe's bar: a message says which close it read


@dataclass
class NotifyReport:
    items: int = 0
    evaluated: int = 0  # items whose pair had enough data for a position
    moved: int = 0
    muted: int = 0  # entries that would have notified but fell in a cooldown or a snooze
    notifications: int = 0  # outbox rows queued
    transitions: list[tuple[int, Transition]] | None = None
    # "A/B" -> the core's reason, for each watched pair it stops (no position, no move)
    held: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        return (
            f"{plural(self.items, 'watchlist item')}, {self.evaluated} with a position, "
            f"{self.moved} changed state, {plural(self.notifications, 'notification')} queued"
            + (f" ({self.muted} muted by a cooldown or snooze)" if self.muted else "")
        )


def held_pairs(rt: Runtime, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The watched pairs the core's verdict stops (a stale leg, no candles, too short a
    history, a leg in an active depeg event), each with its reason in the screen's words: no
    position is said from them."""
    return core_screened(rt, pairs)[1]


def core_screened(
    rt: Runtime, pairs: set[tuple[str, str]]
) -> tuple[list[AlignedPair], dict[tuple[str, str], str]]:
    """The pairs the core lets through, aligned, and the reason of each it stops."""
    spans = screen_spans(rt.universe, rt.settings)  # the screen's bar and spans
    candles = screen_candles(rt, spans.bar)
    fresh = candle_freshness(rt.universe, candles, spans.bar, clock.now())
    ordered = sorted(pairs)
    aligned = [
        align(candles[a], candles[b], spans.bar) if a in candles and b in candles else None
        for a, b in ordered
    ]
    history = [None if pair is None else pair.calendar_days for pair in aligned]
    minimum = spans.min_history_days
    depegs = active_depegs()
    verdicts = pair_verdicts(fresh, ordered, history, minimum, depegs).tolist()
    held = {
        key: pair_reason(fresh, key, verdict, days, minimum, depegs)
        for key, verdict, days in zip(ordered, verdicts, history, strict=True)
        if verdict != PASSES
    }
    kept = [
        pair
        for pair, verdict in zip(aligned, verdicts, strict=True)
        if verdict == PASSES and pair is not None and pair.n_days >= 2
    ]
    return kept, held


def live_positions(rt: Runtime, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], PairPosition]:
    """The current position of each (a, b) the core's verdict lets through, in one batch."""
    return positions_of(rt, core_screened(rt, pairs)[0])


def positions_of(rt: Runtime, aligned: list[AlignedPair]) -> dict[tuple[str, str], PairPosition]:
    """The current position of each aligned pair, one panel per calendar."""
    out: dict[tuple[str, str], PairPosition] = {}
    window = screen_spans(rt.universe, rt.settings).window_days
    for rows, panel in group_by_history(aligned, window + 1, window):
        values = compute_metrics(rt.plugins, panel).values
        if POSITION.name not in values:
            log.error("the position metric failed; watchlist states cannot move")
            return {}
        for j, i in enumerate(rows):
            pair = aligned[i]
            # 00:00 UTC of a daily candle's day; an intraday bar's close time
            unit = "datetime64[s]" if pair.bar.intraday else "datetime64[D]"
            last = pair.dates[-1].astype(unit)
            out[(pair.a, pair.b)] = PairPosition(
                float(values[POSITION.name][j]),
                datetime.fromisoformat(str(last)).replace(tzinfo=UTC),
                pair.bar.name,
            )
    return out


def run_notifications(rt: Runtime, *, at: datetime | None = None) -> NotifyReport:
    """Evaluate every watchlist item, move states, queue notifications (one transaction)."""
    at = (at or clock.now()).replace(microsecond=0)
    items = list(WatchlistItem.select().order_by(WatchlistItem.id))
    transitions: list[tuple[int, Transition]] = []
    report = NotifyReport(items=len(items), transitions=transitions)
    aligned, held = core_screened(rt, {(i.a, i.b) for i in items})
    report.held = {f"{a}/{b}": reason for (a, b), reason in held.items()}
    positions = positions_of(rt, aligned)
    planned: list[tuple[WatchlistItem, Transition, PairPosition]] = []
    for item in items:
        pos = positions.get((item.a, item.b))
        if pos is None or not math.isfinite(pos.position):
            continue
        report.evaluated += 1
        t = next_state(
            item.last_notified_state,
            pos.position,
            notify_approach=item.notify_approach,
            notify_in_zone=item.notify_in_zone,
            margin=item.rearm_margin,
            now=at,
            last_notified_at=item.last_notified_at,
            cooldown_hours=item.cooldown_hours,
            snoozed_until=item.snoozed_until,
        )
        if t.moved:
            planned.append((item, t, pos))
    owners = sorted({item.user_id for item, t, _ in planned if t.notify})
    active = _active_users(owners, at)
    with write_transaction():
        where = destinations([u for u in owners if u in active], rt.plugins.channel_kinds)
        for item, t, pos in planned:
            sends = t.notify and item.user_id in active
            values: dict[str, Any] = {"last_notified_state": t.state, "state_changed_at": at}
            if sends:
                values["last_notified_at"] = at
            changed = (
                WatchlistItem.update(**values)
                .where(
                    (WatchlistItem.id == item.id)
                    & (WatchlistItem.last_notified_state == t.previous)
                )
                .execute()
            )
            if changed != 1:
                continue  # another run moved it first
            report.moved += 1
            report.muted += bool(t.muted)
            transitions.append((item.id, t))
            if sends:
                report.notifications += enqueue(
                    _messages(item, t, pos, at, where.get(item.user_id, [])), at=at
                )
        JobRun.replace(name=NOTIFY_JOB, finished_at=clock.now()).execute()
    return report


def _active_users(user_ids: list[int], at: datetime) -> set[int]:
    """Users whose tier lets them use the service now (expired accounts get nothing)."""
    if not user_ids:
        return set()
    active = set()
    for u in User.select().where(User.id.in_(user_ids)):
        principal = Principal(u.id, u.email, u.tier, u.tier_expires_at, u.is_lifetime)
        if principal.tier_problem(at) is None:
            active.add(u.id)
    return active


def idempotency_key(item_id: int, state: str, entered: datetime, kind: str) -> str:
    return f"watch.{item_id}.{state}.{entered.astimezone(UTC):%Y%m%dT%H%M%SZ}.{kind}"


def _messages(
    item: WatchlistItem,
    t: Transition,
    pos: PairPosition,
    at: datetime,
    where: list[Destination],
) -> list[OutboxMessage]:
    content = watch_message(item.a, item.b, t, pos)
    return [
        OutboxMessage(
            idempotency_key=(key := idempotency_key(item.id, t.state, at, d.kind)),
            user_id=item.user_id,
            channel=d.kind,
            address=d.address,
            subject=content["subject"],
            text=content["text"],
            html=content["html"],
            payload={**content["payload"], "idempotency_key": key},
        )
        for d in where
    ]


def watch_message(a: str, b: str, t: Transition, pos: PairPosition) -> dict[str, Any]:
    """Subject, plain text, HTML and JSON payload of one watchlist notification."""
    pair = f"{a}/{b}"
    title = STATE_TITLES[t.state]
    band = BANDS[t.state]
    low, high = BAND_LIMITS[t.state]
    data_day = pos.data_time.date().isoformat()
    data = f"daily close of {data_day} (UTC)"
    if pos.bar != DAILY.name:
        data = f"{pos.bar} bar closing {pos.data_time.strftime('%Y-%m-%d %H:%M')} (UTC)"
    subject = f"{pair} {title} (position {pos.position:.3f})"
    path = f"/api/v1/pair/{a}/{b}"
    text = "\n".join(
        [
            f"{pair} {title}.",
            "",
            f"Pair:      {pair}",
            f"State:     {t.state} (was {t.previous})",
            f"Position:  {pos.position:.3f}  (0 = p5, 1 = p95 of the band window)",
            f"Zone band: {band}",
            f"Data:      {data}",
            f"Details:   GET {path}",
            "",
            "You get this because the pair is on your pairscreen watchlist.",
        ]
    )
    e = html.escape
    html_body = (
        "<html><body>"
        f"<p><strong>{e(pair)}</strong> {e(title)}.</p>"
        "<table>"
        f"<tr><th align='left'>Pair</th><td>{e(pair)}</td></tr>"
        f"<tr><th align='left'>State</th><td>{e(t.state)} (was {e(t.previous)})</td></tr>"
        f"<tr><th align='left'>Position</th><td>{pos.position:.3f}</td></tr>"
        f"<tr><th align='left'>Zone band</th><td>{e(band)}</td></tr>"
        f"<tr><th align='left'>Data</th><td>{e(data)}</td></tr>"
        f"<tr><th align='left'>Details</th><td><code>GET {e(path)}</code></td></tr>"
        "</table></body></html>"
    )
    payload = {
        "event": "watchlist.state_changed",
        "pair": pair,
        "a": a,
        "b": b,
        "state": t.state,
        "previous_state": t.previous,
        "position": round(float(pos.position), 6),
        "zone_band": {"description": band, "low": low, "high": high},
        "data_time": clock.iso(pos.data_time),
        "path": path,
    }
    return {"subject": subject, "text": text, "html": html_body, "payload": payload}
