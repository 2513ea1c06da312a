"""Schemathesis fuzzes every operation of ``openapi.yaml`` and finds nothing.

Twice: in-process against the ASGI app (``create_app(runtime)``, connexion's own response
validation on too) and against a live ``pairscreen serve``, whose served ``openapi.json`` is the
schema. Both runs use schemathesis' engine, the runner behind ``schemathesis run``: every
phase (explicit examples, coverage, fuzzing, stateful), both generation modes (valid and
invalid data), and all of its default checks, response schema conformance included. (Its
pytest integration for fixture-built schemas does not work on pytest 9.2.)

Fuzzing burns quota, so it uses a dedicated Pro account whose tier limit is raised for the
run (``Settings.daily_limits`` / ``PAIRSCREEN_DAILY_LIMIT_PRO``). ``positive_data_acceptance`` is
told which answers to valid-looking data are legitimate: 404 (an unknown ticker, a pair without
common history), 409 (in-flight limit) and 429 (quota); and a request whose two legs name the
same asset (the spec says ``b`` must differ from ``a``, which JSON Schema cannot express) is not
generated. Ticker parameters draw half of their values from the universe's real tickers, and
``/screens``' ``at`` half from times after the test's screen, so the fuzzer reaches the
success paths too. The operations come from the spec: a new operation is fuzzed without
touching this file. The figure (operations x cases, statuses) is printed.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pytest
import schemathesis
import yaml
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events, from_schema

from pairscreen import clock
from pairscreen.db.connection import database
from tests.support.contract import SPEC_PATH
from tests.support.live_server import live_server

FUZZ_EMAIL = "fuzz@example.com"
HIGH_LIMIT = 1_000_000
MAX_EXAMPLES = 40
ACCEPTED_FOR_VALID_DATA = ["2xx", "404", "409", "429"]


def spec_operations() -> list[str]:
    """``METHOD /path`` of every operation in openapi.yaml."""
    spec = yaml.safe_load(SPEC_PATH.read_text())
    methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
    return sorted(
        f"{m.upper()} {path}" for path, item in spec["paths"].items() for m in item if m in methods
    )


def fuzz_config(key: str, tickers: list[str], base_url: str | None = None) -> SchemathesisConfig:
    data: dict = {
        "auth": {"openapi": {"bearerAuth": {"bearer": key}}},
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES},
        "dictionaries": {"tickers": {"values": tickers}, "moments": {"values": moments()}},
        "parameters": {
            "path.a": {"dictionary": "tickers", "probability": 0.5},
            "path.b": {"dictionary": "tickers", "probability": 0.5},
            "query.at": {"dictionary": "moments", "probability": 0.5},
        },
        "checks": {
            "positive_data_acceptance": {"expected-statuses": ACCEPTED_FOR_VALID_DATA},
            "response_schema_conformance": {"enabled": True},
        },
        "suppress-health-check": ["too_slow"],
        # Whether a channel address is acceptable depends on its kind (the path) and on the
        # operator's URL prefixes, which no schema can say: a well-formed address the service
        # refuses is the documented 400 with its sentence, and still never a 5xx.
        "operations": [
            {
                "include-path": "/me/channels/{kind}",
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": [*ACCEPTED_FOR_VALID_DATA, "400"]
                    }
                },
            }
        ],
    }
    if base_url:
        data["base-url"] = base_url
    return SchemathesisConfig.from_dict(data)


def moments() -> list[str]:
    """Times at which the test's screen exists, so ``/screens?at=`` reaches its 200 too."""
    now = clock.now()
    return [clock.today().isoformat(), now.strftime("%Y-%m-%dT%H:%M:%SZ"), "9999-12-31"]


def filter_case(context, case) -> bool:  # type: ignore[no-untyped-def]
    """Schemathesis hook: leave out requests whose two legs are the same asset."""
    params = case.path_parameters or {}
    a, b = params.get("a"), params.get("b")
    return not (isinstance(a, str) and isinstance(b, str) and a.casefold() == b.casefold())


@dataclass
class Outcome:
    statuses: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    phases: Counter[str] = field(default_factory=Counter)
    checks: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stop_reason: str = ""

    @property
    def cases(self) -> int:
        return sum(sum(c.values()) for c in self.statuses.values())


def run_schemathesis(schema) -> Outcome:  # type: ignore[no-untyped-def]
    """Run every phase of schemathesis on ``schema``; what it sent, saw and found."""
    schema.hook(filter_case)
    out = Outcome()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            _record(out, event)
        elif isinstance(event, events.NonFatalError | events.FatalError):
            out.errors.append(f"{type(event).__name__}: {getattr(event, 'info', None) or event}")
        elif isinstance(event, events.EngineFinished):
            out.stop_reason = str(event.stop_reason)
            out.failures.extend(f"after run: {f.title}" for f in event.failures)
    return out


def _record(out: Outcome, event: events.ScenarioFinished) -> None:
    recorder = event.recorder
    for case_id, interaction in recorder.interactions.items():
        node = recorder.cases.get(case_id)
        if interaction.response is None or node is None:
            continue
        out.statuses[node.value.operation.label][interaction.response.status_code] += 1
        out.phases[str(event.phase.value)] += 1
    for case_id, checks in recorder.checks.items():
        for check in checks:
            out.checks[check.name] += 1
            if check.status != Status.FAILURE:
                continue
            node = recorder.cases.get(case_id)
            response = recorder.interactions.get(case_id)
            title = check.failure_info.failure.title if check.failure_info else ""
            detail = check.failure_info.failure.message if check.failure_info else ""
            curl = node.value.as_curl_command() if node else "?"
            answer = (
                f"{response.response.status_code} {response.response.content[:300]!r}"
                if response is not None and response.response is not None
                else "no response"
            )
            out.failures.append(
                f"[{event.phase.value}] {recorder.label}: {check.name}: {title}\n    {detail}\n"
                f"    {curl}\n    -> {answer}"
            )


def report_and_check(out: Outcome, run: str) -> None:
    lines = [
        f"schemathesis {run}: {len(out.statuses)} operations x {out.cases} cases "
        f"({', '.join(f'{p} {n}' for p, n in sorted(out.phases.items()))}); "
        f"{sum(out.checks.values())} checks ({len(out.checks)} kinds), "
        f"{len(out.failures)} failures, {len(out.errors)} errors"
    ]
    for label in sorted(out.statuses):
        statuses = ", ".join(f"{s}x{n}" for s, n in sorted(out.statuses[label].items()))
        lines.append(f"  {label}: {sum(out.statuses[label].values())} cases ({statuses})")
    print("\n".join(lines))
    assert not out.errors, "\n".join(out.errors)
    assert not out.failures, f"schemathesis {run} found {len(out.failures)}:\n" + "\n".join(
        out.failures[:20]
    )
    assert out.stop_reason.endswith("completed") or out.stop_reason == "completed", out.stop_reason
    missing = [op for op in spec_operations() if op not in out.statuses]
    assert not missing, f"schemathesis {run} never called {missing}"
    never_ok = [op for op in spec_operations() if not any(200 <= s < 300 for s in out.statuses[op])]
    assert not never_ok, f"schemathesis {run} never got a 2xx from {never_ok}"
    assert {"not_a_server_error", "response_schema_conformance", "positive_data_acceptance"} <= set(
        out.checks
    )
    assert not any(429 in c for c in out.statuses.values()), "the high-limit fuzz key hit its quota"


def _fuzz_account(runtime) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """A Pro key, and a published evaluation so that ``/evidence`` can answer 200."""
    from pairscreen.access import accounts
    from pairscreen.evaluation.track_record import evaluate_current_rules
    from pairscreen.screen_store.evidence import publish

    record = evaluate_current_rules(runtime, sample=30, every_days=90)
    with database.connection_context():
        accounts.create_user(FUZZ_EMAIL, "pro", lifetime=True)
        key = accounts.rotate_key(FUZZ_EMAIL)
        publish(record.body, record.first_day, record.last_day, clock.now())
    return key, sorted(runtime.universe.tickers)


def test_schemathesis_in_process_finds_nothing(runtime):
    from pairscreen.app import create_app

    key, tickers = _fuzz_account(runtime)
    runtime.settings = dataclasses.replace(runtime.settings, daily_limit_pro=HIGH_LIMIT)
    app = create_app(runtime, validate_responses=True)
    schema = schemathesis.openapi.from_asgi(
        "/api/v1/openapi.json", app, config=fuzz_config(key, tickers)
    )
    report_and_check(run_schemathesis(schema), "in-process")


@pytest.mark.slow
def test_schemathesis_live_server_finds_nothing(runtime, database_url):
    key, tickers = _fuzz_account(runtime)
    with live_server(database_url, env={"PAIRSCREEN_DAILY_LIMIT_PRO": str(HIGH_LIMIT)}) as base:
        schema = schemathesis.openapi.from_url(
            f"{base}/openapi.json", config=fuzz_config(key, tickers, base)
        )
        outcome = run_schemathesis(schema)
    report_and_check(outcome, "live")
