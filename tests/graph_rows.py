"""Arranging graph rows directly in the database, for tests of the read and delete paths."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg
from conftest import count_rows

from gligabao.settings import Settings

# The tables remember writes its graph to (every table but gb_inferences and gb_trajectories).
GRAPH_TABLES = (
    "gb_datasets",
    "gb_artifacts",
    "gb_entities",
    "gb_edges",
    "gb_entity_artifacts",
    "gb_edge_artifacts",
    "gb_entity_sessions",
    "gb_edge_sessions",
)


def graph_counts(db) -> dict[str, int]:
    return {table: count_rows(db, table) for table in GRAPH_TABLES}


def nothing_stored(db) -> bool:
    return all(count == 0 for count in graph_counts(db).values())


def alice_works_at_acme(db, user_id="u1", name="main"):
    """A dataset of the datasets tests: Alice works at Acme (and an expired worked_at), a text
    with one chunk, Alice linked to a session and to the text; returns the dataset's id."""
    dataset = add_dataset(db, user_id, name)
    artifact = add_artifact(db, dataset, embedding=[1.0] * 1536)
    add_artifact(db, dataset, "a chunk", kind="chunk", parent_id=artifact, chunk_index=0)
    alice = add_entity(db, dataset, "Alice", embedding=[0.5] * 1536)
    acme = add_entity(db, dataset, "Acme", "organization")
    add_edge(db, dataset, alice, acme, "works_at", artifact_id=artifact)
    add_edge(db, dataset, alice, acme, "worked_at", expired=True)
    db.execute("INSERT INTO gb_entity_sessions VALUES (%s, 'a')", [alice])
    db.execute("INSERT INTO gb_entity_artifacts VALUES (%s, %s)", [alice, artifact])
    return dataset


def add_dataset(conn: psycopg.Connection, user_id: str, name: str = "main") -> int:
    return conn.execute(
        "INSERT INTO gb_datasets (user_id, name) VALUES (%s, %s) RETURNING id", [user_id, name]
    ).fetchone()[0]


def add_artifact(
    conn: psycopg.Connection,
    dataset_id: int,
    text: str = "Alice works at Acme.",
    *,
    kind: str = "text",
    parent_id: int | None = None,
    chunk_index: int | None = None,
    session_id: str | None = None,
    embedding=None,
) -> int:
    return conn.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text, parent_id, chunk_index, session_id, embedding)
           VALUES (%s, %s, %s, %s, %s, %s, %s::vector) RETURNING id""",
        [dataset_id, kind, text, parent_id, chunk_index, session_id, _vector(embedding)],
    ).fetchone()[0]


def add_entity(
    conn: psycopg.Connection, dataset_id: int, name: str, type_: str = "person", *, embedding=None
) -> int:
    return conn.execute(
        """INSERT INTO gb_entities (dataset_id, name, normalized_name, type, embedding)
           VALUES (%s, %s, %s, %s, %s::vector) RETURNING id""",
        [dataset_id, name, name.lower(), type_, _vector(embedding)],
    ).fetchone()[0]


def add_edge(
    conn: psycopg.Connection,
    dataset_id: int,
    source_id: int,
    target_id: int,
    relation: str,
    *,
    artifact_id: int | None = None,
    expired: bool = False,
    embedding=None,
) -> int:
    return conn.execute(
        """INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, artifact_id, expired_at, embedding)
           VALUES (%s, %s, %s, %s, %s, CASE WHEN %s THEN now() END, %s::vector) RETURNING id""",
        [dataset_id, source_id, target_id, relation, artifact_id, expired, _vector(embedding)],
    ).fetchone()[0]


def _vector(values) -> str | None:
    return None if values is None else "[" + ",".join(str(float(v)) for v in values) + "]"


@contextlib.contextmanager
def full_precision_index(db, table: str, column: str) -> Iterator[str]:
    """Inside, `table`'s vector index of `column` is the full-precision one of before migration
    0019 (as on a table that migration left to be rebuilt by hand); yields its name. The database
    outlives the test: the half-precision index is back afterwards."""
    name = f"{table}_{column}"
    db.execute(f"DROP INDEX {name}_half")
    db.execute(
        f"CREATE INDEX {name} ON {table} USING hnsw ({column} vector_cosine_ops) WITH (m = 16, ef_construction = 128)"
    )
    try:
        yield name
    finally:
        db.execute(f"DROP INDEX IF EXISTS {name}")
        db.execute(
            f"CREATE INDEX IF NOT EXISTS {name}_half ON {table} USING hnsw "
            f"((l2_normalize({column})::halfvec({Settings().embedding_dimensions})) halfvec_cosine_ops) WITH (m = 16, ef_construction = 128)"
        )


def fill_every_table(conn: psycopg.Connection, rows: int = 60) -> None:
    """`rows` rows in every gb_ table (and their links), vectors included: a load whose statistics
    ANALYZE computes, the index expressions' too. As the tables' owner (no policy applies)."""
    dimensions = Settings().embedding_dimensions
    values = {"rows": rows, "dimensions": dimensions}
    # A vector of its own for each row (sin of the row's number times the dimension's).
    vector = "(SELECT array_agg(sin(i * d)::real) FROM generate_series(1, %(dimensions)s) AS d)::vector"
    dataset = add_dataset(conn, "u1", "load")
    values["dataset"] = dataset
    conn.execute(
        f"""INSERT INTO gb_artifacts (dataset_id, kind, text, session_id, embedding, summary_embedding)
            SELECT %(dataset)s, 'text', 'Alice met Acme, day ' || i, 'a', {vector}, {vector}
            FROM generate_series(1, %(rows)s) AS i""",
        values,
    )
    conn.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text, parent_id, chunk_index)
           SELECT dataset_id, 'chunk', text, id, 0 FROM gb_artifacts WHERE dataset_id = %(dataset)s""",
        values,
    )
    conn.execute(
        f"""INSERT INTO gb_entities (dataset_id, name, normalized_name, type, description, embedding)
            SELECT %(dataset)s, 'Acme Robotics ' || i, 'acme robotics ' || i, 'organization',
                   'a robotics company, number ' || i, {vector}
            FROM generate_series(1, %(rows)s) AS i""",
        values,
    )
    conn.execute(
        f"""INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, artifact_id, embedding)
            SELECT %(dataset)s, e.id, e.id, 'works_with', 'Acme works with itself, day ' || i, a.id, {vector}
            FROM generate_series(1, %(rows)s) AS i
            JOIN gb_entities e ON e.normalized_name = 'acme robotics ' || i AND e.dataset_id = %(dataset)s
            JOIN gb_artifacts a ON a.text = 'Alice met Acme, day ' || i AND a.kind = 'text'
                               AND a.dataset_id = %(dataset)s""",
        values,
    )
    for statement in (
        """INSERT INTO gb_entity_artifacts SELECT g.source_id, g.artifact_id FROM gb_edges g
           WHERE g.dataset_id = %(dataset)s""",
        "INSERT INTO gb_edge_artifacts SELECT id, artifact_id FROM gb_edges WHERE dataset_id = %(dataset)s",
        "INSERT INTO gb_entity_sessions SELECT id, 'a' FROM gb_entities WHERE dataset_id = %(dataset)s",
        "INSERT INTO gb_edge_sessions SELECT id, 'a' FROM gb_edges WHERE dataset_id = %(dataset)s",
        """INSERT INTO gb_edge_statements (dataset_id, edge_id, artifact_id, valid_at, said_at, cut, cut_by)
           SELECT dataset_id, id, artifact_id, created_at, created_at, true, id FROM gb_edges
           WHERE dataset_id = %(dataset)s""",
        """INSERT INTO gb_edge_conflicts (dataset_id, edge_id, other_edge_id, contradicts, said_at)
           SELECT g.dataset_id, g.id, o.id, true, g.created_at FROM gb_edges g
           JOIN gb_edges o ON o.dataset_id = g.dataset_id AND o.id = g.id + 1
           WHERE g.dataset_id = %(dataset)s""",
        """INSERT INTO gb_prepared_texts (artifact_id, dataset_id, options, extraction, embedded)
           SELECT id, dataset_id, '{}', '{}', '{}' FROM gb_artifacts
           WHERE dataset_id = %(dataset)s AND kind = 'text'""",
        """WITH images AS (
               INSERT INTO gb_artifacts (dataset_id, kind) SELECT %(dataset)s, 'image'
               FROM generate_series(1, %(rows)s) RETURNING id)
           INSERT INTO gb_image_artifacts (dataset_id, artifact_id, sha256, media_type, bytes, extraction)
           SELECT %(dataset)s, id, md5(id::text), 'image/png', 100, '{}' FROM images""",
        """INSERT INTO gb_inferences (user_id, dataset_id, type, stage, model, duration_ms, ok)
           SELECT 'u1', %(dataset)s, 'remember', 'extract', 'claude', i, true FROM generate_series(1, %(rows)s) AS i""",
        """INSERT INTO gb_trajectories (dataset_id, session_id, kind, trajectory)
           SELECT %(dataset)s, 'a', 'remember', '{}' FROM generate_series(1, %(rows)s)""",
        """INSERT INTO gb_idempotency_records (user_id, key, status, payload_hash, expires_at)
           SELECT 'u1', 'key ' || i, 'COMPLETED', 'hash', now() + interval '1 hour'
           FROM generate_series(1, %(rows)s) AS i""",
        """INSERT INTO gb_ontologies (user_id, name, format, document, sha256, parsed, out_of_ontology)
           SELECT 'u1', 'ontology-' || i, 'json', '{}', md5(i::text), '{}', 'map'
           FROM generate_series(1, %(rows)s) AS i""",
        """INSERT INTO gb_series (dataset_id, key, unit)
           SELECT %(dataset)s, 'ACME' || i || '.close', 'USD' FROM generate_series(1, %(rows)s) AS i""",
        """INSERT INTO gb_series_points (series_id, dataset_id, at, value)
           SELECT s.id, s.dataset_id, timestamptz '2025-01-01' + d * interval '1 day', d
           FROM gb_series s, generate_series(1, 3) AS d WHERE s.dataset_id = %(dataset)s""",
        """INSERT INTO gb_series_anchors (series_id, dataset_id, entity_id)
           SELECT s.id, s.dataset_id, e.id FROM gb_series s
           JOIN gb_entities e ON e.dataset_id = s.dataset_id AND e.normalized_name = 'acme robotics '
                || substring(s.key FROM '^ACME([0-9]+)')
           WHERE s.dataset_id = %(dataset)s""",
        # the schema's one row of bookkeeping (no user's): the embedder of the vectors above
        """INSERT INTO gb_embedding_space (embedder) VALUES ('openai:text-embedding-3-small')
           ON CONFLICT (only_row) DO NOTHING""",
    ):
        conn.execute(statement, values)
