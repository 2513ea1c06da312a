"""Whether a screen's data has gone stale, said loudly: ``stale`` and ``stale_reason``.

A screen is stale when the newest close it read is older than the tightest staleness limit
of the universe's asset classes (the data stopped: even the assets that trade most often
have no recent close), or when most of its pairs were rejected because a leg was stale.
The first depends on the current day, so a screen that was fresh when published turns stale
when no new data (or no new screen) follows: ``/screen/latest``, ``/healthz`` and the website
judge the screen they serve now, while the stored payload carries the judgement made when
it was computed (what ``/screens?at=`` shows for a past screen).

The facts needed (the pairs screened, how many were stale, the newest close) are read from
the fields stored with the screen's page index, or (a screen published before) from the head
and the tail of the payload, never from its survivors, so judging a screen of any size costs
microseconds, and the latest screen is judged without reading its payload.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from pairscreen import clock
from pairscreen.market.freshness import STALE, age_days, lag_reaches, span_words
from pairscreen.screen_store.published import PublishedScreen
from pairscreen.screen_store.stored_pages import stored_fields
from pairscreen.universe import Universe
from pairscreen.wording import plural

TAIL_MARKER = '],"data_source":'  # where the survivors end and the payload's tail begins
FACTS = "staleness_facts"  # a screen's facts among its memos


@dataclass(frozen=True)
class Staleness:
    """A screen's staleness: the flag and, when stale, the sentence saying why."""

    stale: bool
    reason: str | None = None

    def fields(self) -> dict[str, Any]:
        """The body fields, first in a screen's JSON."""
        return {"stale": self.stale, "stale_reason": self.reason}

    def prefix(self) -> str:
        """The body's opening with these fields: ``{"stale":…,"stale_reason":…,``."""
        return "{" + json.dumps(self.fields(), separators=(",", ":"))[1:-1] + ","


@dataclass(frozen=True)
class ScreenFacts:
    """What a screen's staleness is judged from, and the judgement stored in it."""

    n_pairs: int
    n_stale: int
    newest: date | None  # the newest last common close of its pairs; None: no pair had data
    stored: Staleness | None  # None in screens published before the fields existed
    # An intraday screen's newest bar close, its bar and the bar's seconds: a stale one's
    # reason says how many bars and hours ago that was (None for a daily screen).
    last_close: datetime | None = None
    bar: str | None = None
    bar_seconds: int | None = None

    def bars_since(self, at: datetime) -> int | None:
        """The bars closed since the newest close, at ``at``; None for a daily screen."""
        if self.last_close is None or not self.bar_seconds or self.bar is None:
            return None
        return int(max(0.0, (at - self.last_close).total_seconds()) // self.bar_seconds)

    def too_old(self, today: date, limit_days: int, at: datetime | None) -> str:
        """Why the newest close is beyond ``limit_days``, ``""`` when it is not: its age in
        days above the limit for a daily screen; for an intraday one the bars closed since
        it reaching the limit as a span of time (the assets' rule,
        ``pairscreen.market.freshness``), said in bars and hours (it changes once a bar,
        not every second)."""
        if self.newest is None:
            return ""
        allows = f"the universe allows {limit_days} days for its most traded assets"
        bars = self.bars_since(at) if at is not None else None
        if bars is None or self.last_close is None or not self.bar_seconds:
            age = age_days(self.newest, today)
            if age <= limit_days:
                return ""
            return f"its newest close is from {self.newest}, {age:,} days before {today} ({allows})"
        if not lag_reaches(bars * self.bar_seconds, limit_days):
            return ""
        return (
            f"its last {self.bar} bar closed {clock.iso(self.last_close)}, "
            f"{plural(bars, 'bar', grouped=True)} ({span_words(bars * self.bar_seconds)}) "
            f"before the last closed bar ({allows})"
        )


def judge(
    universe: Universe, facts: ScreenFacts, today: date, at: datetime | None = None
) -> Staleness:
    """Stale when the newest close lags ``today`` beyond the tightest class limit, or when
    more than half of the screened pairs had a stale leg; the reason names each cause (for
    an intraday screen judged at ``at``, with its bars and hours behind)."""
    causes: list[str] = []
    if facts.n_pairs and facts.newest is None:
        causes.append("no screened pair has candles")
    if facts.newest is not None and universe.assets:
        tightest = min(universe.staleness_days(a) for a in universe.assets)
        old = facts.too_old(today, tightest, at)
        if old:
            causes.append(old)
    if facts.n_pairs and 2 * facts.n_stale > facts.n_pairs:
        share = 100 * facts.n_stale / facts.n_pairs
        causes.append(
            f"{facts.n_stale:,} of its {facts.n_pairs:,} pairs ({share:.0f} %) have a stale "
            "leg and were not evaluated"
        )
    if not causes:
        return Staleness(False)
    return Staleness(True, f"This screen's data is stale: {'; '.join(causes)}.")


def judge_at(universe: Universe, facts: ScreenFacts, at: datetime) -> Staleness:
    return judge(universe, facts, clock.today(at), at)


def screen_facts(payload: str) -> ScreenFacts:
    """The facts of a screen payload, from its first fields and its tail only."""
    return _facts(_head(payload), _tail(payload))


def latest_facts(screen: PublishedScreen) -> ScreenFacts:
    """The facts of ``screen``: from the fields stored with its page index (its payload is
    not read), else from its payload's head and tail (a screen published before)."""
    fields = stored_fields(screen)
    return screen_facts(screen.payload) if fields is None else _facts(fields, fields)


def facts_of(screen: PublishedScreen) -> ScreenFacts:
    """The facts of ``screen``, read once per screen (a database read the first time: call
    it off the event loop until :func:`facts_known`)."""
    return screen.memo(FACTS, lambda: latest_facts(screen))


def facts_known(screen: PublishedScreen) -> bool:
    return screen.has(FACTS)


def _facts(head: dict[str, Any], tail: dict[str, Any]) -> ScreenFacts:
    """The facts from the payload's fields before its survivors (``head``) and after."""
    data_time = tail.get("data_time") or {}
    newest = data_time.get("newest") if isinstance(data_time, dict) else None
    stored = None
    if "stale" in head:
        stored = Staleness(bool(head["stale"]), head.get("stale_reason"))
    return ScreenFacts(
        n_pairs=int(head.get("n_pairs_screened", 0)),
        n_stale=int((tail.get("rejected") or {}).get(STALE, 0)),
        newest=_newest_day(newest, intraday="bar" in tail) if isinstance(newest, str) else None,
        stored=stored,
        **_bar_facts(tail, newest),
    )


def _bar_facts(tail: dict[str, Any], newest: object) -> dict[str, Any]:
    """An intraday screen's newest close time and bar (nothing for a daily screen)."""
    if "bar" not in tail or not isinstance(newest, str):
        return {}
    return {
        "last_close": datetime.fromisoformat(newest),
        "bar": str(tail["bar"]),
        "bar_seconds": int(tail.get("bar_seconds") or 0) or None,
    }


def _newest_day(newest: str, *, intraday: bool) -> date:
    """The day of a screen's newest close: a daily screen writes 00:00 UTC of it; an
    intraday screen writes its last bar's close time, and the bar closing at 00:00 UTC is
    the previous day's last (as ``pairscreen.screening.screen_candles.bar_day`` says)."""
    if not intraday:
        return date.fromisoformat(newest[:10])
    return (datetime.fromisoformat(newest) - timedelta(seconds=1)).date()


def served_text(payload: str, facts: ScreenFacts, now: Staleness) -> str:
    """``payload`` with ``now``'s fields in place of the stored ones (the payload itself
    when they agree, which is the usual case: no copy of a large screen)."""
    if facts.stored == now:
        return payload
    start = len(facts.stored.prefix()) if facts.stored is not None else 1
    return now.prefix() + payload[start:]


@dataclass(frozen=True)
class ServedScreen:
    """The latest screen as served now: its staleness, its body text and its entity tag."""

    staleness: Staleness
    body: Callable[[], str]  # the text, made (and the payload read) only when asked
    etag: str
    name: str  # the body's name for its compressed copy

    @property
    def text(self) -> str:
        return self.body()


def serve_latest(universe: Universe, screen: PublishedScreen, at: datetime) -> ServedScreen:
    """``screen`` judged at ``at``: the stored body when the judgement has not changed since
    it was published, else a variant with the fields of now (and its own entity tag, so a
    client holding the old body gets the new one)."""
    facts = facts_of(screen)
    now = judge_at(universe, facts, at)
    if facts.stored == now:
        return ServedScreen(now, lambda: screen.payload, screen.etag, "screen")
    key = hashlib.blake2b(now.prefix().encode(), digest_size=6).hexdigest()

    def text() -> str:
        return screen.variant("screen", key, lambda: served_text(screen.payload, facts, now))

    return ServedScreen(now, text, f'W/"screen-{screen.key[0]}-{key}"', f"screen:{key}")


def _head(payload: str) -> dict[str, Any]:
    """The fields before ``survivors`` (each a scalar or a short string)."""
    end = payload.find('"survivors":')
    text = payload[: end if end > 0 else 0].rstrip().rstrip(",")
    try:
        value = json.loads(text + "}") if text.startswith("{") else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _tail(payload: str) -> dict[str, Any]:
    """The fields after ``survivors`` (counts, data time, filter)."""
    at = payload.rfind(TAIL_MARKER)
    if at < 0:
        return {}
    try:
        value = json.loads("{" + payload[at + 2 :])
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
