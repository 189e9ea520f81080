"""Test wiring: a real PostgreSQL with pgvector (the embedded one, or DATABASE_URL), one
database per test session, emptied before every test; each test gets a bundle of its own
(`memory_bundle`), which fixtures and tests change with `reconfigure()`."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from gligabao import bootstrap
from gligabao.bootstrap import Bundle
from gligabao.settings import Settings

ROOT = Path(__file__).resolve().parent.parent

# Provider keys and endpoints of the developer's shell must never reach a test.
for _name in (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GB_SECRETS_ARN",
    "GB_DB_SECRET_ARN",
    "GB_LLM_MODEL",
    "GB_GEO",
):
    os.environ.pop(_name, None)
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ["POWERTOOLS_SERVICE_NAME"] = "gligabao"
os.environ["POWERTOOLS_METRICS_NAMESPACE"] = "gligabao"

pytest_plugins = ["fakes.fixtures", "remember_helpers", "aws_helpers", "job_helpers"]


def embedded_test_postgres_version() -> int:
    """The embedded PostgreSQL the suite runs on: GB_POSTGRES_VERSION (16 or 18), else the default."""
    from gligabao.local.embedded_pg import DEFAULT_POSTGRES_VERSION

    requested = Settings.from_env({"GB_POSTGRES_VERSION": os.environ.get("GB_POSTGRES_VERSION", "")})
    return requested.postgres_version or DEFAULT_POSTGRES_VERSION


def _admin_url() -> str:
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from gligabao.local.embedded_pg import embedded_database_url

    # A data folder per version: the suite runs on either, and both folders stay.
    version = embedded_test_postgres_version()
    return embedded_database_url(str(ROOT / "var" / f"test-pgdata-{version}"), version=version)


@pytest.fixture(scope="session")
def embedded_postgres_version() -> int:
    """The version a test's own embedded server runs, the suite's."""
    return embedded_test_postgres_version()


def pytest_report_header(config) -> str:
    if os.environ.get("DATABASE_URL"):
        return "database: DATABASE_URL"
    return f"database: the embedded PostgreSQL {embedded_test_postgres_version()}"


@pytest.fixture(scope="session")
def admin_database_url() -> str:
    """A fresh database for this test session, with the schema applied, as its owner (the
    embedded superuser, or DATABASE_URL's role): migrations and the tests' own assertions."""
    from gligabao.db.connection import Database
    from gligabao.db.migrate import ensure_schema

    admin = _admin_url()
    name = f"gligabao_test_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    params = conninfo_to_dict(admin)
    params["dbname"] = name
    url = make_conninfo(**params)
    schema = Database(lambda: url)
    ensure_schema(schema, Settings().embedding_dimensions)
    schema.close()
    yield url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def database_url(admin_database_url) -> str:
    """The service's URL of the test database: the role gligabao_app, held by row-level security.
    The embedded PostgreSQL trusts its Unix socket; another server (DATABASE_URL with a password)
    gets a password for the role from the admin connection, as the deploy gives it one."""
    from gligabao.db.migrate import APP_ROLE, set_role_password

    params = conninfo_to_dict(admin_database_url)
    params["user"] = APP_ROLE
    if params.get("password"):
        params["password"] = f"test-{os.getpid()}-{os.urandom(8).hex()}"
        with psycopg.connect(admin_database_url, autocommit=True) as conn:
            set_role_password(conn, params["password"])
    return make_conninfo(**params)


@pytest.fixture(scope="session")
def test_database(database_url):
    """The service's database object for the test database: its connections live the whole session."""
    from gligabao.db.connection import Database

    database = Database(lambda: database_url)
    yield database
    database.close()


def reconfigure(*, database=None, llm=None, embedder=None, place_resolver=None, **settings) -> Bundle:
    """Replace this process's bundle with one of other settings (and parts), keeping the rest: the
    way tests swap a dependency, instead of environment variables and cache resets."""
    current = bootstrap.bundle()
    new = Bundle(
        Settings.model_validate({**current.settings.model_dump(), **settings}),
        database=database or current.database,
        llm=llm if llm is not None else (current._llm if current._fixed_llm else None),
        embedder=embedder
        if embedder is not None
        else (current._embedder if current._fixed_embedder else None),
        geo=place_resolver,
        jobs=current._jobs,
    )
    bootstrap.install(new)
    return new


@pytest.fixture(autouse=True)
def memory_bundle():
    """Every test starts with a bundle of default settings: no provider key, no database."""
    previous = bootstrap.install(Bundle(Settings(database_url="postgresql:///not-configured-in-this-test")))
    yield
    bootstrap.install(previous)


GB_TABLES = (
    "gb_trajectories, gb_inferences, gb_image_artifacts, gb_edge_sessions, gb_entity_sessions, "
    "gb_edge_statements, gb_edge_conflicts, "
    "gb_edge_artifacts, gb_entity_artifacts, gb_edges, gb_entities, gb_artifacts, gb_datasets, "
    "gb_idempotency_records, gb_ontologies, gb_embedding_space"
)


@pytest.fixture
def db(database_url, admin_database_url, test_database):
    """An empty graph, served by this process's bundle (as gligabao_app); yields a connection of
    its own for assertions and setup, as the tables' owner: it sees every user's rows."""
    reconfigure(database_url=database_url, migration_database_url=admin_database_url, database=test_database)
    with psycopg.connect(admin_database_url, autocommit=True) as conn:
        empty_the_graph(conn)
        yield conn


def empty_the_graph(conn: psycopg.Connection, attempts: int = 5) -> None:
    """TRUNCATE the graph's tables. A request still served for the test before (the last fetch of
    a browser page just closed) can hold one of them while it waits for one the TRUNCATE holds:
    PostgreSQL ends the TRUNCATE as the deadlock's victim, and sent again it waits for that request
    to end (it happened in tests/e2e/test_explorer.py under the full suite)."""
    for attempt in range(attempts):
        try:
            conn.execute(f"TRUNCATE {GB_TABLES} RESTART IDENTITY CASCADE")
            return
        except psycopg.errors.DeadlockDetected:
            if attempt == attempts - 1:
                raise
            time.sleep(0.1)


@pytest.fixture(scope="session")
def local_api_server(database_url):
    """The local API (`gligabao serve`) on a free port, routes from the real template.yaml."""
    import threading

    from gligabao.local.server import make_server

    server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def api(local_api_server, db):
    """A client of the local API over real HTTP, on an empty graph."""
    from http_client import LocalApiClient

    return LocalApiClient(local_api_server)


# --- tests/unit: no PostgreSQL, no HTTP, no socket at all (tests/integration and tests/e2e have them)

UNIT_TESTS = ROOT / "tests" / "unit"
SERVER_FIXTURES = {
    "database_url",
    "admin_database_url",
    "db",
    "local_api_server",
    "api",
    "anthropic_server",
    "openai_server",
    "fake_anthropic",
    "fake_openai",
    "models",
}


def _is_unit_test(item: pytest.Item) -> bool:
    return Path(item.path).is_relative_to(UNIT_TESTS)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Before any fixture is set up: a unit test never starts the database or a server.
    if _is_unit_test(item) and SERVER_FIXTURES & set(item.fixturenames):
        used = ", ".join(sorted(SERVER_FIXTURES & set(item.fixturenames)))
        pytest.fail(f"a unit test uses {used}: it belongs in tests/integration or tests/e2e", pytrace=False)


def _refusing(method):
    def refused(sock, address, *args):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(
                f"a unit test opened a network socket ({address!r}): it belongs in tests/integration"
            )
        return method(sock, address, *args)

    return refused


@pytest.fixture(autouse=True)
def _unit_tests_open_no_socket(request, monkeypatch):
    if _is_unit_test(request.node):
        for name in ("connect", "connect_ex", "bind"):
            monkeypatch.setattr(socket.socket, name, _refusing(getattr(socket.socket, name)))


def count_rows(conn: psycopg.Connection, table: str) -> int:
    return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()[0]
