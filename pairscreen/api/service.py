"""What the handlers of one app share: its runtime, worker threads and request connections.

The app factory builds one :class:`Service` per app and :class:`ServiceMiddleware` puts it in
every request's ASGI scope (``scope["state"]``, Starlette's per-request state), where the
bearer function (connexion passes it the request) and the handlers (through connexion's
request context) find it. Nothing is kept in a module.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import time
from asyncio import FIRST_COMPLETED
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from starlette.types import ASGIApp, Receive, Scope, Send

from pairscreen.access.accounts import Principal
from pairscreen.access.admission import Admission, admit, keep_alive, settle
from pairscreen.api.connections import RequestConnections
from pairscreen.api.hangup import SCOPE_KEY as HANGUP_KEY
from pairscreen.api.hangup import Hangup
from pairscreen.api.prometheus import Prometheus
from pairscreen.api.threads import Lane, NotStarted, Ticket
from pairscreen.db.storage import StorageFault
from pairscreen.errors import Busy, QuotaExhausted, Unavailable
from pairscreen.runtime import Runtime

T = TypeVar("T")

log = logging.getLogger(__name__)

IO_THREADS = 8
SCOPE_KEY = "pairscreen.service"


@dataclass
class Service:
    """One app's runtime and the threads its requests run on.

    ``io`` runs short database work (key lookups, admission, reads); ``compute`` runs the
    computations, ``Settings.compute_threads`` threads (default: one per core but one).
    ``prometheus`` is None unless ``Settings.metrics`` asks for them.
    """

    runtime: Runtime
    io: Lane
    compute: Lane
    connections: RequestConnections = field(default_factory=RequestConnections)
    prometheus: Prometheus | None = None
    # The storage faults met so far: each is logged at ERROR once (api/errors.py).
    storage_faults: set[StorageFault] = field(default_factory=set)

    @classmethod
    def of(cls, runtime: Runtime) -> Service:
        cores = len(os.sched_getaffinity(0))
        compute_threads = runtime.settings.compute_threads or max(1, cores - 1)
        prometheus = Prometheus() if runtime.settings.metrics else None
        return cls(
            runtime, Lane("io", IO_THREADS), Lane("compute", compute_threads), prometheus=prometheus
        )

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on an ``io`` thread, inside a request connection."""
        return await self.io.run(contextvars.copy_context().run, self.connections.run, fn, *args)

    def in_connection(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in this thread, inside its request connection."""
        return self.connections.run(fn, *args)

    async def run_compute(
        self,
        principal: Principal,
        work: Callable[[], T],
        *,
        hangup: Hangup | None = None,
    ) -> tuple[T, dict[str, str]]:
        """Run a compute request: ``work()``'s result and the rate-limit headers of its 200.

        The caller has validated the request first (``api.support.pair_compute`` resolves the
        pair), so a request that can never succeed answers 400 or 404, never 409 or 429, and
        takes no slot.

        Admission (tier, in-flight slot or 409, quota unit or 429) and settlement run on the
        ``io`` lane; ``work`` runs on the ``compute`` lane. Computations are CPU-bound: on a
        shared pool a burst of them took every thread, and key lookups and cheap reads
        (``/me``, the cached screen) queued behind them for seconds. A request waits
        for a compute thread only once admitted, so the in-flight limit still answers 409 at
        once.

        While it lives, a heartbeat renews the request's slot (and so its reserved unit), so
        a long wait or computation can neither lose its unit nor let another request take
        its slot. A request that waits longer than ``Settings.compute_queue_seconds`` for a
        compute thread answers 503 unstarted; one whose client disconnects (``hangup``)
        gives its unit back; neither is charged.
        """
        try:
            admission = await self.in_thread(admit, principal, self.runtime.settings)
        except (Busy, QuotaExhausted) as refusal:
            if self.prometheus is not None:
                self.prometheus.refused("in_flight" if isinstance(refusal, Busy) else "quota")
            raise
        started = time.perf_counter()
        ticket = Ticket()
        compute = asyncio.ensure_future(
            self.compute.submit(
                ticket,
                self.runtime.settings.compute_queue_seconds,
                contextvars.copy_context().run,
                self.connections.run,
                work,
            )
        )
        heartbeat = asyncio.ensure_future(self._heartbeat(admission))
        departure = asyncio.ensure_future(hangup.wait() if hangup else asyncio.Event().wait())
        try:
            await asyncio.wait((compute, heartbeat, departure), return_when=FIRST_COMPLETED)
            if departure.done() and not compute.done() and not ticket.withdraw():
                # The client left mid-computation: the slot stays held until the thread is
                # done with it, so the account never has more computations running than
                # its limit; the heartbeat keeps it.
                await asyncio.wait((compute, heartbeat), return_when=FIRST_COMPLETED)
        except BaseException:
            ticket.withdraw()
            await self._give_back(admission, compute, heartbeat, departure)
            raise
        if not compute.done() or compute.exception() is not None or departure.done():
            ticket.withdraw()
            lost, left = heartbeat.done(), departure.done()  # before _give_back cancels them
            failure = compute.exception() if compute.done() else None
            await self._give_back(admission, compute, heartbeat, departure)
            if isinstance(failure, NotStarted):
                raise _queued_too_long(self.runtime.settings.compute_queue_seconds)
            if failure is not None:
                raise failure  # the computation failed: answered as it raised
            if lost:
                raise _lost()
            assert left
            raise Unavailable("The client disconnected; nothing was charged.")
        heartbeat.cancel()
        departure.cancel()
        if self.prometheus is not None:
            self.prometheus.compute_seconds.observe(time.perf_counter() - started)
        if not await self.in_thread(settle, admission, True):
            raise _lost()
        result: T = compute.result()
        return result, admission.headers

    async def _heartbeat(self, admission: Admission) -> None:
        """Renew the admitted request's slot every third of the lock TTL while it lives;
        returns only once the slot is lost (renewals failed for a whole TTL, or it was
        reclaimed meanwhile), and then the request must not answer 200."""
        ttl = self.runtime.settings.lock_ttl_seconds
        lapses_at = time.monotonic() + ttl
        while True:
            await asyncio.sleep(ttl / 3)
            try:
                kept = await self.in_thread(keep_alive, admission, self.runtime.settings)
            except Exception as exc:  # the database failed for a moment: retry until it lapses
                log.warning("could not renew a compute slot: %s: %s", type(exc).__name__, exc)
                kept = time.monotonic() < lapses_at
            else:
                lapses_at = time.monotonic() + ttl
            if not kept:
                return

    async def _give_back(self, admission: Admission, *tasks: asyncio.Future[Any]) -> None:
        """Settle ``admission`` as failed (its unit back, its slot free) and stop ``tasks``."""
        for task in tasks:
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()  # retrieved: the caller answers for it
        await self.in_thread(settle, admission, False)


def _lost() -> Unavailable:
    log.error(
        "a compute request lost its slot before it could be charged (the database was "
        "unreachable for a whole PAIRSCREEN_LOCK_TTL): answered 503, nothing charged"
    )
    return Unavailable(
        "This request could not be accounted for in time; nothing was charged. Retry in a "
        "few seconds.",
        headers={"Retry-After": "5"},
    )


def _queued_too_long(seconds: float) -> Unavailable:
    return Unavailable(
        f"The server is overloaded: this request waited more than {seconds:g} seconds for a "
        "computation thread and was not started; nothing was charged. Retry in a few seconds.",
        headers={"Retry-After": "5"},
    )


class ServiceMiddleware:
    """Puts the app's :class:`Service` in the scope of every request it serves."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hangup = Hangup(receive)
            state = scope.setdefault("state", {})
            state[SCOPE_KEY] = self.service
            state[HANGUP_KEY] = hangup
            await self.app(scope, hangup.receive, send)
            return
        if scope["type"] == "websocket":
            scope.setdefault("state", {})[SCOPE_KEY] = self.service
        await self.app(scope, receive, send)


def hangup_in(scope: Scope) -> Hangup | None:
    """The watch on the client of the request of ``scope`` (None outside HTTP)."""
    return cast(Hangup | None, scope["state"].get(HANGUP_KEY))


def service_in(scope: Scope) -> Service:
    """The :class:`Service` of the app serving the request of ``scope``."""
    # Starlette types the scope as a mapping to Any; ServiceMiddleware put a Service there.
    return cast(Service, scope["state"][SCOPE_KEY])
