"""Domain errors that carry their HTTP meaning, so services stay free of the web framework.

Each becomes a ``text/plain`` response with its status and headers; the message is shown to
the caller as is, so it must say what is wrong and how to fix it, and never name internals.
"""

from __future__ import annotations

from collections.abc import Mapping


class MissingExtra(RuntimeError):
    """An optional dependency is not installed; the message names the extra to install."""


class ServiceError(Exception):
    """An error the caller can act on."""

    status_code = 500

    def __init__(self, message: str, *, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.headers = dict(headers or {})


class BadRequest(ServiceError):
    status_code = 400


class Unauthorized(ServiceError):
    status_code = 401

    def __init__(self, message: str):
        super().__init__(message, headers={"WWW-Authenticate": 'Bearer realm="pairscreen"'})


class Forbidden(ServiceError):
    status_code = 403


class NotFound(ServiceError):
    status_code = 404


class NotAcceptable(ServiceError):
    """No answer in a media type the client accepts for this request."""

    status_code = 406


class Busy(ServiceError):
    status_code = 409


class Conflict(ServiceError):
    """The request contradicts stored state (a full watchlist, a pair watched the other way)."""

    status_code = 409


class QuotaExhausted(ServiceError):
    status_code = 429


class Unavailable(ServiceError):
    status_code = 503
