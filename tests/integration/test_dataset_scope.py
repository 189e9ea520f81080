"""A transaction about one dataset sees that dataset's rows only (migration 0047): naming it
narrows what row-level security shows the user, never widens it, and lets each policy read one
row of gb_datasets instead of every dataset the user has."""

from __future__ import annotations

from contextlib import contextmanager

import psycopg
import psycopg.rows
import pytest
from graph_rows import add_dataset, add_edge, add_entity, alice_works_at_acme
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_row_level_security import PROTECTED_TABLES, two_users

# The tables whose rows belong to a dataset (gb_datasets and gb_inferences are the user's).
DATASET_TABLES = tuple(table for table in PROTECTED_TABLES if table not in ("gb_datasets", "gb_inferences"))


@contextmanager
def as_the_service(database_url, user_id: str, dataset: str | None):
    """A transaction of the service's role with its user and, when given, the dataset it is about."""
    with psycopg.connect(database_url) as conn, conn.transaction():
        conn.execute(
            "SELECT set_config('gligabao.user_id', %s, true), set_config('gligabao.dataset', %s, true)",
            [user_id, dataset or ""],
        )
        yield conn


def count(conn, table: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def with_a_second_dataset_of_u1(db) -> dict[str, int]:
    """u1's `main` and `notes`, u2's `main`, each holding a row of every table."""
    datasets = two_users(db)
    notes = alice_works_at_acme(db, "u1", "notes")
    edge = db.execute("SELECT id FROM gb_edges WHERE dataset_id = %s LIMIT 1", [notes]).fetchone()[0]
    db.execute("INSERT INTO gb_edge_sessions VALUES (%s, 'b')", [edge])
    return {**datasets, "u1 notes": notes}


@pytest.mark.parametrize("table", DATASET_TABLES)
def test_a_transaction_naming_a_dataset_sees_that_datasets_rows_only(db, database_url, table):
    with_a_second_dataset_of_u1(db)

    with as_the_service(database_url, "u1", None) as conn:
        all_of_u1 = count(conn, table)
    with as_the_service(database_url, "u1", "main") as conn:
        main = count(conn, table)
    with as_the_service(database_url, "u1", "notes") as conn:
        notes = count(conn, table)

    assert main > 0 and main + notes == all_of_u1
    if table in ("gb_entities", "gb_edges", "gb_artifacts", "gb_entity_sessions"):
        assert notes > 0  # the second dataset's rows exist, and are not seen from main


def test_naming_another_users_dataset_shows_nothing_of_it(db, database_url):
    two_users(db)
    add_dataset(db, "u2", "only-u2")

    with as_the_service(database_url, "u1", "only-u2") as conn:
        assert [count(conn, table) for table in ("gb_edges", "gb_entities", "gb_artifacts")] == [0, 0, 0]
        assert count(conn, "gb_datasets") == 1  # u1's own datasets stay listed: only the rows narrow


def test_naming_the_same_name_as_another_user_shows_only_ones_own(db, database_url):
    datasets = two_users(db)  # both have a dataset called main

    with as_the_service(database_url, "u1", "main") as conn:
        seen = {row[0] for row in conn.execute("SELECT DISTINCT dataset_id FROM gb_edges").fetchall()}

    assert seen == {datasets["u1"]}


def test_a_write_into_another_dataset_than_the_named_one_is_refused(db, database_url):
    datasets = with_a_second_dataset_of_u1(db)

    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege),
        as_the_service(database_url, "u1", "main") as conn,
    ):
        conn.execute(
            "INSERT INTO gb_entities (dataset_id, name, normalized_name, type) VALUES (%s, 'Bob', 'bob', 'person')",
            [datasets["u1 notes"]],
        )

    assert db.execute("SELECT count(*) FROM gb_entities WHERE name = 'Bob'").fetchone()[0] == 0


def dataset_rows_read(conn, statement: str) -> int:
    """The rows of gb_datasets that running `statement` read, as this transaction's statistics
    count them (the policies' reads included, inside their function too)."""

    def so_far() -> int:
        return conn.execute(
            """SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)
               FROM pg_stat_xact_user_tables WHERE relname = 'gb_datasets'"""
        ).fetchone()[0]

    before = so_far()
    conn.execute(statement).fetchall()
    return so_far() - before


def test_with_a_dataset_named_the_policy_reads_one_dataset_row_however_many_the_user_has(db, database_url):
    main = add_dataset(db, "u1", "main")
    alice, acme = add_entity(db, main, "Alice"), add_entity(db, main, "Acme", "organization")
    add_edge(db, main, alice, acme, "works_at")
    db.execute(
        "INSERT INTO gb_datasets (user_id, name) SELECT 'u1', 'd' || g FROM generate_series(1, 300) AS g"
    )

    with as_the_service(database_url, "u1", "main") as conn:
        named = dataset_rows_read(conn, "SELECT * FROM gb_edges")
        assert count(conn, "gb_edges") == 1
    with as_the_service(database_url, "u1", None) as conn:
        unnamed = dataset_rows_read(conn, "SELECT * FROM gb_edges")

    assert named == 1
    assert unnamed == 301  # every dataset of the user: what every policy read before 0047


NAMES = ["main", "notes", "work"]
USERS = ["u1", "u2", "u3"]


@st.composite
def layouts(draw):
    """Which user holds which dataset names (names shared across users), and how many edges each."""
    held = draw(
        st.lists(
            st.tuples(st.sampled_from(USERS), st.sampled_from(NAMES)), min_size=1, max_size=7, unique=True
        )
    )
    return {dataset: draw(st.integers(0, 3)) for dataset in held}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=layouts(), user=st.sampled_from(USERS), scope=st.sampled_from([None, *NAMES]))
def test_a_transaction_sees_exactly_the_rows_of_its_users_named_dataset_or_of_all_its_datasets(
    db, database_url, layout, user, scope
):
    db.execute("TRUNCATE gb_datasets CASCADE")
    ids = {}
    for (owner, name), edges in layout.items():
        dataset = ids[(owner, name)] = add_dataset(db, owner, name)
        for n in range(edges):
            a, b = add_entity(db, dataset, f"A{n}"), add_entity(db, dataset, f"B{n}")
            add_edge(db, dataset, a, b, "knows")
    expected = {
        ids[key]
        for key, edges in layout.items()
        if edges and key[0] == user and (scope is None or key[1] == scope)
    }

    with as_the_service(database_url, user, scope) as conn:
        edges_seen = {row[0] for row in conn.execute("SELECT dataset_id FROM gb_edges").fetchall()}
        entities_seen = {row[0] for row in conn.execute("SELECT dataset_id FROM gb_entities").fetchall()}
        datasets_seen = {row[0] for row in conn.execute("SELECT id FROM gb_datasets").fetchall()}

    assert edges_seen == entities_seen == expected
    assert datasets_seen == {ids[key] for key in layout if key[0] == user}  # the list is the user's


@pytest.mark.parametrize("kind", ["artifact", "entity", "edge"])
def test_locking_the_dataset_of_a_row_found_by_id_narrows_the_transaction_to_it(db, database_url, kind):
    """Forget, corrections and restores find their dataset by a row's id: from its lock on, they
    see that dataset only (and each policy reads one row of gb_datasets)."""
    from gligabao.db import forget as forget_rows

    datasets = with_a_second_dataset_of_u1(db)
    main = datasets["u1"]
    row_id = db.execute(
        {
            "artifact": "SELECT id FROM gb_artifacts WHERE dataset_id = %s AND parent_id IS NULL LIMIT 1",
            "entity": "SELECT id FROM gb_entities WHERE dataset_id = %s LIMIT 1",
            "edge": "SELECT id FROM gb_edges WHERE dataset_id = %s LIMIT 1",
        }[kind],
        [main],
    ).fetchone()[0]
    lock = {
        "artifact": lambda conn: forget_rows.lock_dataset_of_artifact(conn, "u1", row_id).dataset_id,
        "entity": lambda conn: forget_rows.lock_dataset_of_entity(conn, "u1", row_id),
        "edge": lambda conn: forget_rows.lock_dataset_of_edge(conn, "u1", row_id),
    }[kind]

    with as_the_service(database_url, "u1", None) as conn:
        conn.row_factory = psycopg.rows.dict_row
        before = {row["dataset_id"] for row in conn.execute("SELECT dataset_id FROM gb_edges").fetchall()}
        assert lock(conn) == main
        after = {row["dataset_id"] for row in conn.execute("SELECT dataset_id FROM gb_edges").fetchall()}

    assert before == {main, datasets["u1 notes"]}
    assert after == {main}
