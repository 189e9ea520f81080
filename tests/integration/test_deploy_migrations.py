"""The deploy-time migrations (functions/migrate, Custom::Migrations): driven like CloudFormation
drives them, with the answer PUT to a local HTTP server standing in for the pre-signed URL."""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg
import pytest
from conftest import ROOT, reconfigure
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from rotation_support import (
    APP_ROLE,
    app_secret,
    current_password,
    rotate_secret,
    rotation_function,
    started_rotation,
)

from gligabao import bootstrap
from gligabao.aws.rotation import RotationFailed
from gligabao.db import deploy_migrations, migrate
from gligabao.db.connection import Database
from gligabao.db.deploy_migrations import ANSWER_MARGIN_MS, PHYSICAL_RESOURCE_ID
from gligabao.db.migrate import available_migrations, newest_migration

PASSWORD = "s3cr3t-Pa55word-never-shown"


def _load_migrate_app():
    spec = importlib.util.spec_from_file_location(
        "gb_migrate_function_app", ROOT / "functions/migrate/app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeContext:
    function_name = "gligabao-migrate"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:gligabao-migrate"
    aws_request_id = "00000000-0000-0000-0000-000000000001"

    def __init__(self, seconds_for_migrations: float = 120):
        # The time the invocation leaves the migrations: the function keeps ANSWER_MARGIN_MS more.
        self._ends_at = time.monotonic() + seconds_for_migrations + ANSWER_MARGIN_MS / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._ends_at - time.monotonic()) * 1000))


def out_of_time() -> FakeContext:
    """No time left to wait for the database: one connection attempt."""
    return FakeContext(seconds_for_migrations=0)


class ResponseServer:
    """Records the PUTs CloudFormation's pre-signed URL would receive."""

    def __init__(self):
        self.requests: list[dict] = []
        recorded = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                recorded.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/cfn-response?X-Amz-Signature=abc"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def response_server():
    server = ResponseServer()
    yield server
    server.close()


LAMBDA_CONTEXT_KEYS = [
    "function_name",
    "function_memory_size",
    "function_arn",
    "function_request_id",
    "cold_start",
    "xray_trace_id",
]


@pytest.fixture
def migrate_handler():
    app = _load_migrate_app()
    yield app.handler
    # Powertools loggers of one service share their keys: the Lambda context the handler added
    # must not reach the next test's log lines.
    app.logger.remove_keys(LAMBDA_CONTEXT_KEYS)


def _event(request_type: str, url: str, **extra) -> dict:
    event = {
        "RequestType": request_type,
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:gligabao-migrate",
        "ResponseURL": url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/gligabao/1111",
        "RequestId": f"req-{request_type.lower()}",
        "LogicalResourceId": "Migrations",
        "ResourceType": "Custom::Migrations",
        "ResourceProperties": {
            "ServiceToken": "x",
            "LayerVersion": "arn:aws:lambda:...:layer:gligabao-core:7",
        },
    }
    event.update(extra)
    return event


def _use_database(monkeypatch, url: str) -> None:
    reconfigure(database_url=url, database=Database(lambda: url))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def fresh_database(admin_database_url, monkeypatch):
    """An empty database of its own (no schema yet), as a new Aurora cluster is."""
    params = conninfo_to_dict(admin_database_url)
    name = f"{params['dbname']}_deploy"
    admin = make_conninfo(**{**params, "dbname": "postgres"})
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_conninfo(**{**params, "dbname": name})
    _use_database(monkeypatch, url)
    yield url
    bootstrap.bundle().database.close()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_create_applies_the_migrations_and_answers_success(fresh_database, response_server, migrate_handler):
    answer = migrate_handler(_event("Create", response_server.url), FakeContext())

    assert len(response_server.requests) == 1
    put = response_server.requests[0]
    assert put["path"].startswith("/cfn-response")
    assert put["headers"].get("Content-Type", "") == ""  # the pre-signed URL signs no content type
    body = put["body"]
    assert body == answer
    expected = [f"{version:04d}_{name}" for version, name, _ in available_migrations()]
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == PHYSICAL_RESOURCE_ID
    assert body["StackId"] == "arn:aws:cloudformation:us-east-1:123456789012:stack/gligabao/1111"
    assert body["RequestId"] == "req-create"
    assert body["LogicalResourceId"] == "Migrations"
    assert body["Data"] == {"applied": ",".join(expected), "count": str(len(expected))}
    assert body["Reason"]

    with psycopg.connect(fresh_database) as conn:
        versions = [
            row[0] for row in conn.execute("SELECT version FROM gb_schema_migrations ORDER BY version")
        ]
    assert versions == [version for version, _, _ in available_migrations()]


def test_update_is_idempotent(fresh_database, response_server, migrate_handler):
    migrate_handler(_event("Create", response_server.url), FakeContext())
    migrate_handler(
        _event(
            "Update", response_server.url, PhysicalResourceId=PHYSICAL_RESOURCE_ID, OldResourceProperties={}
        ),
        FakeContext(),
    )

    body = response_server.requests[1]["body"]
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == PHYSICAL_RESOURCE_ID
    assert body["Data"] == {"applied": "", "count": "0"}


def test_delete_succeeds_without_touching_the_database(monkeypatch, response_server, migrate_handler):
    # A database that cannot be reached: touching it would fail.
    _use_database(monkeypatch, f"postgresql://gb:{PASSWORD}@127.0.0.1:{_closed_port()}/gligabao")

    migrate_handler(
        _event("Delete", response_server.url, PhysicalResourceId=PHYSICAL_RESOURCE_ID), out_of_time()
    )

    body = response_server.requests[0]["body"]
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == PHYSICAL_RESOURCE_ID
    assert body["RequestId"] == "req-delete"
    assert body["Data"] == {}


def test_a_failing_migration_answers_failed_without_the_password(
    monkeypatch, response_server, migrate_handler
):
    _use_database(monkeypatch, f"postgresql://gb:{PASSWORD}@127.0.0.1:{_closed_port()}/gligabao")
    migrate_handler(_event("Create", response_server.url), out_of_time())

    assert len(response_server.requests) == 1
    body = response_server.requests[0]["body"]
    assert body["Status"] == "FAILED"
    assert body["Reason"]
    assert len(body["Reason"]) <= 400
    assert PASSWORD not in json.dumps(body)
    assert body["PhysicalResourceId"] == PHYSICAL_RESOURCE_ID
    assert body["LogicalResourceId"] == "Migrations"
    assert body["Data"] == {}


def test_an_unknown_request_type_answers_failed(response_server, migrate_handler):
    migrate_handler(_event("Rename", response_server.url), FakeContext())

    assert response_server.requests[0]["body"]["Status"] == "FAILED"


@pytest.fixture
def keeps_the_service_password(database_url, admin_database_url):
    """The role is the server's: the tests' own password (a server asking for one) is given back."""
    from gligabao.db.migrate import set_role_password

    yield
    password = conninfo_to_dict(database_url).get("password")
    if password:
        with psycopg.connect(admin_database_url, autocommit=True) as conn:
            set_role_password(conn, password)


def test_create_sets_the_service_roles_password_from_its_secret(
    fresh_database, response_server, migrate_handler, aws_env, keeps_the_service_password
):
    import boto3
    from moto import mock_aws

    from gligabao.db.migrate import APP_ROLE

    app_password = "app-Pa55word-from-its-own-secret"
    with mock_aws():
        arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
            Name="gligabao/database-app",
            SecretString=json.dumps({"username": APP_ROLE, "password": app_password}),
        )["ARN"]
        reconfigure(db_app_secret_arn=arn)
        migrate_handler(_event("Create", response_server.url), FakeContext())

    body = response_server.requests[0]["body"]
    assert body["Status"] == "SUCCESS"
    assert app_password not in json.dumps(body)
    with psycopg.connect(fresh_database) as conn:
        stored = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [APP_ROLE]).fetchone()[
            0
        ]
    assert stored.startswith("SCRAM-SHA-256$") and app_password not in stored
    # the stored verifier is that password's, recomputed from its salt
    iterations, salt = stored.split("$")[1].split(":")
    assert _scram_keys(app_password, salt, int(iterations)) == stored.split("$")[2]


def _scram_keys(password: str, salt_b64: str, iterations: int) -> str:
    """StoredKey:ServerKey of a SCRAM-SHA-256 verifier (RFC 5802), to check a stored one."""
    import base64
    import hashlib
    import hmac

    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt_b64), iterations)
    stored_key = hashlib.sha256(hmac.digest(salted, b"Client Key", "sha256")).digest()
    server_key = hmac.digest(salted, b"Server Key", "sha256")
    return f"{base64.b64encode(stored_key).decode()}:{base64.b64encode(server_key).decode()}"


def test_an_update_that_changes_the_embedding_size_fails_the_deploy_with_the_reason(
    fresh_database, response_server, migrate_handler
):
    stored = bootstrap.bundle().settings.embedding_dimensions
    migrate_handler(_event("Create", response_server.url), FakeContext())
    other = stored - 1  # whatever the default is, another size
    reconfigure(embedding_dimensions=other)

    migrate_handler(
        _event("Update", response_server.url, PhysicalResourceId=PHYSICAL_RESOURCE_ID), FakeContext()
    )

    body = response_server.requests[1]["body"]
    assert body["Status"] == "FAILED"
    assert body["Reason"].startswith(
        f"EmbeddingSizeChanged: the database's embeddings have {stored} dimensions but "
        f"GB_EMBEDDING_DIMENSIONS (EmbeddingDimensions) is {other}"
    )


# --- updates, rollbacks, and migrations that wait or run too long ----------------------------------


def _properties(schema_version: int | None) -> dict:
    properties = {"ServiceToken": "x", "LayerVersion": "arn:aws:lambda:...:layer:gligabao-core:7"}
    if schema_version is not None:
        properties["SchemaVersion"] = str(schema_version)  # CloudFormation sends strings
    return properties


def _update(url: str, asks: int | None, had: int | None) -> dict:
    return _event(
        "Update",
        url,
        PhysicalResourceId=PHYSICAL_RESOURCE_ID,
        ResourceProperties=_properties(asks),
        OldResourceProperties=_properties(had),
    )


def _schema(url: str) -> dict:
    """What a migration could change: the tables' columns, the functions, the versions applied."""
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            """SELECT table_name, column_name, data_type FROM information_schema.columns
               WHERE table_schema = 'public' ORDER BY 1, 2"""
        ).fetchall()
        functions = conn.execute(
            "SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1"
        ).fetchall()
        versions = conn.execute("SELECT version, name FROM gb_schema_migrations ORDER BY 1").fetchall()
    return {"columns": columns, "functions": functions, "versions": versions}


@pytest.fixture
def extra_migration(monkeypatch):
    """One more migration file after this code's newest, with the SQL a test gives it."""

    def add(text: str) -> str:
        version = newest_migration() + 1
        files = available_migrations()
        monkeypatch.setattr(migrate, "available_migrations", lambda: [*files, (version, "extra", text)])
        return f"{version:04d}_extra"

    return add


def test_a_rollback_answers_success_without_touching_the_database(
    monkeypatch, response_server, migrate_handler
):
    # A database that cannot be reached: touching it would fail.
    _use_database(monkeypatch, f"postgresql://gb:{PASSWORD}@127.0.0.1:{_closed_port()}/gligabao")
    newest = newest_migration()

    migrate_handler(_update(response_server.url, asks=newest - 1, had=newest), out_of_time())

    body = response_server.requests[0]["body"]
    assert body["Status"] == "SUCCESS"
    assert body["Reason"] == (
        f"schema kept at version {newest}: this request asks for {newest - 1}, an older one "
        "(a rollback); nothing ran"
    )
    assert body["Data"] == {"applied": "", "count": "0", "kept": str(newest)}
    assert body["PhysicalResourceId"] == PHYSICAL_RESOURCE_ID


def test_an_update_asking_for_an_older_schema_than_the_database_has_runs_nothing(
    fresh_database, response_server, migrate_handler, extra_migration
):
    newest = newest_migration()
    migrate_handler(_event("Create", response_server.url), FakeContext())
    before = _schema(fresh_database)
    extra_migration("CREATE TABLE gb_never_created (id int)")  # would be pending: never runs

    # the old template named no SchemaVersion (it predates it): the database's own versions decide
    migrate_handler(_update(response_server.url, asks=newest - 1, had=None), FakeContext())

    body = response_server.requests[1]["body"]
    assert body["Status"] == "SUCCESS"
    assert body["Reason"].startswith(f"schema kept at version {newest}: ")
    assert _schema(fresh_database) == before


def test_older_code_on_a_newer_schema_succeeds_and_leaves_the_newer_versions_alone(
    fresh_database, response_server, migrate_handler
):
    newest = newest_migration()
    migrate_handler(
        _event("Create", response_server.url, ResourceProperties=_properties(newest)), FakeContext()
    )
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO gb_schema_migrations (version, name) VALUES (%s, 'of_a_newer_release')", [newest + 1]
        )
    before = _schema(fresh_database)

    # an Update the older code answers, with no SchemaVersion (an older template) or its own
    for asks in (None, newest):
        migrate_handler(_update(response_server.url, asks=asks, had=asks), FakeContext())

    assert [put["body"]["Status"] for put in response_server.requests] == ["SUCCESS"] * 3
    assert response_server.requests[1]["body"]["Reason"] == "schema up to date"
    assert response_server.requests[2]["body"]["Reason"].startswith(f"schema kept at version {newest + 1}: ")
    assert _schema(fresh_database) == before


def test_a_template_asking_for_a_schema_this_code_lacks_fails(
    fresh_database, response_server, migrate_handler
):
    newest = newest_migration()

    migrate_handler(
        _event("Create", response_server.url, ResourceProperties=_properties(newest + 1)), FakeContext()
    )

    body = response_server.requests[0]["body"]
    assert body["Status"] == "FAILED"
    assert body["Reason"].startswith(
        f"SchemaMismatch: the template asks for schema version {newest + 1} but this code's newest "
        f"migration is {newest}"
    )


class MigrationClock:
    """The migrations' `time` (db/migrate.py): the real monotonic clock, but each pause between two
    attempts to lock is recorded and runs `during_pause` (the other transaction ending, say)
    instead of sleeping."""

    def __init__(self):
        self.pauses: list[float] = []
        self.during_pause = lambda: None

    @staticmethod
    def monotonic() -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.during_pause()


@pytest.fixture
def quick_lock_retries(monkeypatch) -> MigrationClock:
    monkeypatch.setattr(deploy_migrations, "LOCK_TIMEOUT_MS", 300)
    monkeypatch.setattr(deploy_migrations, "LOCK_PAUSE_SECONDS", 0.2)
    monkeypatch.setattr(deploy_migrations, "LOCK_ATTEMPTS", 2)
    clock = MigrationClock()
    monkeypatch.setattr(migrate, "time", clock)
    return clock


def lock_waits(caplog, name: str) -> list[int]:
    """The attempts of migration `name` that ended at the lock timeout and were retried."""
    return [
        record.attempt
        for record in caplog.records
        if record.getMessage() == "migration waiting for a lock" and record.migration == name
    ]


def test_a_migration_blocked_by_a_lock_fails_the_deploy_with_the_reason_and_changes_nothing(
    fresh_database, response_server, migrate_handler, extra_migration, quick_lock_retries, caplog
):
    migrate_handler(_event("Create", response_server.url), FakeContext())
    name = extra_migration(
        "CREATE TABLE gb_half_applied (id int); ALTER TABLE gb_datasets ADD COLUMN blocked int"
    )
    before = _schema(fresh_database)

    with psycopg.connect(fresh_database) as holder:  # an API query's transaction, still open
        holder.execute("SELECT count(*) FROM gb_datasets")
        migrate_handler(_update(response_server.url, asks=None, had=None), FakeContext())

    body = response_server.requests[1]["body"]
    assert body["Status"] == "FAILED"
    assert body["Reason"].startswith(
        f"MigrationFailed: migration {name} could not lock its tables within 300 ms (2 attempt(s)): "
        "another transaction holds them; rolled back, nothing of it applied / LockNotAvailable: "
        "canceling statement due to lock timeout"
    )
    # two waits of 300 ms (the lock timeout) and one pause between them, not the holder's whole
    # transaction (which never ends while the migration runs)
    assert lock_waits(caplog, name) == [1]
    assert quick_lock_retries.pauses == [0.2]
    assert _schema(fresh_database) == before  # not even the table created before the blocked statement


def test_the_lock_is_taken_at_a_later_attempt_once_the_other_transaction_ends(
    fresh_database, response_server, migrate_handler, extra_migration, quick_lock_retries, caplog
):
    migrate_handler(_event("Create", response_server.url), FakeContext())
    name = extra_migration("ALTER TABLE gb_datasets ADD COLUMN waited int")
    holder = psycopg.connect(fresh_database)
    holder.execute("SELECT count(*) FROM gb_datasets")  # an API query's transaction, still open
    applied_during_the_pause = []

    def the_other_transaction_ends():
        with psycopg.connect(fresh_database, autocommit=True) as conn:
            applied_during_the_pause.append(
                conn.execute("SELECT count(*) FROM gb_schema_migrations WHERE name = 'extra'").fetchone()[0]
            )
        holder.close()

    quick_lock_retries.during_pause = the_other_transaction_ends

    # 10 s: a wait for the holder that no lock timeout ends is cancelled then (FAILED), not hung
    migrate_handler(_update(response_server.url, asks=None, had=None), FakeContext(seconds_for_migrations=10))

    assert lock_waits(caplog, name) == [1]  # the first attempt ended at the lock timeout
    assert quick_lock_retries.pauses == [0.2] and applied_during_the_pause == [0]
    body = response_server.requests[1]["body"]
    assert body["Status"] == "SUCCESS"  # the second attempt took the lock
    assert body["Data"] == {"applied": name, "count": "1"}
    with psycopg.connect(fresh_database) as conn:
        assert conn.execute("SELECT count(*) FROM gb_schema_migrations WHERE name = 'extra'").fetchone() == (
            1,
        )


def test_a_migration_that_outlives_the_invocation_is_cancelled_and_answered_before_the_function_ends(
    fresh_database, response_server, migrate_handler, extra_migration
):
    migrate_handler(_event("Create", response_server.url), FakeContext())
    name = extra_migration("CREATE TABLE gb_half_applied (id int); SELECT pg_sleep(60)")
    before = _schema(fresh_database)

    started = time.monotonic()
    migrate_handler(
        _update(response_server.url, asks=None, had=None), FakeContext(seconds_for_migrations=1.5)
    )
    waited = time.monotonic() - started

    body = response_server.requests[1]["body"]
    assert body["Status"] == "FAILED"
    assert body["Reason"].startswith(
        f"MigrationFailed: migration {name} ran out of time (the function's own timeout comes next): "
        "rolled back, nothing of it applied / QueryCanceled: "
    )
    assert waited < 10
    assert _schema(fresh_database) == before


def test_local_migrations_run_without_timeouts(fresh_database, extra_migration):
    """`gligabao migrate` and `serve`: no lock_timeout, no statement_timeout unless given."""
    extra_migration(
        "CREATE TABLE gb_timeouts_seen AS SELECT current_setting('lock_timeout') AS lock_timeout, "
        "current_setting('statement_timeout') AS statement_timeout"
    )
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        migrate.migrate(conn, bootstrap.bundle().settings.embedding_dimensions)

        assert conn.execute("SELECT lock_timeout, statement_timeout FROM gb_timeouts_seen").fetchone() == (
            "0",
            "0",
        )


# --- the rotation of the service role's password (the migrate function as its rotation function) -----


FIRST_APP_PASSWORD = "first-Pa55word-of-gligabao-app"


@pytest.fixture
def app_secret_rotation(
    fresh_database, response_server, migrate_handler, aws_env, keeps_the_service_password, monkeypatch
):
    """A stack as deployed: the service role's secret, its password set by the Create; the
    migrate function is the secret's rotation function. Yields the Secrets Manager client and
    the secret's ARN."""
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("secretsmanager", region_name="us-east-1")
        arn = app_secret(client, FIRST_APP_PASSWORD)
        reconfigure(db_app_secret_arn=arn)
        migrate_handler(_event("Create", response_server.url), FakeContext())
        assert response_server.requests[0]["body"]["Status"] == "SUCCESS"
        yield client, arn


def _stored_verifier(url: str) -> str:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [APP_ROLE]).fetchone()[0]


def _is_verifier_of(stored: str, password: str) -> bool:
    iterations, salt = stored.split("$")[1].split(":")
    return _scram_keys(password, salt, int(iterations)) == stored.split("$")[2]


def test_rotate_secret_changes_the_service_role_s_password_in_the_database_then_in_the_secret(
    app_secret_rotation, fresh_database, migrate_handler, monkeypatch
):
    client, arn = app_secret_rotation
    assert _is_verifier_of(_stored_verifier(fresh_database), FIRST_APP_PASSWORD)
    function = rotation_function(monkeypatch, lambda event: migrate_handler(event, FakeContext()))

    rotate_secret(client, arn, function)  # the one step: aws secretsmanager rotate-secret

    new = current_password(client, arn)
    assert new != FIRST_APP_PASSWORD
    stored = _stored_verifier(fresh_database)
    assert _is_verifier_of(stored, new) and new not in stored
    # A connection as the role with the new password, as testSecret made it (the embedded server
    # trusts its socket; a server that asks for passwords, DATABASE_URL's, checks it).
    login = bootstrap.role_login_url(bootstrap.bundle().settings, APP_ROLE, new)
    with psycopg.connect(login) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == APP_ROLE


def test_a_deploy_after_a_rotation_keeps_the_rotated_password(
    app_secret_rotation, fresh_database, response_server, migrate_handler, monkeypatch
):
    client, arn = app_secret_rotation
    rotate_secret(
        client, arn, rotation_function(monkeypatch, lambda event: migrate_handler(event, FakeContext()))
    )

    migrate_handler(_update(response_server.url, asks=None, had=None), FakeContext())

    assert response_server.requests[1]["body"]["Status"] == "SUCCESS"
    assert _is_verifier_of(_stored_verifier(fresh_database), current_password(client, arn))


def test_a_rotation_step_out_of_order_is_refused_and_the_password_stays(
    app_secret_rotation, fresh_database, migrate_handler, monkeypatch
):
    client, arn = app_secret_rotation
    token = started_rotation(client, arn, monkeypatch)
    before = _stored_verifier(fresh_database)

    with pytest.raises(RotationFailed, match=r"^RotationRefused: setSecret before createSecret"):
        migrate_handler({"Step": "setSecret", "SecretId": arn, "ClientRequestToken": token}, FakeContext())

    assert _stored_verifier(fresh_database) == before
    assert current_password(client, arn) == FIRST_APP_PASSWORD
