"""``/pairs``: the survivors of a screen in compact form (pair, legs, sector, zone, position,
score, the screen-wide fields and how old each pair's data is), best score first.

Built from the screen's payload once per screen, one survivor decoded at a time; a page of
it compacts only the survivors it shows (:mod:`pairscreen.screen_store.stored_pages`).
"""

from __future__ import annotations

import json
from typing import Any

from pairscreen.screen_store.compact_pairs import compact_pair, compact_pairs
from pairscreen.screen_store.json_items import Field, walk
from pairscreen.screen_store.published import PublishedScreen


def pairs_json(screen: PublishedScreen) -> str:
    """The ``/pairs`` body of ``screen``, serialised once per screen."""
    return screen.view("pairs", _render_pairs)


def _render_pairs(payload: str) -> str:
    head: dict[str, Any] = {}
    survivors: list[dict[str, Any]] = []
    for part in walk(payload, "survivors"):  # one survivor decoded at a time
        if isinstance(part, Field):
            head[part.name] = part.value
        else:
            survivors.append(compact_pair(part.value))
    return json.dumps(compact_pairs(head["generated_at"], survivors), allow_nan=False)
