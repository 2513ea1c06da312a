"""The screen's verdicts stored beside it (migration 16) and one pair's verdict read back.

Stored per screen: a head (the universe's tickers once, the kinds table, the filter and its
thresholds, what the core's reasons name) and the pairs in blocks of ``BLOCK_SLOTS`` slots,
each compressed on its own. A pair's slot is its place in the upper triangle of the
universe's assets (``i < j`` in universe order), whichever way it was screened, so a lookup
computes the slot, reads one block row and decodes only that block. A slot holds the kind
(0: not screened), the history, the last common close (int32 days since 1970-01-01, in
screens whose head says ``last_days``: those published before it have none) and the values
(float64, byte-shuffled before compression: the exponent bytes of similar numbers then
compress together).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import numpy as np

from pairscreen import clock
from pairscreen.contracts import Asset, Filter, FilterContext, bar_size
from pairscreen.contracts.bars import BarSize
from pairscreen.db.models import Screen, ScreenVerdictBlock, ScreenVerdicts
from pairscreen.engine.filtering import FilterChoice
from pairscreen.engine.guarantees import NO_CANDLES as CORE_NO_CANDLES
from pairscreen.engine.guarantees import SHORT, STALE_LEG, core_reason
from pairscreen.engine.screen_rules import SCREEN_RULES
from pairscreen.errors import NotFound
from pairscreen.market.freshness import AssetFreshness, day_of, day_start
from pairscreen.plugin_system.registry import Plugins
from pairscreen.screen_store.data_lag import bar_lag, data_lag
from pairscreen.screen_store.published import PublishedScreen
from pairscreen.screen_store.verdicts import (
    NO_CANDLES,
    NO_DAY,
    ZONES,
    Finished,
    Kind,
    VerdictLog,
    arities,
    finish,
    kinds,
)

BLOCK_SLOTS = 1 << 14  # a lookup decodes about 200 kB
LEVEL = 1  # random mantissa bytes gain nothing from a slower level
_HEAD = np.dtype([("slots", "<u4"), ("values", "<u4")])


@dataclass(frozen=True)
class EncodedVerdicts:
    """A screen's verdicts ready to store: the head and every non-empty block."""

    head: bytes
    blocks: dict[int, bytes]

    @property
    def stored_bytes(self) -> int:
        return len(self.head) + sum(len(b) for b in self.blocks.values())


@dataclass(frozen=True)
class VerdictSetup:
    """What encoding a screen's verdicts reads of the service: the screen filter with its
    thresholds, the universe's tickers and the history a pair needs."""

    choice: FilterChoice
    filter: Filter
    tickers: tuple[str, ...]
    min_history_days: int


def encode_screen(
    setup: VerdictSetup,
    log: VerdictLog,
    matrix_tickers: Sequence[str],
    survivors: Sequence[tuple[str, str]],
    wide: Sequence[tuple[str, str, str, float | None]],
    screen: Mapping[str, Any],
) -> EncodedVerdicts:
    """The verdicts of a screen just computed, ready to store with it: ``screen`` is the
    payload's head and tail (generated_at, filter, screen_rules, n_survivors)."""
    choice = setup.choice
    table = kinds(setup.filter, choice.thresholds)
    tickers = list(setup.tickers)
    index = {t: k for k, t in enumerate(tickers)}
    rows = np.array([index[t] for t in matrix_tickers], dtype=np.int64)
    done = finish(log, table, rows, survivors, wide, index)
    facts = {
        "generated_at": screen["generated_at"],
        "n_survivors": screen["n_survivors"],
        "filter": choice.name,
        "thresholds": dict(choice.thresholds),
        "screen_rules": dict(choice.screen_wide),
        "min_history_days": setup.min_history_days,
        "newest": (screen.get("data_time") or {}).get("newest"),
        **_bar_facts(screen.get("bar")),
    }
    return encode(done, log, table, tickers, facts)


def _bar_facts(bar: str | None) -> dict[str, Any]:
    """An intraday screen's bar and the unit its last closes are stored in (numpy's
    ``h``, ``4h``, ``15m``); nothing for a daily screen, whose head stays as it was."""
    if bar is None:
        return {}
    return {"bar": bar, "last_close_unit": bar_size(bar).unit}


def encode(
    done: Finished,
    log: VerdictLog,
    table: Sequence[Kind],
    tickers: Sequence[str],
    facts: Mapping[str, Any],
) -> EncodedVerdicts:
    """The head and blocks of a screen's verdicts; ``facts`` holds the filter's name and
    thresholds, the screen-wide limits, ``min_history_days``, ``generated_at``,
    ``n_survivors`` and ``newest`` (the screen's newest close, ``data_time.newest``)."""
    n = len(tickers)
    lo, hi = np.minimum(done.a, done.b), np.maximum(done.a, done.b)
    slot = lo * (2 * n - lo - 1) // 2 + (hi - lo - 1)
    order = np.argsort(slot, kind="stable")
    slot = slot[order]
    arity = arities(table)[done.kind[order]]
    ends = np.cumsum(arity)
    gather = np.repeat(done.start[order] - (ends - arity), arity) + np.arange(
        int(ends[-1] if ends.size else 0)
    )
    values = done.values[gather] if gather.size else np.empty(0)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    texts_at = {int(rank[p]): t for p, t in done.texts.items()}
    head = {
        **facts,
        "tickers": list(tickers),
        "kinds": [k.as_json() for k in table],
        "stale": log.stale,
        "no_candles": sorted(set(log.no_candles)),
        "flipped": [int(s) for s in slot[(done.a > done.b)[order]]],
        "block_slots": BLOCK_SLOTS,
        "last_days": True,  # each slot holds its pair's last common close
    }
    total = n * (n - 1) // 2
    blocks: dict[int, bytes] = {}
    block_of = slot // BLOCK_SLOTS
    bounds = np.searchsorted(block_of, np.arange(total // BLOCK_SLOTS + 2))
    value_bounds = np.concatenate([[0], ends])
    for block in range(-(-total // BLOCK_SLOTS)):
        first, last = int(bounds[block]), int(bounds[block + 1])
        if first == last:
            continue
        size = min(BLOCK_SLOTS, total - block * BLOCK_SLOTS)
        local = slot[first:last] - block * BLOCK_SLOTS
        kinds = np.zeros(size, dtype=np.uint8)
        kinds[local] = done.kind[order[first:last]]
        history = np.zeros(size, dtype="<u2")
        history[local] = done.history[order[first:last]]
        last_days = np.full(size, NO_DAY, dtype="<i4")
        last_days[local] = done.last_day[order[first:last]]
        part = values[int(value_bounds[first]) : int(value_bounds[last])].astype("<f8")
        said = {int(local[i - first]): t for i, t in texts_at.items() if first <= i < last}
        blocks[block] = _pack(kinds, history, last_days, part, said)
    return EncodedVerdicts(zlib.compress(json.dumps(head).encode(), LEVEL), blocks)


def _pack(
    kinds: np.ndarray,
    history: np.ndarray,
    last_days: np.ndarray,
    values: np.ndarray,
    texts: dict[int, str],
) -> bytes:
    shuffled = values.view(np.uint8).reshape(-1, 8).T.tobytes()
    sizes = np.array([(kinds.size, values.size)], dtype=_HEAD).tobytes()
    body = sizes + kinds.tobytes() + history.tobytes() + last_days.tobytes() + shuffled
    return zlib.compress(body + json.dumps(texts).encode(), LEVEL)


@dataclass(frozen=True)
class Block:
    kinds: np.ndarray
    history: np.ndarray
    last_days: np.ndarray | None  # None in a screen published before they were stored
    values: np.ndarray
    texts: bytes  # JSON, parsed only for a pair whose reason is kept as text


def _unpack(blob: bytes, with_last_days: bool) -> Block:
    body = zlib.decompress(blob)
    sizes = np.frombuffer(body, dtype=_HEAD, count=1)[0]
    n, m = int(sizes["slots"]), int(sizes["values"])
    at = _HEAD.itemsize
    kinds = np.frombuffer(body, np.uint8, n, at)
    history = np.frombuffer(body, "<u2", n, at + n)
    at += 3 * n
    last_days = None
    if with_last_days:
        last_days = np.frombuffer(body, "<i4", n, at)
        at += 4 * n
    planes = np.frombuffer(body, np.uint8, 8 * m, at).reshape(8, m)
    values = np.ascontiguousarray(planes.T).view("<f8").reshape(m)
    return Block(kinds, history, last_days, values, body[at + 8 * m :])


def store(screen_id: int, encoded: EncodedVerdicts) -> None:
    """Store a screen's verdicts and drop those of screens no longer stored (pruned)."""
    kept = Screen.select(Screen.id)
    ScreenVerdicts.delete().where(ScreenVerdicts.screen.not_in(kept)).execute()
    ScreenVerdictBlock.delete().where(ScreenVerdictBlock.screen.not_in(kept)).execute()
    ScreenVerdicts.create(screen=screen_id, head=encoded.head)
    rows = [{"screen": screen_id, "block": k, "data": v} for k, v in encoded.blocks.items()]
    for start in range(0, len(rows), 16):
        ScreenVerdictBlock.insert_many(rows[start : start + 16]).execute()


NOT_STORED = (
    "The latest screen has no stored verdicts (it was published before they were kept); "
    "the next screen will."
)


@dataclass(frozen=True)
class Head:
    """A screen's head, parsed once per screen and kept with it in memory."""

    screen_id: int
    facts: dict[str, Any]
    index: dict[str, int]
    kinds: tuple[Kind, ...]
    arity: np.ndarray
    flipped: frozenset[int]


def load_head(screen_id: int) -> Head:
    blob = ScreenVerdicts.select(ScreenVerdicts.head).where(ScreenVerdicts.screen == screen_id)
    raw = blob.scalar()
    if raw is None:
        raise NotFound(NOT_STORED)
    facts = json.loads(zlib.decompress(bytes(raw)))
    table = tuple(Kind.of_json(k) for k in facts.pop("kinds"))
    index = {t: i for i, t in enumerate(facts["tickers"])}
    return Head(screen_id, facts, index, table, arities(table), frozenset(facts.pop("flipped")))


def verdict(plugins: Plugins, head: Head, a: Asset, b: Asset) -> dict[str, Any]:
    """The ``/screen/latest/pairs/{a}/{b}`` body of the pair of ``a`` and ``b`` (either way
    round); NotFound when the screen did not evaluate it."""
    i, j = head.index.get(a.ticker), head.index.get(b.ticker)
    for asset, k in ((a, i), (b, j)):
        if k is None:
            raise NotFound(
                f"{asset.ticker} was not in the universe of the latest screen "
                f"({head.facts['generated_at']}), so the screen did not evaluate this pair."
            )
    assert i is not None and j is not None
    n = len(head.index)
    lo, hi = min(i, j), max(i, j)
    slot = lo * (2 * n - lo - 1) // 2 + (hi - lo - 1)
    size = int(head.facts["block_slots"])
    raw = (
        ScreenVerdictBlock.select(ScreenVerdictBlock.data)
        .where(
            (ScreenVerdictBlock.screen == head.screen_id)
            & (ScreenVerdictBlock.block == slot // size)
        )
        .scalar()
    )
    block = _unpack(bytes(raw), bool(head.facts.get("last_days"))) if raw is not None else None
    local = slot % size
    code = int(block.kinds[local]) if block is not None else 0
    if code == 0:
        raise NotFound(
            f"The latest screen ({head.facts['generated_at']}) did not evaluate "
            f"{a.ticker}/{b.ticker}: the universe file does not pair them (same-sector "
            "pairs, cross_sectors and cross_pairs are screened)."
        )
    assert block is not None
    screened = (hi, lo) if slot in head.flipped else (lo, hi)
    tickers = head.facts["tickers"]
    first, second = tickers[screened[0]], tickers[screened[1]]
    start = int(head.arity[block.kinds[:local]].sum())
    values = block.values[start : start + int(head.arity[code])]
    kind = head.kinds[code]
    body: dict[str, Any] = {
        "pair": f"{first}/{second}",
        "a": first,
        "b": second,
        "reversed": a.ticker != first,
        "generated_at": head.facts["generated_at"],
        "passes_filter": kind.how == "survivor",
        "filter_reason": "",
        "reason_code": "",
        "history_days": int(block.history[local]) or None,
        "n_survivors": head.facts["n_survivors"],
        "rank": None,
        "score": None,
        "zone": None,
        "position": None,
        **_data_time(head, block, local),
    }
    if kind.how in ("survivor", "wide"):
        score, position, zone, last = (float(v) for v in values)
        body.update(score=score, position=position, zone=ZONES[int(zone)])
        if kind.how == "survivor":
            body["rank"] = int(last)
    if kind.how != "survivor":
        reason = _say(plugins, head, kind, code, block, local, values, (first, second))
        body.update(filter_reason=reason, reason_code=reason.split(":", 1)[0])
    return body


def _data_time(head: Head, block: Block, local: int) -> dict[str, Any]:
    """The pair's last common close and how far it lies behind the screen's newest close;
    nothing for a screen published before the last closes were stored."""
    if block.last_days is None:
        return {}
    stored = int(block.last_days[local])
    newest = head.facts.get("newest")
    unit = head.facts.get("last_close_unit")
    bar = {"bar": head.facts["bar"]} if unit else {}
    close = np.datetime64(stored, unit or "D")
    day = close.astype("datetime64[D]")
    last = None if stored == NO_DAY else day_of(day)
    if last is None:
        said = None
    elif unit:  # an intraday bar: its close time, to the second
        said = f"{close.astype('datetime64[s]')}+00:00"
    else:
        said = clock.iso(day_start(day))
    newest_day = date.fromisoformat(newest[:10]) if newest else None
    if not unit:
        return {"data_time": said, **data_lag(last, newest_day), **bar}
    seconds = bar_size(head.facts["bar"]).seconds
    close_at = None if last is None else int(close.astype("datetime64[s]").astype(np.int64))
    newest_at = int(datetime.fromisoformat(newest).timestamp()) if newest else None
    return {"data_time": said, **bar_lag(last, newest_day, close_at, newest_at, seconds), **bar}


def _say(
    plugins: Plugins,
    head: Head,
    kind: Kind,
    code: int,
    block: Block,
    local: int,
    values: np.ndarray,
    legs: tuple[str, str],
) -> str:
    """The reason in the screen's own words, from what was stored."""
    facts = head.facts
    history = int(block.history[local])
    if kind.how == "text":
        return str(json.loads(block.texts)[str(local)])
    if kind.how == "stale":
        bar = bar_size(head.facts["bar"]) if head.facts.get("last_close_unit") else None
        fresh = [_freshness(t, bar, *facts["stale"][t]) for t in legs if t in facts["stale"]]
        described = [leg.describe() for leg in fresh if leg.stale]
        return core_reason(STALE_LEG, stale_legs=described)
    if code == NO_CANDLES:
        missing = [t for t in legs if t in facts["no_candles"]]
        return core_reason(CORE_NO_CANDLES, no_candles=missing)
    if kind.how == "short":
        minimum = int(facts["min_history_days"])
        return core_reason(SHORT, history_days=history, min_history_days=minimum)
    if kind.how == "wide":
        rule = SCREEN_RULES[kind.rule]
        limit = facts["screen_rules"].get(rule.limit, rule.off)
        value = float(values[-1])
        shown = "null" if not np.isfinite(value) else f"{value:g}"
        needed = f"at least {limit:g}" if rule.at_least else f"below {limit:g}"
        return (
            f"{rule.code}: {rule.field} {shown}, {needed} needed "
            f"(the screen-wide rule {rule.limit} of [screen])"
        )
    rules = plugins.filters.items.get(facts["filter"])
    rule_of = rules.rules[kind.rule] if rules and kind.rule < len(rules.rules) else None
    if rule_of is None or rule_of.code != kind.code:
        # The filter changed since the screen (another universe file, an uninstalled
        # plugin): its rule cannot say the reason again, the values still can.
        seen = ", ".join(
            f"{name} {float(v):g}" for name, v in zip(kind.fields, values, strict=True)
        )
        return f"{kind.code}: rejected by filter {facts['filter']!r} with {seen or 'no values'}"
    metrics = {name: values[k : k + 1] for k, name in enumerate(kind.fields)}
    context = FilterContext(
        np.array([history]), np.zeros(1, dtype=bool), facts["thresholds"], ((),)
    )
    return f"{kind.code}: {rule_of.explain(metrics, context, 0)}"


def _freshness(
    ticker: str, bar: BarSize | None, last: str | None, age: int | None, limit: int, *lag: int
) -> AssetFreshness:
    """A stale leg as the screen stored it; with its bar's lag on an intraday screen."""
    day = date.fromisoformat(last) if last else None
    if bar is None or len(lag) != 2:
        return AssetFreshness(ticker, day, age, limit)
    return AssetFreshness(ticker, day, age, limit, bar, lag[0], lag[1])


def pair_verdict(plugins: Plugins, screen: PublishedScreen, a: Asset, b: Asset) -> str:
    """The verdict body (JSON text) of ``a``/``b`` in ``screen``, the head read once per
    screen and kept with it."""
    head = screen.memo("verdict_head", lambda: load_head(screen.key[0]))
    return json.dumps(verdict(plugins, head, a, b), allow_nan=False)
