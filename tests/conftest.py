"""Test fixtures: every test owns its world (a fresh database, fresh accounts).

The demo market is synced and screened once per session into a template database; each test
gets its own copy of it. On SQLite (the default) that is a copy of the template file; with
``PAIRSCREEN_TEST_DATABASE_URL=postgresql://…`` set, the template is a PostgreSQL database
and each test gets ``CREATE DATABASE … TEMPLATE`` of it, dropped after the test. Every HTTP
response is checked against ``openapi.yaml``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

# Installed third-party plugins never leak into the tests' world.
os.environ["PAIRSCREEN_LOAD_PLUGINS"] = ""

from pairscreen import clock
from pairscreen.bootstrap import build_runtime
from pairscreen.cli import main
from pairscreen.config import load_settings
from pairscreen.db.connection import database, init_database
from pairscreen.runtime import Runtime
from tests.support.contract import Contract
from tests.support.databases import TEST_DATABASE_URL, PostgresDatabases
from tests.support.pinned_clock import pin_clock

# The suite's "today" is fixed (tests/support/pinned_clock.py): the demo market, the screens
# and every age are the same whatever day the suite runs, here and in every process it starts.
pin_clock()

CONTRACT = Contract()


def _checkpoint_and_close() -> None:
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()


def _fill_with_demo_data(folder: Path, url: str) -> None:
    """Sync the demo market into the database at ``url`` and publish one screen."""
    from pairscreen.market.sync import sync_candles
    from pairscreen.screening.screen import run_screen

    settings = load_settings(data_dir=folder, database_url=url)
    rt = build_runtime(settings)
    sync_candles(rt.universe, rt.plugins)
    run_screen(rt)


QUOTA_DAY_MARGIN_SECONDS = 180  # longer than any test that counts a day's quota on live servers


@pytest.fixture()
def one_quota_day() -> None:
    """Start a test that counts a day's quota on live servers (which read the real clock)
    far enough from 00:00 UTC to end the same day: the quota resets at midnight, so a run
    crossing it legitimately gets a second day's units. Waits out midnight when it is near."""
    wait = clock.seconds_to_midnight()
    if wait < QUOTA_DAY_MARGIN_SECONDS:
        time.sleep(wait + 1)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite database with the demo market synced and one screen published."""
    folder = tmp_path_factory.mktemp("template")
    path = folder / "pairscreen.sqlite3"
    _fill_with_demo_data(folder, f"sqlite:///{path}")
    _checkpoint_and_close()
    return path


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresDatabases]:
    """This session's databases on the server at ``PAIRSCREEN_TEST_DATABASE_URL``."""
    if not TEST_DATABASE_URL:
        pytest.skip("PostgreSQL only: set PAIRSCREEN_TEST_DATABASE_URL=postgresql://…")
    servers = PostgresDatabases(TEST_DATABASE_URL)
    servers.drop_orphans()
    try:
        yield servers
    finally:
        database.close()
        servers.drop_all()


@pytest.fixture(scope="session")
def postgres_template(postgres: PostgresDatabases, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The PostgreSQL twin of ``demo_template`` (its name): demo market synced, one screen."""
    name = postgres.create("template")
    _fill_with_demo_data(tmp_path_factory.mktemp("pg-template"), postgres.url(name))
    database.close()  # CREATE DATABASE … TEMPLATE needs the template without connections
    return name


@pytest.fixture()
def db_path(tmp_path: Path, demo_template: Path) -> Path:
    path = tmp_path / "pairscreen.sqlite3"
    shutil.copy(demo_template, path)
    return path


@pytest.fixture()
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of this test's own database (a copy of the demo template)."""
    if not TEST_DATABASE_URL:
        yield f"sqlite:///{request.getfixturevalue('db_path')}"
        return
    postgres: PostgresDatabases = request.getfixturevalue("postgres")
    name = postgres.create("t", template=request.getfixturevalue("postgres_template"))
    try:
        yield postgres.url(name)
    finally:
        database.close()
        postgres.drop(name)


@pytest.fixture()
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh database with no schema and no data."""
    if not TEST_DATABASE_URL:
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    postgres: PostgresDatabases = request.getfixturevalue("postgres")
    name = postgres.create("empty")
    try:
        yield postgres.url(name)
    finally:
        database.close()
        postgres.drop(name)


@pytest.fixture()
def runtime(database_url: str, tmp_path: Path) -> Iterator[Runtime]:
    settings = load_settings(data_dir=tmp_path, database_url=database_url)
    rt = build_runtime(settings)
    yield rt
    database.close()


@pytest.fixture()
def empty_runtime(empty_database_url: str, tmp_path: Path) -> Iterator[Runtime]:
    """A runtime on a fresh database with no candles and no screen."""
    settings = load_settings(data_dir=tmp_path, database_url=empty_database_url)
    init_database(settings.database_url)
    rt = build_runtime(settings)
    yield rt
    database.close()


class ContractClient:
    """A test client that checks every response against the contract its app serves
    (``openapi.yaml``, or the universe's own document)."""

    def __init__(self, client, contract: Contract = CONTRACT):  # type: ignore[no-untyped-def]
        self.client = client
        self.contract = contract

    def _check(self, method: str, path: str, response) -> None:  # type: ignore[no-untyped-def]
        self.contract.check(
            method, path.split("?")[0], response.status_code, dict(response.headers),
            response.content,
        )  # fmt: skip
        if self.contract is not CONTRACT:
            CONTRACT.checked += 1  # the session's count of validated responses

    def get(self, path: str, key: str | None = None, headers: dict | None = None, **kwargs):  # type: ignore[no-untyped-def]
        headers = dict(headers or {})
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        response = self.client.get(path, headers=headers, **kwargs)
        self._check("GET", path, response)
        return response

    def request(self, method: str, path: str, **kwargs):  # type: ignore[no-untyped-def]
        response = self.client.request(method, path, **kwargs)
        self._check(method, path, response)
        return response


def make_client(rt: Runtime) -> ContractClient:
    from pairscreen.api.universe_contract import served_contract
    from pairscreen.app import create_app, openapi_path
    from pairscreen.screening.spans import screen_spans

    app = create_app(rt, validate_responses=True)
    windows = screen_spans(rt.universe, rt.settings).backtest_days
    spec, _text = served_contract(openapi_path(rt.settings), windows, rt.universe.bar)
    contract = CONTRACT if isinstance(spec, Path) else Contract(document=spec)
    return ContractClient(app.test_client(), contract)


@pytest.fixture()
def cli(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> Iterator[Callable[..., tuple[int, str, str]]]:
    """``pairscreen`` on the test's database, in-process: ``cli(*argv)`` gives (exit code,
    stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--database-url", database_url, *argv])
        out, err = capsys.readouterr()
        return code, out, err

    yield run
    database.close()


@pytest.fixture()
def client(runtime: Runtime) -> Iterator[ContractClient]:
    c = make_client(runtime)
    with c.client:
        yield c


@dataclass(frozen=True)
class Keys:
    personal: str
    pro: str
    expired: str
    no_tier: str


@pytest.fixture()
def keys(runtime: Runtime) -> Keys:
    from pairscreen.access import accounts

    with database.connection_context():
        year = clock.now() + timedelta(days=365)
        accounts.create_user("personal@example.com", "personal", expires=year)
        accounts.create_user("pro@example.com", "pro", lifetime=True)
        accounts.create_user(
            "expired@example.com", "personal", expires=clock.now() - timedelta(days=1)
        )
        accounts.create_user("none@example.com", None)
        return Keys(
            personal=accounts.rotate_key("personal@example.com"),
            pro=accounts.rotate_key("pro@example.com"),
            expired=accounts.rotate_key("expired@example.com"),
            no_tier=accounts.rotate_key("none@example.com"),
        )


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    terminalreporter.write_line(
        f"contract: {CONTRACT.checked} responses validated against openapi.yaml"
    )
