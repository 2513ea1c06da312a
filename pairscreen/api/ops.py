"""The operator's side of the app: ``/healthz``, ``/metrics`` and the access log.

Both endpoints sit beside the API, outside ``/api/v1`` and outside ``openapi.yaml``: they
take no key, are for the load balancer and the metrics scraper rather than for clients, and
must answer even when the contract or the security function would refuse (a health check
that needs the database to look up a key cannot report that the database is gone).

:class:`OpsMiddleware` is the outermost layer: it answers the two endpoints itself and, for
every other request, sees the final status (after the error handlers) to count it and log
it. connexion routes on a copy of the scope, so :class:`RouteMiddleware`, placed after
routing, writes the matched operation into a holder the two share through the scope's
``state`` (which the copy shares).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pairscreen import clock
from pairscreen.api.errors import TEXT
from pairscreen.api.prometheus import CONTENT_TYPE, Prometheus
from pairscreen.api.service import Service
from pairscreen.db.connection import UNAVAILABLE_ERRORS, database
from pairscreen.logs import ACCESS_LOGGER
from pairscreen.runtime import Runtime
from pairscreen.screen_views.status import (
    latest_screen_staleness,
    latest_screen_status,
    stale_asset_count,
)

access_log = logging.getLogger(ACCESS_LOGGER)
log = logging.getLogger("pairscreen.api")

HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"
ROUTE_KEY = "pairscreen.route"
UNMATCHED = "unmatched"  # the route label of a request no operation matched
API_PREFIX = "pairscreen.api."


def health(rt: Runtime) -> dict[str, Any]:
    """The database answers, the latest screen's age, and whether its data is stale: the
    ``/healthz`` body. Stale data is ``"status": "degraded"`` with the reason (still 200: the
    service answers, but what it answers is old)."""
    database.execute_sql("SELECT 1").fetchone()
    now = clock.now()
    body: dict[str, Any] = {"status": "ok", "database": "reachable", "screen": None}
    body["stale_assets"] = stale_asset_count(rt, now)
    status = latest_screen_status()
    if status is None:
        return body
    staleness = latest_screen_staleness(rt, now)
    body["screen"] = {
        "generated_at": clock.iso(status.generated_at),
        "age_seconds": round(status.age_seconds(now), 1),
        "stale": bool(staleness and staleness.stale),
    }
    if staleness is not None and staleness.stale:
        body["status"] = "degraded"
        body["reason"] = staleness.reason
    return body


class OpsMiddleware:
    """Answers ``/healthz`` and ``/metrics``; counts and logs every other request."""

    def __init__(self, app: ASGIApp, service: Service, prometheus: Prometheus | None) -> None:
        self.app = app
        self.service = service
        self.prometheus = prometheus

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path == HEALTH_PATH:
            await (await self._health())(scope, receive, send)
            return
        if path == METRICS_PATH and self.prometheus is not None:
            await (await self._exposition(self.prometheus))(scope, receive, send)
            return
        route: dict[str, str] = {}
        scope.setdefault("state", {})[ROUTE_KEY] = route
        status = 500  # what the client gets if the app fails before it starts a response
        started = time.perf_counter()

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            self._record(scope, route.get("operation", UNMATCHED), status, started)

    def _record(self, scope: Scope, route: str, status: int, started: float) -> None:
        elapsed = time.perf_counter() - started
        method = scope["method"]
        if self.prometheus is not None:
            self.prometheus.requests.labels(route=route, method=method, status=str(status)).inc()
        access_log.info(
            "%s %s %s %.1f ms",
            method,
            scope["path"],
            status,
            elapsed * 1000,
            extra={
                "method": method,
                "path": scope["path"],
                "status": status,
                "duration_ms": round(elapsed * 1000, 1),
            },
        )

    async def _health(self) -> Response:
        try:
            body = await self.service.in_thread(health, self.service.runtime)
        except UNAVAILABLE_ERRORS as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.warning("health check: database unreachable: %s", first)
            return Response(
                "The database is unreachable. Retry shortly.\n",
                status_code=503,
                media_type=TEXT,
                headers={"Retry-After": "5", "Cache-Control": "no-store"},
            )
        return Response(
            json.dumps(body),
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    async def _exposition(self, prometheus: Prometheus) -> Response:
        try:
            runtime = self.service.runtime
            await self.service.in_thread(prometheus.read_database, runtime, clock.now())
        except UNAVAILABLE_ERRORS as exc:  # still expose the counters, with stale gauges
            log.warning("metrics: database unreachable: %s", type(exc).__name__)
        return Response(prometheus.exposition(), media_type=CONTENT_TYPE)


class RouteMiddleware:
    """After connexion's routing: hands the matched operation to :class:`OpsMiddleware`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = scope.get("state", {}).get(ROUTE_KEY)
        operation = scope.get("extensions", {}).get("connexion_routing", {}).get("operation_id")
        if route is not None and operation:
            route["operation"] = operation.removeprefix(API_PREFIX)
        await self.app(scope, receive, send)
