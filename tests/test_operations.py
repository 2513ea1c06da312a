"""The operator's view: /healthz, the Prometheus metrics and the JSON logs."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from pairscreen.app import create_app
from pairscreen.bootstrap import build_runtime
from pairscreen.config import load_settings
from pairscreen.db.proxy import database
from pairscreen.logs import ACCESS_LOGGER, JsonFormatter, configure_logging
from pairscreen.runtime import Runtime

TEXT = "text/plain; charset=utf-8"


def _client(rt: Runtime):  # type: ignore[no-untyped-def]
    return create_app(rt).test_client()


def test_healthz_reports_the_database_and_the_screen_age_without_a_key(runtime, keys):
    with _client(runtime) as c:
        r = c.get("/healthz")
        latest = c.get("/api/v1/screen/latest", headers={"Authorization": f"Bearer {keys.pro}"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["status"] == "ok" and body["database"] == "reachable"
    assert body["screen"]["generated_at"] == latest.json()["generated_at"]
    assert body["screen"]["age_seconds"] >= 0


def test_healthz_is_503_when_the_database_is_gone(db_path: Path, tmp_path: Path):
    folder = tmp_path / "db"
    folder.mkdir()
    shutil.copy(db_path, folder / "pairscreen.sqlite3")
    settings = load_settings(data_dir=folder, database_url=f"sqlite:///{folder}/pairscreen.sqlite3")
    rt = build_runtime(settings)
    database.close()
    shutil.rmtree(folder)  # no file, no folder: SQLite cannot open it
    try:
        with _client(rt) as c:
            r = c.get("/healthz")
    finally:
        database.close()
    assert r.status_code == 503
    assert r.headers["content-type"] == TEXT
    assert r.headers["Retry-After"] == "5"
    assert "unreachable" in r.text


@pytest.fixture()
def metered(runtime: Runtime) -> Runtime:
    settings = dataclasses.replace(runtime.settings, metrics=True, daily_limit_personal=1)
    return dataclasses.replace(runtime, settings=settings)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_count_requests_refusals_and_compute_time(metered, keys):
    with _client(metered) as c:
        auth = {"Authorization": f"Bearer {keys.personal}"}
        assert c.get("/api/v1/pair/ETH/BTC", headers=auth).status_code == 200
        assert c.get("/api/v1/pair/ETH/BTC", headers=auth).status_code == 429
        assert c.get("/api/v1/nowhere", headers=auth).status_code == 404
        r = c.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    samples = _samples(r.text)
    route = "pair.pair_snapshot"
    ok = (("method", "GET"), ("route", route), ("status", "200"))
    refused = (("method", "GET"), ("route", route), ("status", "429"))
    unmatched = (("method", "GET"), ("route", "unmatched"), ("status", "404"))
    assert samples[("pairscreen_requests_total", ok)] == 1
    assert samples[("pairscreen_requests_total", refused)] == 1
    assert samples[("pairscreen_requests_total", unmatched)] == 1
    assert samples[("pairscreen_refusals_total", (("reason", "quota"),))] == 1
    assert samples[("pairscreen_compute_seconds_count", ())] == 1
    assert samples[("pairscreen_screen_age_seconds", ())] >= 0
    assert samples[("pairscreen_outbox_pending", ())] >= 0
    assert ("pairscreen_screen_duration_seconds", ()) in samples


def test_metrics_count_in_flight_refusals(metered, keys, monkeypatch):
    from pairscreen.access import admission
    from pairscreen.errors import Busy

    def busy(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise Busy("Too many requests in flight.")

    monkeypatch.setattr("pairscreen.api.service.admit", busy)
    assert admission.admit is not busy
    with _client(metered) as c:
        auth = {"Authorization": f"Bearer {keys.personal}"}
        assert c.get("/api/v1/pair/ETH/BTC", headers=auth).status_code == 409
        samples = _samples(c.get("/metrics").text)
    assert samples[("pairscreen_refusals_total", (("reason", "in_flight"),))] == 1


def test_metrics_are_off_by_default(runtime):
    assert runtime.settings.metrics is False
    with _client(runtime) as c:
        r = c.get("/metrics")
    assert r.status_code == 404 and r.headers["content-type"] == TEXT


@pytest.fixture()
def json_lines() -> Iterator[io.StringIO]:
    """Records of the access and worker loggers, formatted as the JSON log format does."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    loggers = [logging.getLogger(ACCESS_LOGGER), logging.getLogger("pairscreen.worker")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
    yield stream
    for lg, level in zip(loggers, levels, strict=True):
        lg.removeHandler(handler)
        lg.setLevel(level)


def test_access_log_lines_are_json_objects(runtime, keys, json_lines):
    with _client(runtime) as c:
        c.get("/api/v1/me", headers={"Authorization": f"Bearer {keys.personal}"})
        c.get("/api/v1/me")
    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    assert [(x["method"], x["path"], x["status"]) for x in lines] == [
        ("GET", "/api/v1/me", 200),
        ("GET", "/api/v1/me", 401),
    ]
    for line in lines:
        assert line["level"] == "INFO" and line["logger"] == ACCESS_LOGGER
        assert line["time"].endswith("+00:00") and line["duration_ms"] >= 0
        assert line["message"].startswith("GET /api/v1/me ")


def test_worker_log_lines_are_json_objects(runtime, json_lines):
    from pairscreen.worker import Worker, WorkerOptions

    worker = Worker(runtime, WorkerOptions())

    def fails() -> str:
        raise RuntimeError("boom\nsecond line")

    worker._job("notifications", lambda: "3 moved")()
    worker._job("screen", fails)()
    first, second = (json.loads(line) for line in json_lines.getvalue().splitlines())
    assert first["logger"] == "pairscreen.worker" and first["level"] == "INFO"
    assert first["message"].startswith("ran notifications in ") and "3 moved" in first["message"]
    assert second["level"] == "ERROR" and "boom" in second["exception"]


def test_configure_logging_leaves_a_foreign_handler_alone():
    root = logging.getLogger()
    before = list(root.handlers)
    assert before  # pytest's own capture handler
    configure_logging("json", logging.INFO)
    assert root.handlers == before
