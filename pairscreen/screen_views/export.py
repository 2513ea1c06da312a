"""The published screen as a table: one CSV row per survivor, best score first.

Each row holds the survivor's identity and score, every metric field (the union over the
survivors, in the order they first appear, so a third-party metric gets its column) and both
backtest legs. A null is an empty cell; a number is written as JSON writes it (Python's
shortest round-trip text), so the CSV and the JSON hold the same values to the bit.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from pairscreen.engine.screen_rules import SCREEN_FIELDS
from pairscreen.screen_store.data_lag import BAR_LAG_FIELDS, LAG_FIELDS
from pairscreen.screen_store.json_items import Element, walk
from pairscreen.screen_store.published import PublishedScreen
from pairscreen.screen_views.staleness import TAIL_MARKER

IDENTITY = ("rank", "pair", "a", "b", "sector", "score", *LAG_FIELDS)
LEG_FIELDS = (
    "base_leg",
    "growth_pct",
    "n_trades",
    "max_drawdown_pct",
    "breakeven_fee",
    "buy_hold_growth_pct",
)
# Leg fields added later: their columns follow all the others, so no column moves.
LEG_EXTRA = ("breakeven_swaps", "open_position_pct")


def screen_csv(screen: PublishedScreen) -> str:
    """The CSV of ``screen``, rendered once per screen."""
    return screen.view("csv", survivors_csv)


def survivors(payload: str) -> Iterator[dict[str, Any]]:
    """The survivors of a screen's JSON text, decoded one at a time (a big screen's dicts
    all at once would take several times the text's memory)."""
    for part in walk(payload, "survivors"):
        if isinstance(part, Element):
            yield part.value


def columns(payload: str) -> list[str]:
    """The header: identity (with the lag in bars and seconds after the days on an intraday
    screen), every metric field, then the backtest of leg A and of leg B."""
    metric_names = dict.fromkeys(name for s in survivors(payload) for name in s["metrics"])
    bar_lag = [name for name in BAR_LAG_FIELDS if _intraday(payload)]
    legs = [f"backtest_{leg}_{name}" for leg in ("A", "B") for name in LEG_FIELDS]
    extra = [f"backtest_{leg}_{name}" for leg in ("A", "B") for name in LEG_EXTRA]
    identity = [*IDENTITY, *bar_lag]
    return [*identity, *SCREEN_FIELDS, *metric_names, "backtest_history_days", *legs, *extra]


def survivor_record(rank: int, survivor: dict[str, Any]) -> dict[str, Any]:
    """One survivor flattened to the CSV's columns (a missing metric is absent)."""
    a, b = survivor["pair"]
    backtest = survivor["backtest"]
    record: dict[str, Any] = {
        "rank": rank,
        "pair": f"{a}/{b}",
        "a": a,
        "b": b,
        "sector": survivor["sector"],
        "score": survivor["score"],
        **{name: survivor.get(name) for name in (*LAG_FIELDS, *BAR_LAG_FIELDS)},
        **{name: survivor.get(name) for name in SCREEN_FIELDS},
        **survivor["metrics"],
        "backtest_history_days": backtest.get("history_days"),
    }
    for leg in ("A", "B"):
        values = backtest[leg]
        buy_hold = values.get("buy_hold")
        for name in (*LEG_FIELDS[:-1], *LEG_EXTRA):
            record[f"backtest_{leg}_{name}"] = values.get(name)
        record[f"backtest_{leg}_buy_hold_growth_pct"] = buy_hold and buy_hold["growth_pct"]
    return record


def _intraday(payload: str) -> bool:
    """Whether ``payload`` is an intraday screen's: its tail names its bar."""
    at = payload.rfind(TAIL_MARKER)
    return at >= 0 and '"bar":' in payload[at:]


def survivors_csv(payload: str) -> str:
    """The ``text/csv`` body of a screen's JSON text."""
    out = io.StringIO()
    header = columns(payload)
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for rank, survivor in enumerate(survivors(payload), start=1):
        record = survivor_record(rank, survivor)
        writer.writerow([cell(record.get(name)) for name in header])
    return out.getvalue()


def cell(value: object) -> str:
    """A CSV cell: empty for null, ``json.dumps`` for numbers and booleans, text as is."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, allow_nan=False)
