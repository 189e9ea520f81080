"""The datasets list's counts (db/datasets.py) are exact, and read indexes rather than one row per
artifact or fact: a client polls the list for a batch's progress (migration 0025)."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from psycopg.rows import dict_row
from query_helpers import Graph
from sql_counting import table_rows_read

from gligabao.db.datasets import list_with_counts
from gligabao.memory.datasets import DatasetSummary


def counts_and_rows_read(database_url: str) -> tuple[list[DatasetSummary], int]:
    """u1's datasets list, and how many rows of gb_artifacts and gb_edges its statement read from
    the tables themselves (index entries not counted)."""
    with psycopg.connect(database_url, row_factory=dict_row) as conn, conn.transaction():
        conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        rows = list_with_counts(conn, "u1", DatasetSummary)
        return rows, table_rows_read(conn, "gb_artifacts", "gb_edges")


def test_the_counts_are_exact_and_read_the_indexes_not_each_artifact_and_fact(db, database_url):
    graph = Graph(db)
    people = [graph.entity(f"Person {i}", embedding=None) for i in range(40)]
    for i in range(400):  # rows as wide as the service's (a vector each)
        graph.edge(people[i % 40], people[(i + 1) % 40], "knows")
    graph.edge(people[0], people[2], "knows", expired_at=datetime.now(UTC))  # superseded
    document = graph.text("a long text")
    for i in range(3):
        graph.chunk(document, i, f"part {i}", embedding=None, summary_embedding=None)
    db.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text)
           SELECT %s, 'text', 'message ' || n FROM generate_series(1, 2000) AS n""",
        [graph.dataset_id],
    )
    db.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text, status, gives_up_at)
           VALUES (%(ds)s, 'text', 'queued', 'pending', NULL),
                  (%(ds)s, 'text', 'running', 'running', now() + interval '1 hour'),
                  (%(ds)s, 'text', 'killed', 'running', now() - interval '1 hour'),
                  (%(ds)s, 'text', 'failed', 'failed', NULL)""",
        {"ds": graph.dataset_id},
    )
    Graph(db, "u1", "other").text("another dataset's text")
    db.execute("VACUUM ANALYZE gb_artifacts")  # index-only scans read the visibility map
    db.execute("VACUUM ANALYZE gb_edges")

    rows, read = counts_and_rows_read(database_url)

    main = next(row for row in rows if row.name == "main")
    assert (main.artifacts, main.queued, main.failed, main.entities, main.edges) == (2005, 2, 2, 40, 400)
    assert next(row for row in rows if row.name == "other").artifacts == 1
    assert read < 50, read  # 4,820 without migration 0025's indexes, 4,018 with the statement before it


def test_the_counting_function_counts_only_the_transaction_users_datasets(db, database_url):
    """gb_dataset_sizes counts with the owner's rights (migration 0048): given another user's
    dataset ids, or run without a user, it returns nothing of them."""
    mine = Graph(db, "u1", "main")
    mine.text("u1's text")
    theirs = Graph(db, "u2", "main")
    theirs.entity("Someone", embedding=None)
    theirs.text("u2's text")
    ids = [mine.dataset_id, theirs.dataset_id]

    def sizes(user_id: str | None) -> list[dict]:
        with psycopg.connect(database_url, row_factory=dict_row) as conn, conn.transaction():
            if user_id is not None:
                conn.execute("SELECT set_config('gligabao.user_id', %s, true)", [user_id])
            return conn.execute("SELECT * FROM gb_dataset_sizes(%s) ORDER BY dataset_id", [ids]).fetchall()

    assert sizes("u1") == [{"dataset_id": mine.dataset_id, "artifacts": 1, "entities": 0, "edges": 0}]
    assert sizes("u2") == [{"dataset_id": theirs.dataset_id, "artifacts": 1, "entities": 1, "edges": 0}]
    assert sizes(None) == []
