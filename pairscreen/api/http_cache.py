"""Conditional and compressed answers: reading ``If-None-Match`` and ``Accept-Encoding``."""

from __future__ import annotations


def not_modified(if_none_match: str, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (weak comparison, as RFC 9110 asks for it)."""
    wanted = _opaque(etag)
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or (candidate and _opaque(candidate) == wanted):
            return True
    return False


def _opaque(tag: str) -> str:
    return tag.removeprefix("W/")


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether ``Accept-Encoding`` allows gzip: listed with a non-zero ``q``, or not listed
    but allowed by ``*``."""
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        coding, _, params = item.partition(";")
        name = coding.strip().lower()
        if not name:
            continue
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[name] = weight
    for name in ("gzip", "x-gzip", "*"):
        if name in weights:
            return weights[name] > 0
    return False
