"""The CSV answer of ``/screen/latest`` and ``/pairs``, for a client that prefers it.

Both operations give the same table (one row per survivor, see
:mod:`pairscreen.screen_views.export`), as an attachment named after the screen's time. Its
``In-Sample-Columns`` header names the columns that are in-sample model or backtest figures,
so a reader learns it without a column being added to or renamed in the table.
"""

from __future__ import annotations

import csv

from connexion import request
from starlette.responses import Response

from pairscreen.api.negotiation import prefers_csv
from pairscreen.api.support import service
from pairscreen.screen_store.published import PublishedScreen
from pairscreen.screen_views.export import screen_csv
from pairscreen.screening import in_sample

# Every answer of the two operations depends on ``Accept`` (JSON or CSV) and on
# ``Accept-Encoding`` (the JSON may come gzip-compressed).
VARY = {"Vary": "Accept, Accept-Encoding"}


def csv_requested() -> bool:
    """True when the current request's ``Accept`` header prefers ``text/csv``."""
    return prefers_csv(request.headers.get("accept"))


async def csv_response(screen: PublishedScreen) -> Response:
    """The survivors of ``screen`` as ``text/csv``, rendered once per screen, off the event
    loop (a large screen's first rendering takes a while)."""
    stamp = "".join(ch for ch in screen.key[1] if ch.isdigit())[:14]  # YYYYMMDDhhmmss
    headers = {**VARY, "Content-Disposition": f'attachment; filename="pairscreen-{stamp}.csv"'}
    body = await service().in_thread(screen_csv, screen)
    header = next(csv.reader([body.split("\r\n", 1)[0]]))
    headers["In-Sample-Columns"] = ", ".join(in_sample.csv_columns(header))
    return Response(body, media_type="text/csv; charset=utf-8", headers=headers)
