"""What the handlers of one app share: its runtime, worker threads and request connections.

The app factory builds one :class:`Service` per app and :class:`ServiceMiddleware` puts it in
every request's ASGI scope (``scope["state"]``, Starlette's per-request state), where the
bearer function (connexion passes it the request) and the handlers (through connexion's
request context) find it. Nothing is kept in a module.
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from starlette.types import ASGIApp, Receive, Scope, Send

from pairscreen.access.accounts import Principal
from pairscreen.access.admission import admit, settle
from pairscreen.api.connections import RequestConnections
from pairscreen.api.metrics import Metrics
from pairscreen.api.threads import Lane
from pairscreen.errors import Busy, QuotaExhausted
from pairscreen.runtime import Runtime

T = TypeVar("T")

IO_THREADS = 8
SCOPE_KEY = "pairscreen.service"


@dataclass
class Service:
    """One app's runtime and the threads its requests run on.

    ``io`` runs short database work (key lookups, admission, reads); ``compute`` runs the
    computations, ``Settings.compute_threads`` threads (default: one per core but one).
    ``metrics`` is None unless ``Settings.metrics`` asks for them.
    """

    runtime: Runtime
    io: Lane
    compute: Lane
    connections: RequestConnections = field(default_factory=RequestConnections)
    metrics: Metrics | None = None

    @classmethod
    def of(cls, runtime: Runtime) -> Service:
        cores = len(os.sched_getaffinity(0))
        compute_threads = runtime.settings.compute_threads or max(1, cores - 1)
        metrics = Metrics() if runtime.settings.metrics else None
        return cls(
            runtime, Lane("io", IO_THREADS), Lane("compute", compute_threads), metrics=metrics
        )

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on an ``io`` thread, inside a request connection."""
        return await self.io.run(contextvars.copy_context().run, self.connections.run, fn, *args)

    def in_connection(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in this thread, inside its request connection."""
        return self.connections.run(fn, *args)

    async def run_compute(
        self, principal: Principal, work: Callable[[], T], *, check: Callable[[], object]
    ) -> tuple[T, dict[str, str]]:
        """Run a compute request: ``work()``'s result and the rate-limit headers of its 200.

        ``check()`` validates the request first (the pair's tickers known and distinct), before
        admission, so a request that can never succeed answers 400 or 404, never 409 or 429,
        and takes no slot. It must be cheap and in memory: it runs on the event loop, because
        on the ``io`` lane a check per compute request queued key lookups and ``/me`` behind
        a burst of computations.

        Admission (tier, in-flight slot or 409, quota unit or 429) and settlement run on the
        ``io`` lane; ``work`` runs on the ``compute`` lane. Computations are CPU-bound: on a
        shared pool a burst of them took every thread, and key lookups and cheap reads
        (``/me``, the cached screen) queued behind them for seconds. A request waits
        for a compute thread only once admitted, so the in-flight limit still answers 409 at
        once.
        """
        check()
        try:
            admission = await self.in_thread(admit, principal, self.runtime.settings)
        except (Busy, QuotaExhausted) as refusal:
            if self.metrics is not None:
                self.metrics.refused("in_flight" if isinstance(refusal, Busy) else "quota")
            raise
        started = time.perf_counter()
        try:
            result = await self.compute.run(
                contextvars.copy_context().run, self.connections.run, work
            )
        except BaseException:
            await self.in_thread(settle, admission, False)
            raise
        if self.metrics is not None:
            self.metrics.compute_seconds.observe(time.perf_counter() - started)
        await self.in_thread(settle, admission, True)
        return result, admission.headers


class ServiceMiddleware:
    """Puts the app's :class:`Service` in the scope of every request it serves."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope.setdefault("state", {})[SCOPE_KEY] = self.service
        await self.app(scope, receive, send)


def service_in(scope: Scope) -> Service:
    """The :class:`Service` of the app serving the request of ``scope``."""
    # Starlette types the scope as a mapping to Any; ServiceMiddleware put a Service there.
    return cast(Service, scope["state"][SCOPE_KEY])
