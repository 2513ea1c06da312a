"""The contract a universe is served with: ``openapi.yaml`` as written, or, for a universe
declaring its own backtest windows (``[screen] backtest_days``), the same document with
those windows as the values ``bt`` takes and the longest as its default.

The allowed values of ``bt`` belong to the universe (90, 180 and 360 days of daily closes;
3, 7 and 14 days, say, of hourly bars), and a client, connexion's validation and a
generated client all read them from the contract: so the served contract states them
exactly. A universe declaring none is served the file byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pairscreen.screening.spans import DAILY_BACKTEST_DAYS

BT_PARAMETER = "BacktestDays"


def served_contract(
    spec_file: Path, windows: tuple[int, ...]
) -> tuple[Path | dict[str, Any], bytes]:
    """The specification to serve (the file, or the document with ``windows``) and its text."""
    raw = spec_file.read_bytes()
    if tuple(windows) == DAILY_BACKTEST_DAYS:
        return spec_file, raw
    document: dict[str, Any] = yaml.safe_load(raw)
    allowed = list(windows)
    schema = document["components"]["parameters"][BT_PARAMETER]["schema"]
    schema["enum"] = allowed
    schema["default"] = allowed[-1]
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True).encode("utf-8")
    return document, text
