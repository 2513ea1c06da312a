"""The contract a universe is served with: ``openapi.yaml`` as written, or, for a universe
declaring its own backtest windows (``[screen] backtest_days``), the same document with
those windows as the values ``bt`` takes and the longest as its default.

The allowed values of ``bt`` belong to the universe (90, 180 and 360 days of daily closes;
3, 7 and 14 days, say, of hourly bars), and a client, connexion's validation and a
generated client all read them from the contract: so the served contract states them
exactly. An intraday universe's contract also names its bar (``info.x-pairscreen-bar``), so
a client knows what it reads before any screen exists (the website's pair page says "the
stored 1h bars"), and types the evidence's spans in days as numbers: an intraday track
record's step and horizons are fractions of a day (0.25 for 6 hours), where the file, a daily
universe's contract, keeps them integers so that daily clients are not retyped. A daily
universe declaring no windows is served the file byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pairscreen.contracts.bars import DAILY
from pairscreen.screening.spans import DAILY_BACKTEST_DAYS

BT_PARAMETER = "BacktestDays"
BAR_EXTENSION = "x-pairscreen-bar"
# The evidence's spans in days, whole on a daily universe, fractional on an intraday one:
# (schema, property).
FRACTIONAL_DAYS = (
    ("Evidence", "every_days"),
    ("EvidenceHorizon", "horizon_days"),
    ("EvidencePortfolio", "horizon_days"),
)


def served_contract(
    spec_file: Path, windows: tuple[int, ...], bar: str = DAILY.name
) -> tuple[Path | dict[str, Any], bytes]:
    """The specification to serve (the file, or the document with ``windows`` and the
    universe's ``bar``) and its text."""
    raw = spec_file.read_bytes()
    if tuple(windows) == DAILY_BACKTEST_DAYS and bar == DAILY.name:
        return spec_file, raw
    document: dict[str, Any] = yaml.safe_load(raw)
    if tuple(windows) != DAILY_BACKTEST_DAYS:
        allowed = list(windows)
        schema = document["components"]["parameters"][BT_PARAMETER]["schema"]
        schema["enum"] = allowed
        schema["default"] = allowed[-1]
    if bar != DAILY.name:
        document["info"][BAR_EXTENSION] = bar
        schemas = document["components"]["schemas"]
        for schema, name in FRACTIONAL_DAYS:
            field = schemas[schema]["properties"][name]
            field.update(type="number", minimum=0, exclusiveMinimum=True)
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True).encode("utf-8")
    return document, text
