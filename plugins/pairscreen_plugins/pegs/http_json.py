"""Peg reference source ``http_json``: a price read from a JSON document over HTTP(S).

For oracles and price APIs. Options (the ``[plugins.http_json]`` table;
``[peg_sources.http_json]`` for one more release):

``url``
    A template; ``{reference}`` is replaced by the reference symbol (URL-quoted), e.g.
    ``"https://prices.example/v1/{reference}"``. Only ``http`` and ``https``.
``json_path``
    Where the price is in the document: keys and list indices separated by dots, e.g.
    ``"data.price"`` or ``"quotes.0.last"`` (default ``"price"``). A number or a numeric
    string.
``timestamp_path``
    Optional: where the time of the price is (ISO 8601, or seconds / milliseconds since the
    epoch). Without it the answer is as of the moment it was received.
``timeout``
    Seconds to wait for the connection and for each read (default 5).
``headers``
    Optional table of extra request headers (an API key, say).
``max_age_hours``
    The maximum age of an answer (default 1 hour).

A live endpoint knows only the present: asked about a moment older than the maximum age (a
backfill) the source answers nothing rather than pass today's price off as history. Timeouts,
HTTP errors, bodies that are not JSON or lack the path raise, so the sampler logs the reason
and skips the source; absurd values (zero, negative, NaN, far from the market price) come
back as they are and the sampler rejects them with every other source's.
"""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pairscreen import clock
from pairscreen.contracts import PluginOption, ReferenceQuote, hookimpl

MAX_BODY_BYTES = 1_000_000
DEFAULT_TIMEOUT = 5.0


def follow_path(document: Any, path: str) -> Any:
    """The value at a dotted path of keys and list indices; ValueError naming the part."""
    value = document
    for part in filter(None, path.split(".")):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif (
            isinstance(value, list)
            and part.lstrip("-").isdigit()
            and -len(value) <= int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            raise ValueError(f"the JSON answer has nothing at {part!r} of {path!r}")
    return value


def as_number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"the {what} in the JSON answer is not a number: {value!r:.40}")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"the {what} in the JSON answer is not a number: {value!r:.40}") from None


def as_timestamp(value: Any) -> datetime:
    """ISO 8601 text or epoch seconds (milliseconds when too large for seconds), UTC."""
    if isinstance(value, str) and not value.strip().replace(".", "", 1).isdigit():
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    seconds = as_number(value, "timestamp")
    if not math.isfinite(seconds):
        raise ValueError("the timestamp in the JSON answer is not finite")
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    return datetime.fromtimestamp(seconds, UTC)


class HttpJsonPegSource:
    """The ``http_json`` peg reference source (see the module docstring for its options)."""

    name = "http_json"
    max_age = timedelta(hours=1)

    def reference_price(
        self, reference: str, at: datetime, options: Mapping[str, Any]
    ) -> ReferenceQuote | None:
        template = options.get("url")
        if not isinstance(template, str) or "://" not in template:
            raise ValueError('http_json peg source: set url = "https://..." in [plugins.http_json]')
        now = clock.now()
        max_age_hours = options.get("max_age_hours", self.max_age / timedelta(hours=1))
        if now - at > timedelta(hours=float(max_age_hours)):
            return None  # a live endpoint cannot answer for the past
        url = template.replace("{reference}", urllib.parse.quote(reference, safe=""))
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError("http_json peg source: the url must be http or https")
        document = self._fetch(url, options)
        price = as_number(follow_path(document, str(options.get("json_path", "price"))), "price")
        stamp_path = options.get("timestamp_path")
        as_of = as_timestamp(follow_path(document, str(stamp_path))) if stamp_path else now
        return ReferenceQuote(source=self.name, reference=reference, price=price, as_of=as_of)

    def _fetch(self, url: str, options: Mapping[str, Any]) -> Any:
        headers = {"Accept": "application/json", "User-Agent": "pairscreen peg monitor"}
        headers.update({str(k): str(v) for k, v in dict(options.get("headers", {})).items()})
        request = urllib.request.Request(url, headers=headers)
        timeout = float(options.get("timeout", DEFAULT_TIMEOUT))
        # HTTP errors (HTTPError), refused connections (URLError) and timeouts raise here.
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_BODY_BYTES + 1)
        if len(body) > MAX_BODY_BYTES:
            raise ValueError(f"the answer is larger than {MAX_BODY_BYTES} bytes")
        try:
            return json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError(f"the answer is not JSON: {body[:40]!r}") from None


@hookimpl
def pairscreen_register_peg_sources() -> list[HttpJsonPegSource]:
    return [HttpJsonPegSource()]


@hookimpl
def pairscreen_plugin_options() -> list[PluginOption]:
    """The ``[plugins.http_json]`` table; a key left out is not given to the source, which
    applies the same defaults."""
    return [
        PluginOption("url", "", "the URL template; {reference} is the reference symbol"),
        PluginOption("json_path", "price", "where the price is: keys and list indices, dotted"),
        PluginOption("timestamp_path", "", "where the price's time is (unset: when received)"),
        PluginOption("timeout", DEFAULT_TIMEOUT, "seconds to wait to connect and for each read"),
        PluginOption(
            "headers",
            {},
            "extra request headers, name = value (an API key, say)",
            secret=True,
        ),
        PluginOption("max_age_hours", 1.0, "an answer older than this many hours does not count"),
    ]
