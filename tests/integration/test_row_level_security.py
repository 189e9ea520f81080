"""Tenant isolation in the database itself (migration 0003): the service's role sees and writes
only the rows of the transaction's user, whatever SQL it sends, with no user filter at all."""

from __future__ import annotations

from contextlib import contextmanager

import psycopg
import pytest
from graph_rows import add_artifact, add_entity, alice_works_at_acme
from psycopg.rows import dict_row

from gligabao.db import graph_reads
from gligabao.db.migrate import APP_ROLE, set_role_password
from gligabao.memory.retrieval import name_prefix_keys, term_grams

PROTECTED_TABLES = (
    "gb_datasets",
    "gb_artifacts",
    "gb_entities",
    "gb_entity_recency",
    "gb_entity_descriptions",
    "gb_edges",
    "gb_entity_artifacts",
    "gb_edge_artifacts",
    "gb_entity_sessions",
    "gb_edge_sessions",
    "gb_image_artifacts",
    "gb_inferences",
    "gb_trajectories",
    "gb_prepared_texts",
    "gb_series",
    "gb_series_points",
    "gb_series_anchors",
)


def two_users(db) -> dict[str, int]:
    """The same small graph for u1 and u2, every protected table holding rows of both."""
    datasets = {}
    for user in ("u1", "u2"):
        dataset = datasets[user] = alice_works_at_acme(db, user)
        edge, artifact = db.execute(
            "SELECT id, artifact_id FROM gb_edges WHERE dataset_id = %s AND artifact_id IS NOT NULL",
            [dataset],
        ).fetchone()
        db.execute("INSERT INTO gb_edge_artifacts VALUES (%s, %s)", [edge, artifact])
        db.execute("INSERT INTO gb_edge_sessions VALUES (%s, 'a')", [edge])
        db.execute(
            """INSERT INTO gb_image_artifacts (dataset_id, artifact_id, sha256, media_type, bytes, extraction)
               VALUES (%s, %s, %s, 'image/png', 10, '{}')""",
            [dataset, artifact, f"sha-{user}"],
        )
        db.execute(
            """INSERT INTO gb_inferences (user_id, dataset_id, type, stage, model, duration_ms, ok)
               VALUES (%s, %s, 'remember', 'extract', 'm', 1, true)""",
            [user, dataset],
        )
        db.execute(
            "INSERT INTO gb_trajectories (dataset_id, kind, trajectory) VALUES (%s, 'query', '{}')", [dataset]
        )
        db.execute(
            """INSERT INTO gb_prepared_texts (artifact_id, dataset_id, options, extraction, embedded)
               VALUES (%s, %s, '{}', '{}', '{}')""",
            [artifact, dataset],
        )
        series = db.execute(
            "INSERT INTO gb_series (dataset_id, key) VALUES (%s, 'AAPL.close') RETURNING id", [dataset]
        ).fetchone()[0]
        db.execute(
            "INSERT INTO gb_series_points (series_id, dataset_id, at, value) VALUES (%s, %s, now(), 1)",
            [series, dataset],
        )
        db.execute(
            "INSERT INTO gb_series_anchors (series_id, dataset_id, artifact_id) VALUES (%s, %s, %s)",
            [series, dataset, artifact],
        )
    return datasets


@contextmanager
def as_the_service(database_url, user_id: str | None, **connect):
    """A transaction of the service's role, as a unit of work opens it (or without any user)."""
    with psycopg.connect(database_url, **connect) as conn, conn.transaction():
        if user_id is not None:
            conn.execute("SELECT set_config('gligabao.user_id', %s, true)", [user_id])
        yield conn


def visible(conn, table: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def owned_by(db, table: str, user_id: str) -> int:
    return db.execute(
        f"""SELECT count(*) FROM {table} AS t WHERE {_OWNER[table]} IN
            (SELECT id FROM gb_datasets WHERE user_id = %s)""",
        [user_id],
    ).fetchone()[0]


_OWNER = {
    "gb_datasets": "t.id",
    "gb_artifacts": "t.dataset_id",
    "gb_entities": "t.dataset_id",
    "gb_entity_recency": "t.dataset_id",
    "gb_entity_descriptions": "t.dataset_id",
    "gb_edges": "t.dataset_id",
    "gb_image_artifacts": "t.dataset_id",
    "gb_inferences": "t.dataset_id",
    "gb_trajectories": "t.dataset_id",
    "gb_prepared_texts": "t.dataset_id",
    "gb_series": "t.dataset_id",
    "gb_series_points": "t.dataset_id",
    "gb_series_anchors": "t.dataset_id",
    "gb_entity_artifacts": "(SELECT dataset_id FROM gb_entities WHERE id = t.entity_id)",
    "gb_edge_artifacts": "(SELECT dataset_id FROM gb_edges WHERE id = t.edge_id)",
    "gb_entity_sessions": "(SELECT dataset_id FROM gb_entities WHERE id = t.entity_id)",
    "gb_edge_sessions": "(SELECT dataset_id FROM gb_edges WHERE id = t.edge_id)",
}


@pytest.mark.parametrize("table", PROTECTED_TABLES)
def test_a_query_with_no_user_filter_returns_only_the_transaction_users_rows(db, database_url, table):
    two_users(db)
    mine = owned_by(db, table, "u1")

    with as_the_service(database_url, "u1") as conn:
        rows = conn.execute(f"SELECT * FROM {table}").fetchall()

    assert mine > 0 and len(rows) == mine
    assert owned_by(db, table, "u2") > 0  # the other user's rows are there, unseen


@pytest.mark.parametrize("table", PROTECTED_TABLES)
def test_a_transaction_without_a_user_sees_nothing(db, database_url, table):
    two_users(db)

    with as_the_service(database_url, None) as conn:
        assert visible(conn, table) == 0
    with as_the_service(database_url, "") as conn:
        assert visible(conn, table) == 0


def test_every_gb_table_of_user_data_has_row_level_security(db):
    tables = {
        row[0]
        for row in db.execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'gb\\_%' AND relrowsecurity"
        )
    }
    unprotected = {
        row[0]
        for row in db.execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'gb\\_%' AND NOT relrowsecurity"
        )
    }

    assert set(PROTECTED_TABLES) <= tables
    assert unprotected <= {"gb_schema_migrations"}  # a later table of user data must enable it too


def test_the_user_cannot_write_into_another_users_dataset(db, database_url):
    datasets = two_users(db)
    theirs = datasets["u2"]
    their_entity = add_entity(db, theirs, "Mallory")

    with as_the_service(database_url, "u1") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(
            "INSERT INTO gb_entities (dataset_id, name, normalized_name) VALUES (%s, 'Eve', 'eve')", [theirs]
        )
    with as_the_service(database_url, "u1") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('u2', 'planted')")
    with as_the_service(database_url, "u1") as conn:
        updated = conn.execute("UPDATE gb_entities SET description = 'changed' WHERE id = %s", [their_entity])
        deleted = conn.execute("DELETE FROM gb_datasets WHERE id = %s", [theirs])
        assert updated.rowcount == 0 and deleted.rowcount == 0

    assert db.execute("SELECT description FROM gb_entities WHERE id = %s", [their_entity]).fetchone()[0] == ""
    assert db.execute("SELECT count(*) FROM gb_datasets WHERE id = %s", [theirs]).fetchone()[0] == 1


def test_the_user_cannot_move_a_row_into_another_users_dataset(db, database_url):
    datasets = two_users(db)
    mine = add_entity(db, datasets["u1"], "Bob")

    with as_the_service(database_url, "u1") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("UPDATE gb_entities SET dataset_id = %s WHERE id = %s", [datasets["u2"], mine])
    with as_the_service(database_url, "u1") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("UPDATE gb_datasets SET user_id = 'u2' WHERE id = %s", [datasets["u1"]])


def test_the_user_cannot_link_their_entity_to_another_users_artifact(db, database_url):
    datasets = two_users(db)
    mine = add_entity(db, datasets["u1"], "Bob")
    their_artifact = add_artifact(db, datasets["u2"], "secret")

    with as_the_service(database_url, "u1") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("INSERT INTO gb_entity_artifacts VALUES (%s, %s)", [mine, their_artifact])


def test_the_user_cannot_prepare_a_text_for_another_users_artifact(db, database_url):
    datasets = two_users(db)
    mine = add_artifact(db, datasets["u1"], "mine")
    theirs = add_artifact(db, datasets["u2"], "secret")
    row = "INSERT INTO gb_prepared_texts (artifact_id, dataset_id, options, extraction, embedded) VALUES (%s, %s, '{}', '{}', '{}')"

    for artifact, dataset in ((theirs, datasets["u1"]), (theirs, datasets["u2"]), (mine, datasets["u2"])):
        with as_the_service(database_url, "u1") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(row, [artifact, dataset])
    with as_the_service(database_url, "u1") as conn:
        conn.execute(row, [mine, datasets["u1"]])


def test_a_transaction_without_a_user_can_write_nothing(db, database_url):
    with as_the_service(database_url, None) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'main')")


def test_deleting_a_dataset_as_the_user_removes_its_links_and_leaves_the_other_users(db, database_url):
    datasets = two_users(db)

    with as_the_service(database_url, "u1") as conn:
        conn.execute("DELETE FROM gb_datasets")  # no filter: the policy is the filter

    for table in PROTECTED_TABLES:
        if table != "gb_inferences":  # cost history outlives the dataset (dataset_id set to NULL)
            assert owned_by(db, table, "u1") == 0, table
        assert owned_by(db, table, "u2") > 0, table
    assert db.execute("SELECT count(*) FROM gb_datasets WHERE id = %s", [datasets["u2"]]).fetchone()[0] == 1


def test_the_services_role_cannot_switch_row_level_security_off(db, database_url):
    two_users(db)

    with as_the_service(database_url, "u1") as conn:
        conn.execute("SET LOCAL row_security = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute("SELECT * FROM gb_entities")


def test_the_services_role_owns_nothing_and_has_no_way_around_the_policies(db, database_url):
    role = db.execute(
        "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = %s",
        [APP_ROLE],
    ).fetchone()
    owned = db.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = %s",
        [APP_ROLE],
    ).fetchone()[0]

    assert role == (False, False, False, False)
    assert owned == 0
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == APP_ROLE
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("ALTER TABLE gb_entities DISABLE ROW LEVEL SECURITY")
    with psycopg.connect(database_url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("CREATE TABLE gb_planted (id int)")


def test_a_table_a_later_migration_creates_is_granted_to_the_services_role(db, database_url):
    db.execute("CREATE TABLE gb_later (id int)")
    try:
        with psycopg.connect(database_url) as conn:
            conn.execute("INSERT INTO gb_later VALUES (1)")
            assert conn.execute("SELECT count(*) FROM gb_later").fetchone()[0] == 1
    finally:
        db.execute("DROP TABLE gb_later")


def test_the_keyword_lookups_find_nothing_in_another_users_dataset(db, database_url):
    datasets = two_users(db)
    theirs = datasets["u2"]
    db.execute(
        "UPDATE gb_entities SET description = 'engineer' WHERE dataset_id = %s AND name = 'Alice'", [theirs]
    )
    lookups = (
        ("gb_entities_named", [["ali"]]),
        ("gb_entities_described", [["eng"]]),
        ("gb_entities_described", [["eng"], 10, "eng"]),
        ("gb_entities_recently_described", [["eng"], 1, "eng", 100]),  # found by the walk
        ("gb_entities_recently_described", [["eng"], 10, "eng", 100]),  # the walk finds too few
        ("gb_entities_name_prefixed", [["alice"]]),
    )

    def found(user: str) -> list[list[int]]:
        with as_the_service(database_url, user) as conn:
            return [
                conn.execute(
                    f"SELECT {function}({', '.join(['%s'] * (1 + len(arguments)))})", [theirs, *arguments]
                ).fetchone()[0]
                for function, arguments in lookups
            ]

    assert [len(ids) for ids in found("u2")] == [1] * 6  # the owner finds Alice each way
    assert found("u1") == [[]] * 6


def alices_seeds(conn):
    """The keyword seeds of "who is alice" in u1's dataset main, sent and read as retrieval does."""
    return graph_reads.read_keyword_seeds(
        graph_reads.send_keyword_seeds(
            conn,
            user_id="u1",
            dataset="main",
            terms=["alice"],
            term_grams=[term_grams("alice")],
            normalized_question="who is alice",
            name_prefixes=name_prefix_keys("who is alice"),
            limit=10,
            window=1000,
        )
    )


def test_the_keyword_statement_calls_each_lookup_once_and_reads_the_rows_it_names(db, database_url):
    """Row-level security keeps non-LEAKPROOF conditions (the gram `@>`) from the indexes: the
    keyword statement gets ids from the lookup functions, each an InitPlan (once per statement,
    never once per row), and reads those rows by primary key."""
    datasets = two_users(db)
    for i in range(50):
        add_entity(db, datasets["u1"], f"Person {i}")
    db.execute("ANALYZE")

    with as_the_service(database_url, "u1", row_factory=dict_row) as conn:
        seeds = alices_seeds(conn)
        plans = []
        spy = _Explaining(conn, plans)
        alices_seeds(spy)

    alice = db.execute(
        "SELECT id FROM gb_entities WHERE dataset_id = %s AND name = 'Alice'", [datasets["u1"]]
    ).fetchone()[0]
    assert seeds.seed_ids == [alice]
    conditions = [line for line in plans[0] if "Filter" in line or "Cond" in line]
    assert not any("gb_entities_named(" in line or "gb_grams(" in line for line in conditions), plans[0]


class _Explaining:
    """A connection whose statements are explained instead of run (one plan line per row)."""

    def __init__(self, conn, plans):
        self.conn, self.plans = conn, plans

    def execute(self, statement, params=None):
        rows = self.conn.execute("EXPLAIN " + statement, params).fetchall()
        self.plans.append([row["QUERY PLAN"] for row in rows])
        return _NoRows()


class _NoRows:
    def fetchall(self):
        return []


def test_the_service_roles_password_is_stored_and_sent_as_a_scram_verifier_only(db):
    db.execute("CREATE ROLE gb_password_probe LOGIN")
    sent = _Recording(db)
    try:
        set_role_password(sent, "a-secret-password", role="gb_password_probe")
        stored = db.execute(
            "SELECT rolpassword FROM pg_authid WHERE rolname = 'gb_password_probe'"
        ).fetchone()[0]
    finally:
        db.execute("DROP ROLE gb_password_probe")

    assert stored.startswith("SCRAM-SHA-256$4096:") and "a-secret-password" not in stored
    assert len(sent.statements) == 1 and "a-secret-password" not in sent.statements[0]
    assert "SCRAM-SHA-256$4096:" in sent.statements[0]


class _Recording:
    """A connection that records the text of the statements it runs."""

    def __init__(self, conn):
        self.conn, self.pgconn, self.statements = conn, conn.pgconn, []

    def execute(self, statement, params=None):
        self.statements.append(statement.as_string(self.conn))
        return self.conn.execute(statement, params)
