"""A survivor in compact form, as ``/pairs`` lists it: pair, legs, sector, zone, position,
score, the screen-wide fields and how old its data is.

Stored with each screen in the pages' blocks (:mod:`.page_blocks`) and rendered by the
``/pairs`` view (:mod:`pairscreen.screen_views.pairs_view`), so both give the same text.
"""

from __future__ import annotations

from typing import Any

from pairscreen.engine.required_fields import POSITION, ZONE, RequiredField
from pairscreen.engine.screen_rules import SCREEN_FIELDS
from pairscreen.screen_store.data_lag import BAR_LAG_FIELDS, LAG_FIELDS

# Metrics ``/pairs`` carries when the screen's metrics provide them: what the website's map of
# the universe plots against the position, so 100,000 survivors need no full screen.
MAP_FIELDS = ("hurst", "half_life_days")


def compact_pair(survivor: dict[str, Any]) -> dict[str, Any]:
    """A survivor's key fields, as ``/pairs`` lists them."""
    a, b = survivor["pair"]
    metrics = survivor["metrics"]
    return {
        "pair": f"{a}/{b}",
        "a": a,
        "b": b,
        "sector": survivor["sector"],
        **present(metrics, ZONE, POSITION),
        **{k: metrics[k] for k in MAP_FIELDS if k in metrics},
        "score": survivor["score"],
        **{k: survivor[k] for k in SCREEN_FIELDS if k in survivor},
        **{k: survivor[k] for k in (*LAG_FIELDS, *BAR_LAG_FIELDS) if k in survivor},
    }


def compact_pairs(generated_at: str, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``/pairs`` body: compact pairs, best score first."""
    pairs.sort(key=lambda p: -p["score"])
    return {"generated_at": generated_at, "count": len(pairs), "pairs": pairs}


def present(metrics: dict[str, Any], *wanted: RequiredField) -> dict[str, Any]:
    """The ``wanted`` fields of a survivor's metrics; one whose metric failed is left out."""
    return {f.name: metrics[f.name] for f in wanted if f.name in metrics}
