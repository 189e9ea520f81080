"""Queries of gb_ontologies and of the datasets they are attached to (gb_datasets.ontology_id).
Every query names the user; row-level security holds them to the transaction's user as well."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

_FIELDS = """o.name, o.description, o.format, o.document, o.sha256, o.parsed, o.out_of_ontology,
    o.created_at, o.updated_at"""
_COLUMNS = f"""{_FIELDS},
    ARRAY(SELECT d.name FROM gb_datasets d WHERE d.ontology_id = o.id ORDER BY d.name) AS datasets"""


def insert(conn: psycopg.Connection, user_id: str, row: dict[str, Any]) -> dict | None:
    """The new ontology's row; None when the user has one of that name already."""
    return conn.execute(
        f"""
        WITH o AS (
            INSERT INTO gb_ontologies (user_id, name, description, format, document, sha256, parsed,
                                       out_of_ontology)
            VALUES (%(user)s, %(name)s, %(description)s, %(format)s, %(document)s, %(sha256)s,
                    %(parsed)s, %(out_of_ontology)s)
            ON CONFLICT (user_id, name) DO NOTHING
            RETURNING *
        )
        SELECT {_FIELDS}, ARRAY[]::text[] AS datasets FROM o
        """,
        {"user": user_id, **row, "parsed": Jsonb(row["parsed"])},
    ).fetchone()


def replace(conn: psycopg.Connection, user_id: str, row: dict[str, Any]) -> dict | None:
    """The ontology's row after its document is replaced; None when the user has none of that name."""
    return conn.execute(
        f"""
        UPDATE gb_ontologies o
        SET description = %(description)s, format = %(format)s, document = %(document)s,
            sha256 = %(sha256)s, parsed = %(parsed)s, out_of_ontology = %(out_of_ontology)s,
            updated_at = now()
        WHERE o.user_id = %(user)s AND o.name = %(name)s
        RETURNING {_COLUMNS}
        """,
        {"user": user_id, **row, "parsed": Jsonb(row["parsed"])},
    ).fetchone()


def find(conn: psycopg.Connection, user_id: str, name: str) -> dict | None:
    return conn.execute(
        f"SELECT {_COLUMNS} FROM gb_ontologies o WHERE o.user_id = %s AND o.name = %s", [user_id, name]
    ).fetchone()


def list_all(conn: psycopg.Connection, user_id: str) -> list[dict]:
    return conn.execute(
        f"SELECT {_COLUMNS} FROM gb_ontologies o WHERE o.user_id = %s ORDER BY o.name", [user_id]
    ).fetchall()


def delete_unattached(conn: psycopg.Connection, user_id: str, name: str) -> tuple[bool, list[str]]:
    """(whether the user has it, the datasets it is attached to). Deleted only when attached to none;
    the row is locked first, so an attachment made meanwhile waits and then finds it gone."""
    row = conn.execute(
        """
        SELECT o.id, ARRAY(SELECT d.name FROM gb_datasets d WHERE d.ontology_id = o.id ORDER BY d.name)
               AS datasets
        FROM gb_ontologies o WHERE o.user_id = %s AND o.name = %s FOR UPDATE
        """,
        [user_id, name],
    ).fetchone()
    if row is None:
        return False, []
    if row["datasets"]:
        return True, row["datasets"]
    conn.execute("DELETE FROM gb_ontologies WHERE id = %s", [row["id"]])
    return True, []


def attach(conn: psycopg.Connection, user_id: str, dataset: str, ontology: str) -> bool:
    """Attach the user's ontology to the user's dataset, created when missing (as remember creates
    it on first use); False when the user has no such ontology (nothing is created then)."""
    row = conn.execute(
        """
        WITH o AS (SELECT id FROM gb_ontologies WHERE user_id = %(user)s AND name = %(ontology)s FOR SHARE)
        INSERT INTO gb_datasets (user_id, name, ontology_id)
        SELECT %(user)s, %(dataset)s, o.id FROM o
        ON CONFLICT (user_id, name) DO UPDATE SET ontology_id = EXCLUDED.ontology_id
        RETURNING id
        """,
        {"user": user_id, "dataset": dataset, "ontology": ontology},
    ).fetchone()
    return row is not None


def detach(conn: psycopg.Connection, user_id: str, dataset: str) -> bool:
    """Detach the dataset's ontology, if any; False when the user has no such dataset."""
    row = conn.execute(
        "UPDATE gb_datasets SET ontology_id = NULL WHERE user_id = %s AND name = %s RETURNING id",
        [user_id, dataset],
    ).fetchone()
    return row is not None


def of_dataset(conn: psycopg.Connection, user_id: str, dataset: str) -> dict | None:
    """The ontology attached to the user's dataset (name, parsed form, setting); None without one."""
    return of_dataset_unread(conn, user_id, dataset).fetchone()


def of_dataset_unread(conn: psycopg.Connection, user_id: str, dataset: str) -> psycopg.Cursor:
    """`of_dataset`'s statement, its row not read yet: in a pipelined transaction, read after the
    block, it shares the round trip of BEGIN and COMMIT."""
    return conn.execute(
        """
        SELECT o.name, o.parsed, o.out_of_ontology
        FROM gb_datasets d JOIN gb_ontologies o ON o.id = d.ontology_id AND o.user_id = d.user_id
        WHERE d.user_id = %s AND d.name = %s
        """,
        [user_id, dataset],
    )


def dataset_exists(conn: psycopg.Connection, user_id: str, dataset: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM gb_datasets WHERE user_id = %s AND name = %s", [user_id, dataset]
        ).fetchone()
        is not None
    )
