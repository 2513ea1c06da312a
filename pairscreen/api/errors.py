"""Every error as ``text/plain; charset=utf-8``: one or two sentences, never a stack trace.

Connexion's own errors (validation, security, unknown routes, wrong methods) arrive as
``ProblemException`` or Starlette ``HTTPException`` and are rewritten here into plain
sentences; our services raise :class:`~pairscreen.errors.ServiceError` with the message the
caller sees.
"""

from __future__ import annotations

import logging
import re

from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from starlette.exceptions import HTTPException

from pairscreen.api.service import service_in
from pairscreen.db.storage import StorageFault, diagnose
from pairscreen.errors import ServiceError, Unavailable

log = logging.getLogger("pairscreen.api")

TEXT = "text/plain; charset=utf-8"
AUTH_HEADERS = {"WWW-Authenticate": 'Bearer realm="pairscreen"'}

GENERIC = {
    400: "The request is malformed. Check the path and query parameters against the API reference.",
    401: (
        "Missing or malformed Authorization header: "
        "send 'Authorization: Bearer rr_…' with your API key."
    ),
    403: "This key may not use this endpoint.",
    404: "Not found: no such endpoint. The API lives under /api/v1; see openapi.yaml.",
    405: (
        "Method not allowed: the API answers GET, PUT or DELETE on /watchlist/{a}/{b} and "
        "PUT on /me/channels/{kind}; the Allow header lists this path's methods."
    ),
    406: "Not acceptable: this API answers application/json (and image/png for charts).",
    415: (
        "Unsupported media type: only PUT /me/channels/{kind} takes a body, as "
        "application/json; other endpoints take none."
    ),
    500: "Internal error: the request failed on our side and consumed no quota. Retry later.",
    501: "Not implemented.",
    503: "The service is temporarily unavailable. Retry shortly.",
}


SHOWN_CHARS = 64  # a value echoed in an error is cut to this many characters


def shown(value: str) -> str:
    """``value`` quoted for an error sentence, cut so that a huge input is never echoed whole."""
    if len(value) <= SHOWN_CHARS:
        return repr(value)
    return f"{value[:SHOWN_CHARS]!r}… ({len(value)} characters)"


def text_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> ConnexionResponse:
    return ConnexionResponse(
        status_code=status,
        mimetype="text/plain",
        content_type=TEXT,
        body=(message.rstrip() + "\n").encode("utf-8"),
        headers={**(headers or {}), "Content-Type": TEXT},
    )


def service_error(_request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    assert isinstance(exc, ServiceError)
    return text_response(exc.status_code, exc.message, exc.headers)


def http_error(_request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    """Connexion problems and Starlette HTTP errors, rewritten as one plain sentence."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    detail = str(getattr(exc, "detail", "") or "")
    if status >= 500:
        log.error("request failed with %s: %s", status, detail)
        return text_response(status, GENERIC.get(status, GENERIC[500]))
    if status == 401:
        return text_response(401, GENERIC[401], AUTH_HEADERS)
    message = _sentence(status, detail)
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"}
    return text_response(status, message, headers)


def database_unavailable(request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    """The database is down, restarting or out of connections: a fast 503, never a hang.

    A compute request that fails this way has consumed no quota: its unit was only
    reserved, and an unconfirmed reservation is given back (at the latest when its slot
    expires).
    """
    fault = storage_fault(request, exc)
    if fault is not None:
        return service_error(
            request,
            Unavailable(
                f"The service cannot use its database: {fault.cause}. This lasts until an "
                "operator fixes the server's storage; this request consumed no quota.",
                headers={"Retry-After": "300"},
            ),
        )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    log.warning("database unavailable: %s: %s", type(exc).__name__, first)
    return service_error(
        request,
        Unavailable(
            "The service's database is unavailable for a moment. Retry in a few seconds; "
            "this request consumed no quota.",
            headers={"Retry-After": "1"},
        ),
    )


def storage_fault(request: ConnexionRequest, exc: Exception) -> StorageFault | None:
    """The permanent storage condition behind ``exc`` (full disk, read-only, corrupt file),
    logged at ERROR the first time this app meets it; None for a passing failure."""
    service = service_in(request.scope)
    fault = diagnose(exc, service.runtime.settings.database_url)
    if fault is not None and fault not in service.storage_faults:
        service.storage_faults.add(fault)
        log.error("the database's storage failed: %s", fault)
    return fault


def database_error(request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    """Any other database error: a 503 when the storage is at fault (a corrupt file), else
    an internal error."""
    if storage_fault(request, exc) is not None:
        return database_unavailable(request, exc)
    return unexpected_error(request, exc)


def unexpected_error(_request: ConnexionRequest, exc: Exception) -> ConnexionResponse:
    log.error("unhandled error", exc_info=exc)
    return text_response(500, GENERIC[500])


def _sentence(status: int, detail: str) -> str:
    if status != 400 or not detail:
        return GENERIC.get(status, detail or "Request failed.")
    first = detail.strip().splitlines()[0].strip()
    first = _plain_body_error(re.sub(r"\s+", " ", first))
    return f"Bad request: {_QUOTED.sub(_echo, first)}"


_JSON_SYNTAX = re.compile(
    r"^(Expecting |Unterminated string|Extra data|Invalid control character|Invalid \\escape)"
)
_WRONG_TYPE = re.compile(r"^(.+) is not of type '(\w+)'(?: - '([^']+)')?$")
_EMPTY = re.compile(r"^\{\} should be non-empty")
_TYPE_WORDS = {
    "string": "a string",
    "boolean": "true or false",
    "number": "a number",
    "integer": "a whole number",
    "object": "an object",
    "array": "a list",
}


def _plain_body_error(message: str) -> str:
    """A request body's validation message in the words of the other errors: the JSON
    decoder's and the schema validator's phrasing (``{} should be non-empty``, ``5 is not of
    type 'string' - 'address'``) says neither what was wrong with the body nor what to send."""
    if _JSON_SYNTAX.match(message):
        return f"the request body is not valid JSON ({message}); send a JSON object."
    if _EMPTY.match(message):
        return "the request body is an empty object; give at least one of its fields."
    wrong = _WRONG_TYPE.match(message)
    if wrong:
        value, kind, field = wrong.groups()
        subject = "the request body" if field is None else f"field '{field}'"
        return f"{subject} is {value}; allowed: {_TYPE_WORDS.get(kind, kind)}."
    return message


_QUOTED = re.compile(r"'([^']*)'")


def _echo(match: re.Match[str]) -> str:
    """A value the validator quoted, as an error may show it: a URL by its scheme and host
    only (a webhook's path is its secret), anything else cut to :data:`SHOWN_CHARS`."""
    value = match.group(1)
    url = re.match(r"^(https?)://([^/?#:]*)", value)
    if url:
        return f"'{url.group(1)}://{url.group(2)}/…'"
    return shown(value)
