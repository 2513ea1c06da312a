"""The CSV answer of ``/screen/latest`` and ``/pairs``, for a client that prefers it.

Both operations give the same table (one row per survivor, see
:mod:`pairscreen.screening.export`), as an attachment named after the screen's time.
"""

from __future__ import annotations

from connexion import request
from starlette.responses import Response

from pairscreen.api.negotiation import prefers_csv
from pairscreen.screening.export import screen_csv
from pairscreen.screening.published import PublishedScreen

VARY = {"Vary": "Accept"}  # every answer of the two operations depends on ``Accept``


def csv_requested() -> bool:
    """True when the current request's ``Accept`` header prefers ``text/csv``."""
    return prefers_csv(request.headers.get("accept"))


def csv_response(screen: PublishedScreen) -> Response:
    """The survivors of ``screen`` as ``text/csv``, rendered once per screen."""
    stamp = "".join(ch for ch in screen.key[1] if ch.isdigit())[:14]  # YYYYMMDDhhmmss
    headers = {**VARY, "Content-Disposition": f'attachment; filename="pairscreen-{stamp}.csv"'}
    return Response(screen_csv(screen), media_type="text/csv; charset=utf-8", headers=headers)
