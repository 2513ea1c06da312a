"""The app factory: connexion routes and validates every request from ``openapi.yaml``."""

from __future__ import annotations

import logging
import warnings
from importlib import resources
from pathlib import Path

import peewee
from starlette.exceptions import HTTPException, StarletteDeprecationWarning

with warnings.catch_warnings():
    # connexion imports starlette.testclient (for its test_client()), and Starlette warns on
    # that import when it finds httpx instead of its successor httpx2. The server never uses
    # a test client, so the warning only alarms whoever starts it: it is silenced for this
    # one import, and the process's warning filters are left as they were.
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    import connexion
from connexion.exceptions import ProblemException
from connexion.middleware import MiddlewarePosition

from pairscreen.api import errors
from pairscreen.api.body import body_validators
from pairscreen.api.compression import PreparedGzipMiddleware
from pairscreen.api.contract import SpecDocuments, SpecMiddleware
from pairscreen.api.guards import GuardMiddleware
from pairscreen.api.ops import OpsMiddleware, RouteMiddleware
from pairscreen.api.parameters import NamedParameterValidator
from pairscreen.api.security import bearer_info
from pairscreen.api.service import Service, ServiceMiddleware
from pairscreen.api.signatures import SignatureFixingResolver, fix_signature
from pairscreen.api.universe_contract import served_contract
from pairscreen.bootstrap import build_runtime
from pairscreen.config import Settings, load_settings
from pairscreen.db.connection import UNAVAILABLE_ERRORS, database
from pairscreen.errors import ServiceError
from pairscreen.logs import configure_logging
from pairscreen.runtime import Runtime
from pairscreen.screening.spans import screen_spans
from pairscreen.web.site import WebsiteMiddleware

log = logging.getLogger(__name__)


class ContractNotFound(RuntimeError):
    pass


def openapi_path(settings: Settings) -> Path:
    """The contract: ``settings.openapi_path``, else the copy packaged with (or beside) it."""
    candidates = [settings.openapi_path] if settings.openapi_path else []
    candidates.append(Path(str(resources.files("pairscreen").joinpath("openapi.yaml"))))
    candidates.append(Path(__file__).resolve().parent.parent / "openapi.yaml")
    for path in candidates:
        if path.is_file():
            return path
    raise ContractNotFound(
        "openapi.yaml not found: reinstall pairscreen or set PAIRSCREEN_OPENAPI to the file's path "
        f"(looked in {', '.join(str(c) for c in candidates)})"
    )


def create_app(
    runtime: Runtime | None = None,
    *,
    settings: Settings | None = None,
    validate_responses: bool = False,
) -> connexion.AsyncApp:
    """Build the ASGI app; ``validate_responses`` checks every response against the contract.

    The app serves ``runtime`` (built from ``settings``, else the environment, when not
    given): its requests reach it through their scope (:mod:`pairscreen.api.service`).
    """
    rt = runtime or build_runtime(settings or load_settings())
    windows = screen_spans(rt.universe, rt.settings).backtest_days
    spec, spec_text = served_contract(openapi_path(rt.settings), windows, rt.universe.bar)
    app = connexion.AsyncApp(__name__)
    service = Service.of(rt)
    # Outermost: the bearer function runs before connexion sets its request context.
    app.add_middleware(
        ServiceMiddleware, position=MiddlewarePosition.BEFORE_EXCEPTION, service=service
    )
    # /healthz, /metrics and the access log, outside the error handlers to see final statuses.
    app.add_middleware(
        OpsMiddleware,
        position=MiddlewarePosition.BEFORE_EXCEPTION,
        service=service,
        prometheus=service.prometheus,
    )
    # gzip from bytes compressed once per screen, outside the contract's response validation.
    app.add_middleware(PreparedGzipMiddleware, position=MiddlewarePosition.BEFORE_EXCEPTION)
    app.add_middleware(RouteMiddleware, position=MiddlewarePosition.BEFORE_SECURITY)
    # HEAD and repeated query parameters are refused before connexion routes them.
    documents = SpecDocuments.of_text(spec_text)
    app.add_middleware(
        GuardMiddleware, position=MiddlewarePosition.BEFORE_EXCEPTION, methods=documents.methods
    )
    # The spec is served as written (api/contract.py); Swagger UI reads that openapi.json.
    app.add_middleware(
        SpecMiddleware, position=MiddlewarePosition.BEFORE_EXCEPTION, documents=documents
    )
    # The website at / and /static/, inside the error handlers (a missing file is a plain 404).
    app.add_middleware(WebsiteMiddleware, position=MiddlewarePosition.BEFORE_SWAGGER)
    fix_signature(bearer_info)  # read twice a request by connexion's security check
    app.add_api(
        spec,
        resolver=SignatureFixingResolver(),
        strict_validation=True,
        validator_map={"parameter": NamedParameterValidator, "body": body_validators()},
        validate_responses=validate_responses,
        swagger_ui_options=connexion.options.SwaggerUIOptions(swagger_ui=True, serve_spec=False),
    )
    app.add_error_handler(ServiceError, errors.service_error)
    for database_error in UNAVAILABLE_ERRORS:
        app.add_error_handler(database_error, errors.database_unavailable)
    app.add_error_handler(peewee.DatabaseError, errors.database_error)
    app.add_error_handler(ProblemException, errors.http_error)
    app.add_error_handler(HTTPException, errors.http_error)
    app.add_error_handler(Exception, errors.unexpected_error)
    return app


def asgi_app() -> connexion.AsyncApp:
    """Entry point for ``uvicorn --factory pairscreen.app:asgi_app`` (settings from the env).

    Each uvicorn worker process starts here, so it sets up its own logging.
    """
    settings = load_settings()
    configure_logging(settings.log_format)
    rt = build_runtime(settings)
    warm_up(rt)
    return create_app(rt)


def warm_up(rt: Runtime) -> None:
    """Load the universe's candles before the first request, so that the first ``/pair``
    answers at its usual speed instead of waiting for the candle table to load. A database
    that cannot be read yet is left to the requests, which answer 503 with the reason."""
    try:
        with database.connection_context():
            rt.candles.get()
    except UNAVAILABLE_ERRORS as exc:
        log.warning("candles not loaded at start-up (%s); the first request loads them", exc)
