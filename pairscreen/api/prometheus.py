"""``/metrics`` for Prometheus: the counters and gauges of one app, in a registry of its own
(not to be confused with metric plugins, which compute a pair's numbers).

The registry belongs to the app (not prometheus-client's process-wide default one), so two
apps in one process, as in the tests, count their own requests. Each API process (``serve
--workers N``) therefore reports for itself: the request, latency and refusal counts are
per process, and a scrape through the shared port reaches one process at a time. The
database-backed gauges (screen age and duration, outbox depth, stale assets) are read at each
scrape and agree across processes.
"""

from __future__ import annotations

from datetime import datetime

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from pairscreen.notify.outbox import pending_count
from pairscreen.runtime import Runtime
from pairscreen.screen_views.status import ScreenStatus, latest_screen_status, stale_asset_count

CONTENT_TYPE = CONTENT_TYPE_LATEST
# Snapshots take tens of milliseconds, charts about 120 ms; a queue shows above a second.
COMPUTE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Prometheus:
    """The counters the middleware and the compute path update, and the scrape-time gauges."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "pairscreen_requests",
            "HTTP requests answered, by route (operation id), method and status",
            ("route", "method", "status"),
            registry=self.registry,
        )
        self.compute_seconds = Histogram(
            "pairscreen_compute_seconds",
            "Time a compute request (snapshot, chart) spent computing, after admission",
            buckets=COMPUTE_BUCKETS,
            registry=self.registry,
        )
        self.refusals = Counter(
            "pairscreen_refusals",
            "Compute requests refused at admission: quota (429) or in_flight (409)",
            ("reason",),
            registry=self.registry,
        )
        self.screen_age = Gauge(
            "pairscreen_screen_age_seconds",
            "Seconds since the latest screen was generated (NaN before the first)",
            registry=self.registry,
        )
        self.screen_duration = Gauge(
            "pairscreen_screen_duration_seconds",
            "How long the latest screen took from start to publication (NaN when unknown)",
            registry=self.registry,
        )
        self.stale_assets = Gauge(
            "pairscreen_stale_assets",
            "Assets of the universe whose last close is older than their class allows",
            registry=self.registry,
        )
        self.outbox_pending = Gauge(
            "pairscreen_outbox_pending",
            "Notifications waiting in the outbox for delivery",
            registry=self.registry,
        )

    def refused(self, reason: str) -> None:
        self.refusals.labels(reason=reason).inc()

    def read_database(self, rt: Runtime, now: datetime) -> None:
        """Set the gauges the database knows; run in a request connection before a scrape."""
        self._set_screen(latest_screen_status(), now)
        self.outbox_pending.set(pending_count())
        self.stale_assets.set(stale_asset_count(rt, now))

    def _set_screen(self, status: ScreenStatus | None, now: datetime) -> None:
        duration = status.duration_seconds if status is not None else None
        self.screen_age.set(status.age_seconds(now) if status is not None else float("nan"))
        self.screen_duration.set(float("nan") if duration is None else duration)

    def exposition(self) -> bytes:
        """The text format a Prometheus server scrapes."""
        return generate_latest(self.registry)
