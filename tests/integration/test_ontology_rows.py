"""gb_ontologies under row-level security (migration 0030), and the key that ties a dataset to an
ontology of its own user: whatever SQL the service's role sends, with no user filter at all."""

from __future__ import annotations

import json

import psycopg
import pytest
from graph_rows import add_dataset
from test_row_level_security import as_the_service


def add_ontology(db, user_id: str, name: str = "people") -> int:
    return db.execute(
        """INSERT INTO gb_ontologies (user_id, name, format, document, sha256, parsed, out_of_ontology)
           VALUES (%s, %s, 'json', '{}', 'x', %s, 'map') RETURNING id""",
        [user_id, name, json.dumps({"entity_types": [], "relation_types": []})],
    ).fetchone()[0]


def test_the_user_sees_only_their_ontologies(db, database_url):
    add_ontology(db, "u1")
    add_ontology(db, "u2")

    with as_the_service(database_url, "u1") as conn:
        assert conn.execute("SELECT user_id FROM gb_ontologies").fetchall() == [("u1",)]
    with as_the_service(database_url, None) as conn:
        assert conn.execute("SELECT count(*) FROM gb_ontologies").fetchone()[0] == 0


def test_the_user_cannot_write_an_ontology_for_another_user(db, database_url):
    with pytest.raises(psycopg.errors.InsufficientPrivilege), as_the_service(database_url, "u1") as conn:
        conn.execute(
            """INSERT INTO gb_ontologies (user_id, name, format, document, sha256, parsed, out_of_ontology)
               VALUES ('u2', 'x', 'json', '{}', 'x', '{}', 'map')"""
        )


def test_a_dataset_can_never_point_at_another_users_ontology(db, database_url):
    dataset = add_dataset(db, "u1", "main")
    theirs = add_ontology(db, "u2")

    with pytest.raises(psycopg.errors.ForeignKeyViolation), as_the_service(database_url, "u1") as conn:
        conn.execute("UPDATE gb_datasets SET ontology_id = %s WHERE id = %s", [theirs, dataset])
    with pytest.raises(psycopg.errors.ForeignKeyViolation):  # not even as the tables' owner
        db.execute("UPDATE gb_datasets SET ontology_id = %s WHERE id = %s", [theirs, dataset])


def test_an_attached_ontology_cannot_be_deleted_by_any_statement(db, database_url):
    dataset = add_dataset(db, "u1", "main")
    mine = add_ontology(db, "u1")
    db.execute("UPDATE gb_datasets SET ontology_id = %s WHERE id = %s", [mine, dataset])

    # PostgreSQL 16 names the violation ForeignKeyViolation, 18 RestrictViolation (ON DELETE RESTRICT)
    refused = (psycopg.errors.ForeignKeyViolation, psycopg.errors.RestrictViolation)
    with pytest.raises(refused), as_the_service(database_url, "u1") as conn:
        conn.execute("DELETE FROM gb_ontologies WHERE id = %s", [mine])
    db.execute("DELETE FROM gb_datasets WHERE id = %s", [dataset])  # deleting the dataset detaches
    db.execute("DELETE FROM gb_ontologies WHERE id = %s", [mine])
